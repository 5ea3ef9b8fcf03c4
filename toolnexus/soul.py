"""The soul: a frozen, deterministic system-prompt snapshot composed from a home.

The same files always give byte-identical text (sorted skills, normalised
newlines, no timestamps), and sections run from most stable to most volatile,
so a memory write changes only the tail and provider prompt caches stay warm.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, computed_field, model_validator

from .errors import HomeError
from .home._door import MEMORY_FILES, MEMORY_ORDER, SKILL_FILE, SKILLS_DIR
from .home._identity import IdentityConfig
from .home._load import Loaded, Source, load_home
from .home._template import fence, render
from .memory._document import normalize_text
from .memory._withhold import Skipped
from .scanner._scanner import Classifier, Scanner

__all__ = [
    "MEMORY_WARN_RATIO",
    "SOUL_BUDGET_CHARS",
    "SkillSummary",
    "Soul",
    "Withheld",
    "compose_soul",
    "withheld_warning",
]

#: A soul longer than this (about 10k tokens) crowds the context window: a warning.
SOUL_BUDGET_CHARS = 40_000
#: A memory file (or the soul) at this share of its limit draws a warning.
MEMORY_WARN_RATIO = 0.9


class SkillSummary(BaseModel):
    """What the soul lists about a skill; the `skill` tool loads the rest on demand."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    #: The SKILL.md, relative to the home (POSIX separators).
    path: str


class Withheld(BaseModel):
    """A memory unit kept out of the soul because it failed the safety check (still on disk).

    A unit is an entry, a heading line or a prose paragraph: the smallest that
    carries the unsafe text (two neighbouring prose units when only together
    they are flagged).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    kind: Literal["entry", "prose"]
    text: str
    reasons: tuple[str, ...]
    #: The 1-based line of `file` the unit starts on.
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.kind} {self.text!r}: {'; '.join(self.reasons)}"


class Soul(BaseModel):
    """An immutable snapshot of a home: the parsed parts, the system-prompt `text`, its sources.

    Build one with `compose_soul(dir)` or `Home(dir).compose()`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    home: Path
    config: IdentityConfig
    #: The prose of IDENTITY.md.
    identity: str
    skills: tuple[SkillSummary, ...]
    #: Entries of USER.md / MEMORY.md shown in `text` (withheld ones are in `withheld`).
    user_entries: tuple[str, ...]
    memory_entries: tuple[str, ...]
    text: str
    #: "sha256:<hex>" of `text`: equal digests mean byte-identical prompts.
    digest: str
    #: What the text was built from, for `is_stale`.
    sources: tuple[Source, ...]
    warnings: tuple[str, ...]
    withheld: tuple[Withheld, ...]

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        # `name` is derived from config and dumped for readers; a dumped soul loads back.
        if isinstance(data, dict) and "name" in data:
            data = {k: v for k, v in data.items() if k != "name"}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def name(self) -> str:
        """The persona's name (from IDENTITY.md)."""
        return self.config.name

    def is_stale(self) -> bool:
        """Tell whether the home on disk differs from this snapshot (the snapshot never changes).

        Creating or deleting MEMORY.md, USER.md, soul.md.j2 or a skill counts too.
        """
        try:
            now = load_home(self.home).hashes
        except HomeError:
            return True
        return now != tuple((s.path, s.sha256) for s in self.sources)


def compose_soul(
    dir: str | os.PathLike[str], *, strict: bool = True, scanner: Scanner | Classifier | None = None
) -> Soul:
    """Compose the soul of the home at `dir` (the same as `Home(dir).compose()`).

    Args:
        dir: the home directory.
        strict: True (default) raises on any problem. False composes whatever is
            sound: a bad skill is skipped, a memory file the door refuses (a link
            out of the home, a FIFO, over its cap, not UTF-8) is left out, a broken
            `soul.md.j2` gives way to the default layout; each is a warning on the
            soul. Only a bad IDENTITY.md still raises: there is no persona without it.
        scanner: a classifier of your own (or a `Scanner`), run on memory after the built-in
            scanner (`toolnexus.scanner`); what it flags is withheld too.

    Raises:
        HomeError: listing every problem found (each names the file, line or key, and rule).
    """
    loaded = load_home(Path(os.path.abspath(dir)), scanner)
    # Tolerant, only IDENTITY.md is essential: the rest is withheld with a warning.
    problems = loaded.problems + loaded.scan.problems if strict else loaded.identity_problems
    if problems:
        raise HomeError.of(problems)
    # A soul is a pure function of its sources' content (and `strict`): while every
    # hash is unchanged, the last one is the answer, and rendering is skipped.
    key = (loaded.home, strict, loaded.scanner)
    state = (loaded.hashes, loaded.part_problems)
    last = _LAST.get(key)
    if last is not None and last[0] == state:
        return last[1]
    soul = _build(loaded, strict=strict)
    if len(_LAST) >= _LAST_MAX:
        _LAST.clear()
    _LAST[key] = (state, soul)
    return soul


