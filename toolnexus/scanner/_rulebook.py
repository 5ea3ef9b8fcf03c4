"""The scanner's rules, read from the data files in `scanner/rules/`.

Each `rules/<name>.toml` holds `[pieces]` (named pieces of a pattern) and
`[[rule]]` tables::

    [[rule]]
    id = "override"                      # what a home switches off by name
    category = "instruction-override"    # one of CATEGORIES
    why = "tells the model to drop its instructions"
    reads = ["skeleton", "uncommented", "leet"]   # the forms read (this is the default)
    needs = ["ignore", "forget"]         # one of these is in every match (lowercase)
    unless = ["game"]                    # not tried on a text holding one (a harmless frame)
    pattern = ['{drop-verb}\\s(?:\\w+\\s){0,3}?{instructions}']   # alternatives
    matches = ["Ignore all previous instructions."]   # must be found by this rule
    passes = ["User prefers to ignore lint warnings."]  # near misses it must pass

`{name}` in a pattern or a piece stands for the piece of that name: the rule's
own `[rule.pieces]` first, then the file's `[pieces]`, then `pieces.toml`
(`\\{` is a brace). A long alternative may span lines: each line's surrounding
blanks are dropped, so write a space as `\\s`. A space in a need also stands
for a line break (the skeleton keeps one where the text had one). Rules are
tried in the order of `FILES`, and in file order within one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from ._rule import CATEGORIES, FORMS, Rule

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the same parser, before it joined the standard library
    import tomli as tomllib

__all__ = [
    "FILES",
    "FOLDER",
    "Rulebook",
    "needed_words",
    "off_error",
    "rulebook",
    "unknown_off",
]

#: Where the data files are.
FOLDER = Path(__file__).parent / "rules"
#: The rule files, in the order their rules are tried (`pieces.toml` holds only pieces).
FILES = (
    "override",
    "languages",
    "role",
    "leak",
    "exfiltration",
    "shell",
    "tampering",
    "techniques",
    "secrets",
    "spelled",
)
_SHARED = "pieces"
_RULE_KEYS = frozenset(
    {
        "id",
        "category",
        "why",
        "pattern",
        "needs",
        "unless",
        "reads",
        "secret",
        "matches",
        "passes",
        "pieces",
    }
)
_REQUIRED = ("id", "category", "why", "pattern")
_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
_REF = re.compile(r"(?<!\\)\{([a-z][a-z0-9-]*)\}")
_DEFAULT_READS = ("skeleton", "uncommented", "leet")


@dataclass(frozen=True)
class Rulebook:
    """Every rule in the order tried, and the shared pieces with their references filled in."""

    rules: tuple[Rule, ...]
    pieces: Mapping[str, str]

    @property
    def ids(self) -> frozenset[str]:
        """The id of every rule."""
        return frozenset(rule.id for rule in self.rules)

    @cached_property
    def words(self) -> tuple[str, ...]:
        """Every word any rule needs: the engine looks each up once per form of a text."""
        return needed_words(self.rules)


def needed_words(rules: Iterable[Rule]) -> tuple[str, ...]:
    """Every word any of `rules` needs, each once."""
    return tuple(sorted({word for rule in rules for word in rule.needs}))


class _Bad(ValueError):
    """A data file that cannot be read as rules (a bug in the package, named exactly)."""


def _strings(where: str, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(f"{where}: {key} must be a list of strings")
    return tuple(value)


def _joined(text: str) -> str:
    """A pattern written over several lines, as one line (each line's blanks dropped)."""
    if "\n" not in text:
        return text
    return "".join(line.strip() for line in text.splitlines())


def _expand(where: str, text: str, scopes: tuple[Mapping[str, str], ...]) -> str:
    """`text` with every `{piece}` filled in, looked up in `scopes` (nearest first)."""

    def fill(match: re.Match[str], seen: tuple[str, ...]) -> str:
        name = match.group(1)
        if name in seen:
            raise _Bad(f"{where}: piece {{{name}}} refers to itself ({' > '.join(seen)})")
        for scope in scopes:
            if name in scope:
                inner = _joined(scope[name])
                return _REF.sub(lambda m: fill(m, (*seen, name)), inner)
        raise _Bad(f"{where}: unknown piece {{{name}}}")

    return _REF.sub(lambda m: fill(m, ()), _joined(text))


def _pieces(where: str, table: object) -> dict[str, str]:
    if table is None:
        return {}
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise _Bad(f"{where}: [pieces] must map names to strings")
    for name in table:
        if not _REF.fullmatch("{" + name + "}"):
            raise _Bad(f"{where}: piece name {name!r} is not lowercase words joined by '-'")
    return dict(table)


def _needs(words: tuple[str, ...]) -> tuple[str, ...]:
    spaced = (w.replace(" ", "\n") for w in words if " " in w)
    return tuple(dict.fromkeys((*words, *spaced)))


def _rule(name: str, raw: object, scopes: tuple[Mapping[str, str], ...]) -> Rule:
    if not isinstance(raw, dict):
        raise _Bad(f"rules/{name}.toml: every [[rule]] must be a table")
    where = f"rules/{name}.toml: rule {raw.get('id', '?')!r}"
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise _Bad(
            f"{where}: unknown key {', '.join(unknown)} (known: {', '.join(sorted(_RULE_KEYS))})"
        )
    missing = [key for key in _REQUIRED if key not in raw]
    if missing:
        raise _Bad(f"{where}: missing {', '.join(missing)}")
    rule_id, category, why = raw["id"], raw["category"], raw["why"]
    if not isinstance(rule_id, str) or not _ID.fullmatch(rule_id) or rule_id in CATEGORIES:
        raise _Bad(f"{where}: an id is lowercase words joined by '-', and not a category")
    if category not in CATEGORIES:
        raise _Bad(f"{where}: unknown category {category!r}")
    if not isinstance(why, str) or not why:
        raise _Bad(f"{where}: why must be a sentence")
    reads = _strings(where, "reads", raw.get("reads", list(_DEFAULT_READS)))
    if not reads or not set(reads) <= set(FORMS):
        raise _Bad(f"{where}: reads must name forms of {', '.join(FORMS)}")
    pattern = _strings(where, "pattern", raw["pattern"])
    if not pattern:
        raise _Bad(f"{where}: pattern needs at least one alternative")
    scopes = (_pieces(where, raw.get("pieces")), *scopes)
    secret = raw.get("secret", False)
    if not isinstance(secret, bool):
        raise _Bad(f"{where}: secret is true or false")
    return Rule(
        id=rule_id,
        category=category,
        why=why,
        source="|".join(_expand(where, alternative, scopes) for alternative in pattern),
        needs=_needs(_strings(where, "needs", raw.get("needs", []))),
        unless=tuple(w.lower() for w in _strings(where, "unless", raw.get("unless", []))),
        reads=reads,
        secret=secret,
        matches=_strings(where, "matches", raw.get("matches", [])),
        passes=_strings(where, "passes", raw.get("passes", [])),
    )


def _read(folder: Path, name: str) -> dict[str, Any]:
    with (folder / f"{name}.toml").open("rb") as file:
        data: dict[str, Any] = tomllib.load(file)
    unknown = sorted(set(data) - {"pieces", "rule"})
    if unknown:
        raise _Bad(f"rules/{name}.toml: unknown table {', '.join(unknown)}")
    return data


def load(folder: Path = FOLDER, files: tuple[str, ...] = FILES) -> Rulebook:
    """Read the rule `files` in `folder` (use `rulebook()`, which reads the package's once
    per process).

    Raises:
        ValueError: naming the file, the rule and what is wrong with it.
    """
    shared = _pieces(f"rules/{_SHARED}.toml", _read(folder, _SHARED).get("pieces"))
    rules: list[Rule] = []
    for name in files:
        data = _read(folder, name)
        local = _pieces(f"rules/{name}.toml", data.get("pieces"))
        rules.extend(_rule(name, raw, (local, shared)) for raw in data.get("rule", []))
    seen: set[str] = set()
    for rule in rules:
        if rule.id in seen:
            raise _Bad(f"rules: two rules have the id {rule.id!r}")
        seen.add(rule.id)
    filled = {
        name: _expand(f"rules/{_SHARED}.toml", "{" + name + "}", (shared,)) for name in shared
    }
    return Rulebook(tuple(rules), filled)


@cache
def rulebook() -> Rulebook:
    """The rules, read once per process (on the first scan, not at import)."""
    return load()


def unknown_off(names: Iterable[str]) -> list[str]:
    """The names in `names` that are neither a category nor a rule id, in order (the rules
    are read only when a name is not a category)."""
    rest = [name for name in names if name not in CATEGORIES]
    if not rest:
        return []
    ids = rulebook().ids
    return [name for name in rest if name not in ids]


def off_error(unknown: list[str]) -> str:
    """What is wrong with a `scanner: {off: [...]}` that names `unknown`, with the nearest
    known name when one is close."""
    first = unknown[0]
    close = get_close_matches(first, [*CATEGORIES, *sorted(rulebook().ids)], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return (
        f"unknown scanner category or rule {first!r}{hint} (categories: {', '.join(CATEGORIES)};"
        " the rules are listed on the Scanner rules page)"
    )
