"""Skills in the open Agent Skills format, and the `skill` tool that loads them on demand.

A skill is a folder `skills/<name>/` holding a `SKILL.md` (YAML frontmatter, then
Markdown instructions) and any files beside it. The soul lists only each skill's
name and description; the `skill` tool hands the model the full body, or one
file from the folder, when a task calls for it (progressive disclosure).
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..errors import HomeError, ToolError
from ..tools import Tool, define_tool
from ._cache import NotRegularFile, read_regular
from ._frontmatter import Frontmatter, key_line, split_frontmatter

if TYPE_CHECKING:
    from .home import Home

__all__ = [
    "COMPATIBILITY_SOFT_LIMIT",
    "DESCRIPTION_SOFT_LIMIT",
    "SKILL_FILE",
    "SKILL_NAME_RE",
    "Skill",
    "SkillFrontmatter",
    "SkillInfo",
    "parse_skill",
    "read_skill",
    "skill_tool",
]

SKILL_FILE = "SKILL.md"
#: Lowercase letters and digits in runs joined by single hyphens. `\Z`, not `$`: `$` also
#: matches before a final newline, and a name must never break a line of the soul.
SKILL_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*\Z")
SKILL_NAME_MAX = 64
#: Past these the skill still loads, with a warning: widely used public skills stretch them.
DESCRIPTION_SOFT_LIMIT = 1024
COMPATIBILITY_SOFT_LIMIT = 500
#: The skill tool returns at most this many characters of one file (a context window is finite).
MAX_FILE_CHARS = 100_000
#: ...and reads at most this many bytes of it (a UTF-8 character is at most 4 bytes).
MAX_FILE_BYTES = MAX_FILE_CHARS * 4 + 4
#: The skill tool lists at most this many of a skill's files after its body.
MAX_LISTED_FILES = 50


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
        return f"{path}:{key_line(fm, key)}: {rule}"

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
    """Turn pydantic type errors into file:line problems naming the key."""
    problems = []
    seen: set[str] = set()
    for error in exc.errors(include_url=False):
        loc = [str(part) for part in error["loc"]]
        if error["type"] == "missing" or not loc:
            continue  # reported above, with a hint
        top = loc[0]
        if top == "allowed_tools":
            top = "allowed-tools"
        if top in seen:  # a union reports once per member; one line per key is enough
            continue
        seen.add(top)
        rule = _TYPE_RULES.get(top, "must be a string")
        # A union's errors carry member tags ("str", "list[str]"): name only the key then.
        key = top if top == "allowed-tools" else ".".join([top, *loc[1:]])
        problems.append(f"{path}:{key_line(fm, top)}: key {key!r} {rule}")
    return problems


_TYPE_RULES = {
    "metadata": "must map strings to strings (quote values such as '1.0')",
    "allowed-tools": "must be a space-separated string of tool names, or a list of them",
}


# -- the skill tool ----------------------------------------------------------------


def skill_tool(home: Home | str | os.PathLike[str], *, strict: bool = True) -> Tool:
    """Build the `skill` tool: load one skill's full instructions, or a file beside them.

    The `name` parameter's schema lists the home's skills as an enum, fixed when
    the tool is built (tool specs must stay byte-stable for a session); the
    files themselves are read from disk on each call.

    Raises:
        HomeError: when the home has no skills, or (strict) a skill breaks a rule.
    """
    from .home import Home, problems_error

    if not isinstance(home, Home):
        home = Home(home)
    # The scan, not `home.skills()`: names and folders are enough, bodies load per call.
    scan = home.scan_skills()
    if strict and scan.problems:
        raise problems_error(scan.problems)
    skills = scan.skills
    if not skills:
        raise HomeError(f"{home.skills_dir}: no skills: the skill tool needs at least one")
    names = tuple(skill.name for skill in skills)
    folders = {skill.name: skill.folder for skill in skills}
    args_model = _args_model(names)

    def load(args: Any) -> str:
        return read_skill(folders[args.name], args.path)

    listing = "\n".join(f"- {skill.name}" for skill in skills)
    return define_tool(
        name="skill",
        description=(
            "Load a skill: its full instructions (SKILL.md), or with `path` one file "
            "from the skill's folder (for example references/guide.md). The system "
            "prompt lists each skill's name and what it is for; load one when a task "
            f"calls for it. Skills:\n{listing}"
        ),
        input_model=args_model,
        handler=load,
    )


def _args_model(names: tuple[str, ...]) -> type[BaseModel]:
    name_type: Any = Literal[names]

    def as_enum(schema: dict[str, Any]) -> None:
        # pydantic writes a one-value Literal as `const`; keep the `enum` shape for any count.
        schema.pop("const", None)
        schema["enum"] = list(names)

    model: type[BaseModel] = create_model(
        "SkillArgs",
        __config__=ConfigDict(extra="forbid"),
        name=(name_type, Field(description="The skill to load.", json_schema_extra=as_enum)),
        path=(
            str | None,
            Field(
                default=None,
                description=(
                    "Optional: a file inside the skill's folder, relative to it "
                    "(for example references/guide.md). Omit to load SKILL.md."
                ),
            ),
        ),
    )
    return model


def read_skill(folder: Path, rel: str | None = None) -> str:
    """Return a skill's SKILL.md body (with its file list), or the text of one file in it.

    Raises:
        ToolError: when the skill is gone, or `rel` is empty, holds a NUL byte, is
            absolute, climbs out with `..` or a symlink, names a directory or anything
            but a regular file (a FIFO would block), or is missing or not text.
    """
    name = folder.name
    if rel is None:
        path = folder / SKILL_FILE
        try:
            data, _ = read_regular(path, limit=None)
            skill, _ = parse_skill(data.decode("utf-8"), path=path)
        except FileNotFoundError:
            raise ToolError(f"skill {name!r} is gone: its SKILL.md was removed") from None
        except NotRegularFile:
            raise ToolError(
                f"skill {name!r} cannot be loaded: its SKILL.md is not a regular file"
            ) from None
        except (OSError, UnicodeDecodeError, HomeError) as exc:
            raise ToolError(f"skill {name!r} cannot be loaded: {exc}") from exc
        files = _list_files(folder)
        if not files:
            return skill.body
        shown = files[:MAX_LISTED_FILES]
        more = f"\n- ... and {len(files) - len(shown)} more" if len(files) > len(shown) else ""
        listing = "\n".join(f"- {f}" for f in shown)
        return (
            f"{skill.body}\n\nFiles in this skill (load one with the skill tool, "
            f"name={name!r} and path=...):\n{listing}{more}"
        )
    return _read_file(folder, rel)


def _read_file(folder: Path, rel: str) -> str:
    name = folder.name
    if not rel.strip():
        raise ToolError("path is empty: omit it to load SKILL.md, or name a file in the skill")
    if "\0" in rel:
        # Checked up front: the OS would refuse it with a bare ValueError.
        raise ToolError(f"path {rel!r} contains a NUL byte: name a file in the skill's folder")
    if (
        PurePosixPath(rel).is_absolute()
        or PureWindowsPath(rel).is_absolute()
        or (PureWindowsPath(rel).drive)
    ):
        raise ToolError(f"path {rel!r} is absolute: give a path relative to the skill's folder")
    parts = PurePosixPath(rel.replace("\\", "/")).parts
    if ".." in parts:
        raise ToolError(f"path {rel!r} leaves the skill's folder ('..' is not allowed)")
    try:
        root = folder.resolve(strict=True)
        target = (root / Path(*parts)).resolve(strict=True)
    except FileNotFoundError:
        raise ToolError(f"no file {rel!r} in skill {name!r}") from None
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise ToolError(f"path {rel!r} in skill {name!r} cannot be read: {exc}") from exc
    if not target.is_relative_to(root):
        raise ToolError(f"path {rel!r} points outside the skill's folder (through a symlink)")
    if target.is_dir():
        raise ToolError(f"path {rel!r} is a directory: name a file inside it")
    try:
        data, size = read_regular(target, limit=MAX_FILE_BYTES)
    except NotRegularFile:
        # A FIFO would block the read forever; a device or socket is no skill file either.
        raise ToolError(
            f"path {rel!r} in skill {name!r} is not a regular file (a pipe, device or socket)"
        ) from None
    except OSError as exc:
        raise ToolError(f"path {rel!r} in skill {name!r} cannot be read: {exc}") from exc
    try:
        # Final only when the whole file was read: a character cut at the byte limit
        # is held back, not an error.
        decoder = codecs.getincrementaldecoder("utf-8")()
        text = decoder.decode(data, final=len(data) < MAX_FILE_BYTES)
    except UnicodeDecodeError:
        raise ToolError(f"path {rel!r} is not a UTF-8 text file") from None
    if len(text) > MAX_FILE_CHARS:
        return (
            text[:MAX_FILE_CHARS]
            + f"\n\n[truncated: the file has {size} bytes; shown its first {MAX_FILE_CHARS} "
            "characters]"
        )
    return text


def _list_files(folder: Path) -> list[str]:
    """Relative paths of the readable, visible files under `folder` besides SKILL.md, sorted."""
    try:
        root = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        return []
    return sorted(rel for rel in _walk(root, root, PurePosixPath()) if rel != SKILL_FILE)


def _walk(root: Path, folder: Path, prefix: PurePosixPath) -> Iterator[str]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        rel = prefix / entry.name
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(root, Path(entry.path), rel)
        elif entry.is_symlink():
            # Listed only when the tool would serve it: a link to a file inside the folder.
            try:
                target = Path(entry.path).resolve(strict=True)
            except (OSError, RuntimeError):
                continue
            if target.is_file() and target.is_relative_to(root):
                yield rel.as_posix()
        elif entry.is_file():
            yield rel.as_posix()
