"""Skills the persona writes, as pure functions: the change, its rules, the new file text.

A `SkillOp` is one call of the `skill_manage` tool (SPEC §15): `create` a skill
(`name`, `description`, `body`), `patch` one of its files (`text` → `with`,
the memory tool's exact-match rule: one place only), `write_file` beside its
SKILL.md, or `remove` it. What can be checked before any file is read is
checked here (`check_op`): the name and path rules, the size caps, and the
scanner on the new text; `new_skill_text` and `patched` build a file's next
text. No file is touched here: `_skill_store` reads, locks and writes.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

from ..errors import HomeError, MemoryEditError
from ..home._door import SKILL_FILE, SKILLS_DIR
from ..home._frontmatter import split_frontmatter
from ..home._skill import (
    DESCRIPTION_SOFT_LIMIT,
    SKILL_NAME_MAX,
    SKILL_NAME_RE,
    parse_skill,
)
from ..scanner._scanner import Scanner
from ._match import NOTHING, clip, quote

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_CHARS",
    "MAX_PATH_CHARS",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "SkillAction",
    "SkillOp",
    "check_op",
    "new_skill_text",
    "patched",
    "same_frontmatter",
    "valid_skill_text",
]

SkillAction = Literal["create", "patch", "write_file", "remove"]

#: The most characters of one file the persona writes (what the `skill` tool serves whole).
MAX_FILE_CHARS = 100_000
#: The most bytes one skill's folder holds after a write by the persona.
MAX_SKILL_BYTES = 1_000_000
#: The most files one skill's folder holds after a write by the persona, SKILL.md included.
MAX_SKILL_FILES = 50
#: The most folders a file written beside SKILL.md is nested in (`references/api/x.md`: 2).
MAX_DEPTH = 4
#: The longest `path` accepted.
MAX_PATH_CHARS = 200

#: Characters a file or folder name may not hold: control characters, and the separators
#: and reserved marks other systems refuse (a skill must load wherever it is copied).
_BAD_NAME = re.compile(r'[\x00-\x1f\x7f<>:"|?*\\]')
#: Names Windows reserves whatever their extension.
_RESERVED = re.compile(r"(?i)con|prn|aux|nul|com[1-9]|lpt[1-9]")


@dataclass(frozen=True, slots=True)
class SkillOp:
    """One skill change as the model asked for it (the fields its action takes, the rest None)."""

    action: SkillAction
    name: str
    description: str | None = None
    body: str | None = None
    text: str | None = None
    with_: str | None = None
    path: str | None = None
    content: str | None = None

    @property
    def file(self) -> str:
        """The file the change writes, relative to the skill's folder (`remove`: SKILL.md)."""
        if self.action == "write_file" or (self.action == "patch" and self.path):
            assert self.path is not None
            return "/".join(parts_of(self.path))
        return SKILL_FILE

    def to_dict(self) -> dict[str, Any]:
        """The change as JSON keeps it: its action, name and the fields it has."""
        data = {k: v for k, v in asdict(self).items() if v is not None}
        if "with_" in data:
            data["with"] = data.pop("with_")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SkillOp:
        """The change `to_dict` gave."""
        fields = dict(data)
        if "with" in fields:
            fields["with_"] = fields.pop("with")
        return cls(**fields)


def _invalid(message: str) -> MemoryEditError:
    return MemoryEditError(f"invalid arguments: {message}. {NOTHING}", kind="invalid")


def check_name(name: str) -> None:
    """Refuse a name the Agent Skills format refuses (it also names the skill's folder)."""
    if not name:
        raise _invalid("name: empty: give the skill's name (lowercase words joined by hyphens)")
    if len(name) > SKILL_NAME_MAX:
        raise _invalid(f"name: {len(name)} characters, the limit is {SKILL_NAME_MAX}")
    if not SKILL_NAME_RE.fullmatch(name):
        raise _invalid(
            f"name: {quote(name, 80)} breaks the Agent Skills naming rule: lowercase letters, "
            "digits and single hyphens, not starting or ending with a hyphen (deploy-checklist)"
        )