#: The last soul per (home, strict) with the source hashes (and refusals) it was built from.
_LAST: dict[tuple[Path, bool, Scanner], tuple[Any, Soul]] = {}
_LAST_MAX = 256
_INSTEAD = " (the default layout is used instead)"


def _build(loaded: Loaded, *, strict: bool) -> Soul:
    """Make the soul of a loaded home with no problems (pure: no file is read here)."""
    # 1. Collect the parts, holding back memory blocks that fail the safety check.
    assert loaded.identity is not None
    home = loaded.home
    config = loaded.identity.config
    warnings = list(loaded.scan.warnings)
    if not strict:
        warnings += [f"skipped: {p}" for p in loaded.scan.problems]
        warnings += [
            f"withheld from the soul{_INSTEAD if part == 'template' else ''}: {p}"
            for part, p in loaded.part_problems
        ]
    withheld: list[Withheld] = []
    shown: dict[str, str] = {}
    entries: dict[str, tuple[str, ...]] = {}
    for target in MEMORY_ORDER:
        mem = loaded.memory[target]
        file = MEMORY_FILES[target]
        view = mem.view
        shown[target] = view.text
        entries[target] = view.entries
        held = [
            Withheld(file=file, kind=u.kind, text=u.text, reasons=u.reasons, line=u.line)
            for u in view.withheld
        ]
        withheld += held
        # One line per finding, in file order: each withheld unit, each entry that is no note.
        found = [(w.line, withheld_warning(w)) for w in held]
        found += [(s.line, _skipped_warning(file, s)) for s in view.skipped]
        warnings += [line for _, line in sorted(found)]
        if mem.trust_problem is not None:
            warnings.append(f"{mem.trust_problem}: so no entry of {file} is trusted")
        limit = config.memory_limits.for_target(target)
        chars = mem.doc.chars
        if chars >= MEMORY_WARN_RATIO * limit:
            warnings.append(
                f"{home / file}: {chars} of {limit} characters "
                f"({100 * chars // limit}%): consolidate entries before it fills up"
            )
    skills = tuple(
        SkillSummary(
            name=s.name,
            description=s.description,
            # A valid skill's folder is named after it (a rule), so no Path arithmetic.
            path=f"{SKILLS_DIR}/{s.name}/{SKILL_FILE}",
        )
        for s in loaded.scan.skills
    )
    # 2. Render: every value goes in as data, never as template source.
    context: dict[str, Any] = {
        "name": config.name,
        "description": config.description,
        "identity": loaded.identity.body,
        "config": config,
        "skills": skills,
        "user": shown["user"],
        "memory": shown["self"],
        "user_fence": fence(shown["user"]),
        "memory_fence": fence(shown["self"]),
        "user_entries": entries["user"],
        "memory_entries": entries["self"],
    }
    text = _normalize(render(loaded.template, context, where=loaded.template_name))
    if len(text) >= MEMORY_WARN_RATIO * SOUL_BUDGET_CHARS:
        warnings.append(
            f"{home}: the soul is {len(text)} characters, budget {SOUL_BUDGET_CHARS}: "
            "shorten the identity, skill descriptions or memory"
        )
    digest = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Soul(
        home=home,
        config=config,
        identity=loaded.identity.body,
        skills=skills,
        user_entries=entries["user"],
        memory_entries=entries["self"],
        text=text,
        digest=digest,
        sources=tuple(Source(path=p, sha256=h) for p, h in loaded.hashes),
        warnings=tuple(warnings),
        withheld=tuple(withheld),
    )


def withheld_warning(item: Withheld) -> str:
    """The line `Soul.warnings` holds for a withheld unit (`check` reports it as a problem)."""
    return f"withheld from the soul: {item}"


def _skipped_warning(file: str, skipped: Skipped) -> str:
    where = f"{file}:{skipped.line}"
    if skipped.copy_of is None:
        return (
            f"{where}: an empty entry (`- ` with no text) is no entry: left out of the soul; "
            f"delete the line (the memory tool's next write of {file} drops it)"
        )
    return (
        f"{where}: an identical copy of the entry at line {skipped.copy_of}: one note, "
        "so this copy is left out of the soul; delete it"
    )


def _normalize(rendered: str) -> str:
    """LF newlines and exactly one final newline (whatever the template does): stable bytes."""
    return normalize_text(rendered).strip("\n") + "\n"
