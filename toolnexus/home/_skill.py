"""SKILL.md, the open Agent Skills format: frontmatter rules and parsing (pure, no I/O).

A skill is a folder `skills/<name>/` holding a `SKILL.md`: YAML frontmatter
(`name`, `description`, optional `license`, `compatibility`, `metadata`,
`allowed-tools`), then Markdown instructions. A rule broken is a problem naming
the file, line and key; a soft limit passed (a long description) is a warning.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._validation import field_errors
from ..errors import HomeError
from ._frontmatter import Frontmatter, split_frontmatter

__all__ = [
    "COMPATIBILITY_SOFT_LIMIT",
    "DESCRIPTION_SOFT_LIMIT",
    "SKILL_NAME_RE",
    "Skill",
    "SkillFrontmatter",
    "SkillInfo",
    "parse_skill",
]

#: Lowercase letters and digits in runs joined by single hyphens. `\Z`, not `$`: `$` also
#: matches before a final newline, and a name must never break a line of the soul.
SKILL_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*\Z")
SKILL_NAME_MAX = 64
#: Past these the skill still loads, with a warning: widely used public skills stretch them.
DESCRIPTION_SOFT_LIMIT = 1024
COMPATIBILITY_SOFT_LIMIT = 500


class SkillFrontmatter(BaseModel):
    """The frontmatter of a SKILL.md.

    Keys other clients use (`when_to_use`, `user-invocable`, ...) are kept in
    `model_extra`, so a skill written for another agent loads unchanged.
    """

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True, strict=True)

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    #: As written: the spec's space-separated string, or the list some clients use.
    allowed_tools: str | list[str] | None = Field(default=None, alias="allowed-tools")


class SkillInfo(BaseModel):
    """A valid skill without its body: what the soul lists (the body may be any size)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    meta: SkillFrontmatter
    #: The SKILL.md file.
    path: Path

    @property
    def name(self) -> str:
        """The skill's name (equal to its folder's name)."""
        return self.meta.name

    @property
    def description(self) -> str:
        """What the skill does and when to use it."""
        return self.meta.description

    @property
    def folder(self) -> Path:
        """The skill's folder: the `skill` tool reads files only from here."""
        return self.path.parent


class Skill(SkillInfo):
    """A parsed, valid skill: its frontmatter, its Markdown body and where it lives."""

    body: str


def parse_skill(text: str, *, path: Path) -> tuple[Skill, tuple[str, ...]]:
    """Parse and validate the text of `path` (a `<folder>/SKILL.md`).

    Returns:
        The skill and its soft-limit warnings (each naming the file, line and rule).

    Raises:
        HomeError: listing every rule the file breaks, each with file and line.
    """
    fm = split_frontmatter(text, path=path)
    problems: list[str] = []
    warnings: list[str] = []
    data = fm.data

    def at(key: str, rule: str) -> str:
        return f"{fm.at(path, key)}: {rule}"

    name = data.get("name")
    folder = path.parent.name
    if "name" not in data:
        problems.append(f"{path}:2: missing required key 'name' (set it to the folder's name)")
    elif isinstance(name, str):
        problems += [at("name", rule) for rule in _name_rules(name, folder)]
    if "description" not in data:
        problems.append(
            f"{path}:2: missing required key 'description' "
            "(say what the skill does and when to use it)"
        )
    # Empty is an error; too long is only a warning (widely used skills stretch the limits).
    for key, limit, empty_hint in (
        ("description", DESCRIPTION_SOFT_LIMIT, ""),
        ("compatibility", COMPATIBILITY_SOFT_LIMIT, " (remove it)"),
    ):
        value = data.get(key)
        if not isinstance(value, str):
            continue
        if not value.strip():
            problems.append(at(key, f"key {key!r} is empty{empty_hint}"))
        elif len(value) > limit:
            warnings.append(
                at(
                    key,
                    f"{key} is {len(value)} characters, over the Agent Skills "
                    f"limit of {limit}: it loads, but shorten it",
                )
            )
    try:
        meta = SkillFrontmatter.model_validate(data)
    except ValidationError as exc:
        problems += _describe(exc, fm, path)
        meta = None
    if problems or meta is None:
        raise HomeError(f"{path}: invalid skill", problems=problems)
    return Skill(meta=meta, body=fm.body.strip("\n"), path=path), tuple(warnings)


def _name_rules(name: str, folder: str) -> list[str]:
    """Each Agent Skills naming rule `name` breaks."""
    rules = []
    if not name:
        return ["key 'name' is empty (set it to the folder's name)"]
    if len(name) > SKILL_NAME_MAX:
        rules.append(f"name is {len(name)} characters, the limit is {SKILL_NAME_MAX}")
    if not SKILL_NAME_RE.fullmatch(name):
        rules.append(
            f"name {name!r} breaks the naming rule: lowercase letters, digits and single "
            "hyphens, not starting or ending with a hyphen"
        )
    if name != folder:
        rules.append(f"name {name!r} differs from its folder's name {folder!r}: make them equal")
    return rules


def _describe(exc: ValidationError, fm: Frontmatter, path: Path) -> list[str]:
    """Turn pydantic type errors into file:line problems, one per key."""
    problems = []
    seen: set[str] = set()
    for error in field_errors(exc):
        if error.type == "missing" or not error.loc:
            continue  # reported by parse_skill, with a hint
        top = error.loc[0]
        if top == "allowed_tools":
            top = "allowed-tools"
        if top in seen:  # a union reports once per member; one line per key is enough
            continue
        seen.add(top)
        rule = _TYPE_RULES.get(top, "must be a string")
        # A union's errors carry member tags ("str", "list[str]"): name only the key then.
        key = top if top == "allowed-tools" else ".".join([top, *error.loc[1:]])
        problems.append(f"{fm.at(path, top)}: key {key!r} {rule}")
    return problems


_TYPE_RULES = {
    "metadata": "must map strings to strings (quote values such as '1.0')",
    "allowed-tools": "must be a space-separated string of tool names, or a list of them",
}