def parts_of(path: str) -> tuple[str, ...]:
    """The folders and file name of `path`, a file inside a skill's folder.

    Raises:
        MemoryEditError: (`invalid`) for a path that is empty, absolute, climbs out,
            names a hidden file or SKILL.md, is too long or too deep, or holds a
            character other systems refuse.
    """
    where = f"path: {quote(path, 80)}"
    if not path.strip():
        raise _invalid("path: empty: name a file inside the skill's folder (references/notes.md)")
    if len(path) > MAX_PATH_CHARS:
        raise _invalid(f"path: {len(path)} characters, the limit is {MAX_PATH_CHARS}")
    if "\0" in path:
        raise _invalid(f"{where} contains a NUL byte")
    if (
        PurePosixPath(path).is_absolute()
        or PureWindowsPath(path).is_absolute()
        or PureWindowsPath(path).drive
    ):
        raise _invalid(f"{where} is absolute: give a path relative to the skill's folder")
    raw = path.split("/")
    if ".." in raw or ".." in path.split("\\"):
        raise _invalid(f"{where} leaves the skill's folder ('..' is not allowed)")
    if "\\" in path:
        raise _invalid(f"{where} holds a backslash: separate folders with '/'")
    parts = tuple(p for p in raw if p not in ("", "."))
    if not parts:
        raise _invalid(f"{where} names no file: name a file inside the skill's folder")
    if any(p.startswith(".") for p in parts):
        raise _invalid(f"{where} names a hidden file or folder: those are never served")
    if any(_BAD_NAME.search(p) or p != p.strip() for p in parts):
        raise _invalid(
            f'{where} holds a control character, a reserved mark (< > : " | ? *) or a name '
            "that starts or ends with a space"
        )
    if any(_RESERVED.fullmatch(p.split(".")[0]) or p.endswith(".") for p in parts):
        raise _invalid(
            f"{where} holds a name some systems reserve (CON, NUL, COM1, ...) or one ending "
            "in a dot"
        )
    if len(parts) - 1 > MAX_DEPTH:
        raise _invalid(f"{where} is nested {len(parts) - 1} folders deep, the limit is {MAX_DEPTH}")
    return parts


def new_skill_text(name: str, description: str, body: str) -> str:
    """The SKILL.md `create` writes: frontmatter (the description as a quoted YAML string,
    so no text can add a key) and the body."""
    # A JSON string is a YAML double-quoted scalar: every character survives, none is syntax.
    front = f"---\nname: {name}\ndescription: {json.dumps(description, ensure_ascii=False)}\n---\n"
    return f"{front}\n{body.strip(chr(10))}\n"


def valid_skill_text(text: str, name: str) -> None:
    """Refuse a SKILL.md the loader (or another Agent Skills runtime) would not load.

    The loader's own rules, with its soft limits as hard ones: other runtimes
    refuse what this one only warns about.
    """
    shown = Path(SKILLS_DIR, name, SKILL_FILE)
    try:
        skill, warnings = parse_skill(text, path=shown)
    except HomeError as exc:
        rules = "; ".join(exc.problems) or str(exc)
        raise _invalid(f"the skill would not load: {rules}") from None
    if warnings:
        raise _invalid(f"the skill would not load in every Agent Skills runtime: {warnings[0]}")
    if "\n" in skill.description.strip():
        raise _invalid("description: one line: the system prompt lists it on one line")
    if not skill.body.strip():
        raise _invalid("body: empty: write the procedure's steps")


def check_op(op: SkillOp, scanner: Scanner) -> None:
    """Everything about `op` that needs no file: its fields, sizes and the scanner.

    Raises:
        MemoryEditError: `invalid` (a field, named) or `rejected` (the scanner).
    """
    check_name(op.name)
    need: dict[SkillAction, tuple[str, ...]] = {
        "create": ("description", "body"),
        "patch": ("text", "with"),
        "write_file": ("path", "content"),
        "remove": (),
    }
    values = {
        "description": op.description,
        "body": op.body,
        "text": op.text,
        "with": op.with_,
        "path": op.path,
        "content": op.content,
    }
    for field in need[op.action]:
        if values[field] is None:
            raise _invalid(f'{field}: required for action "{op.action}"')
    allowed = set(need[op.action]) | ({"path"} if op.action == "patch" else set())
    extra = [f for f, v in values.items() if v is not None and f not in allowed]
    if extra:
        raise _invalid(f'{extra[0]}: not taken by action "{op.action}"')
    if op.action == "create":
        assert op.description is not None
        assert op.body is not None
        if not op.description.strip():
            raise _invalid("description: empty: say what the skill does and when to use it")
        if len(op.description) > DESCRIPTION_SOFT_LIMIT:
            raise _invalid(
                f"description: {len(op.description)} characters, the Agent Skills limit "
                f"is {DESCRIPTION_SOFT_LIMIT}"
            )
        if "\n" in op.description.strip() or "\r" in op.description:
            raise _invalid("description: one line: the system prompt lists it on one line")
        _size("body", op.body)
        valid_skill_text(new_skill_text(op.name, op.description, op.body), op.name)
        # The description enters every future system prompt: judged as a note is.
        _scan(scanner, op.description, "description", note=True)
        _scan(scanner, op.body, "body")
    elif op.action == "patch":
        assert op.text is not None
        assert op.with_ is not None
        if not op.text:
            raise _invalid("text: empty: quote the part of the file to change")
        if op.path is not None:
            parts_of(op.path)  # SKILL.md may be named: it is the default
        _size("with", op.with_)
        if op.with_.strip():  # refused here, never held for a person: the same as a file
            _scan(scanner, op.with_, "with")
    elif op.action == "write_file":
        assert op.path is not None
        assert op.content is not None
        parts = parts_of(op.path)
        if parts[0].casefold() == SKILL_FILE.casefold() and len(parts) == 1:
            raise _invalid(
                'path: SKILL.md is written by "create" and changed by "patch", which check '
                "that it still loads"
            )
        _size("content", op.content)
        _scan(scanner, op.content, "content")


def same_frontmatter(old: str, new: str, name: str, scanner: Scanner) -> None:
    """Refuse a patch of SKILL.md that changes its frontmatter beyond the description, and
    judge a new description as `create` does: it enters every later system prompt, and
    another key (`allowed-tools`, say) could widen what other runtimes let the skill do.
    """
    shown = Path(SKILLS_DIR, name, SKILL_FILE)
    before = split_frontmatter(old, path=shown).data
    after = split_frontmatter(new, path=shown).data
    changed = sorted(
        k for k in set(before) | set(after) if k != "description" and before.get(k) != after.get(k)
    )
    if changed:
        raise _invalid(
            f"text: a patch changes a skill's description and steps, never the other keys of "
            f"its frontmatter ({', '.join(changed)})"
        )
    description = after.get("description")
    if description != before.get("description") and isinstance(description, str):
        _scan(scanner, description, "description", note=True)


def _size(field: str, text: str) -> None:
    if len(text) > MAX_FILE_CHARS:
        raise MemoryEditError(
            f"full: {field} is {len(text):,} characters; one file of a skill holds at most "
            f"{MAX_FILE_CHARS:,}: split it into files beside SKILL.md. {NOTHING}",
            kind="full",
        )


def _scan(scanner: Scanner, text: str, field: str, *, note: bool = False) -> None:
    """Refuse text that is unsafe where it will be read: the description in every system
    prompt (judged as a memory note), a body or file when the `skill` tool loads it."""
    found = scanner.vet(text) if note else scanner.scan(text)
    if found:
        reasons = "; ".join(str(f) for f in found)
        raise MemoryEditError(
            f"rejected: {field} breaks a safety rule: {reasons}. A skill's text is read as "
            "instructions in later sessions, so it must hold none of that: rephrase it and "
            f"try again. {NOTHING}",
            kind="rejected",
        )


def patched(old: str, op: SkillOp, scanner: Scanner, *, shown: str) -> str:
    """`old` (the file's text) with `op.text` replaced by `op.with_` at its one place.

    The rule of the memory tool: `text` must match exactly one place; a miss is
    `not found: <text>`, several places are `ambiguous`. The paragraphs the
    change touches are scanned as they read after it.

    Raises:
        MemoryEditError: `not_found`, `ambiguous`, `rejected`, `full`.
    """
    assert op.text is not None
    assert op.with_ is not None
    at = old.find(op.text)
    if at < 0:
        raise MemoryEditError(f"not found: {clip(op.text)}", kind="not_found")
    places = [at]
    while len(places) < 6:
        nxt = old.find(op.text, places[-1] + 1)
        if nxt < 0:
            break
        places.append(nxt)
    if len(places) > 1:
        lines = ", ".join(str(old.count("\n", 0, p) + 1) for p in places[:5])
        more = " and more" if len(places) > 5 else ""
        raise MemoryEditError(
            f"ambiguous: {quote(op.text)} matches {len(places)} places in {shown} (lines "
            f"{lines}{more}). Quote more of the text around the place you mean. {NOTHING}",
            kind="ambiguous",
        )
    new = old[:at] + op.with_ + old[at + len(op.text) :]
    if len(new) > MAX_FILE_CHARS:
        _size(shown, new)
    start = new.rfind("\n\n", 0, at)
    end = new.find("\n\n", at + len(op.with_))
    region = new[start + 1 if start >= 0 else 0 : end if end >= 0 else len(new)]
    _scan(scanner, region, "with")
    return new
