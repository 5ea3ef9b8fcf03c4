"""Skills in the open Agent Skills format, and the `skill` tool that loads them on demand.

A skill is a folder `skills/<name>/` holding a `SKILL.md` (YAML frontmatter, then
Markdown instructions) and any files beside it. The soul lists only each skill's
name and description; the `skill` tool hands the model the full body, or one
file from the folder, when a task calls for it (progressive disclosure).
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..errors import HomeError, HomeFileError, ToolError
from ..home._door import (
    FILE_CAP,
    SKILL_FILE,
    SKILLS_DIR,
    Door,
    NotRegularFile,
    decode,
    read_prefix,
    within,
)
from ..home._load import valid_skills
from ..home._skill import parse_skill
from ..soul import Soul
from ..tools import Tool, define_tool, home_reader

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_FILE_CHARS",
    "MAX_LISTED_FILES",
    "read_skill",
    "serve_skills",
    "skill_tool",
]

#: The skill tool returns at most this many characters of one file (a context window is finite).
MAX_FILE_CHARS = 100_000
#: ...and reads at most this many bytes of it (a UTF-8 character is at most 4 bytes).
MAX_FILE_BYTES = MAX_FILE_CHARS * 4 + 4
#: The skill tool lists at most this many of a skill's files after its body.
MAX_LISTED_FILES = 50


# -- the skill tool ----------------------------------------------------------------


def skill_tool(home: Soul | str | os.PathLike[str], *, strict: bool = True) -> Tool:
    """Build the `skill` tool: load one skill's full instructions, or a file beside them.

    Given a `Soul`, the tool serves exactly the skills that soul lists (what a
    session does: its tools agree with its prompt, with no second look at the
    disk). Given a home folder (or a `Home`), it serves the skills there now.
    The `name` parameter's schema lists the skills as an enum, fixed when the
    tool is built (tool specs must stay byte-stable for a session); the files
    themselves are read from disk on each call.

    Raises:
        HomeError: when there are no skills, or (a folder, strict) a skill breaks a rule.
    """
    if isinstance(home, Soul):
        root = home.home
        names = tuple(skill.name for skill in home.skills)
    else:
        root = Path(os.path.abspath(home))
        names = tuple(skill.name for skill in valid_skills(root, strict=strict))
    return serve_skills(root, names)


def serve_skills(root: Path, names: tuple[str, ...]) -> Tool:
    """Build the skill tool over the skills `names` of the home at `root` (their order kept).

    Raises:
        HomeError: when `names` is empty.
    """
    if not names:
        raise HomeError(f"{root / SKILLS_DIR}: no skills: the skill tool needs at least one")

    def load(args: Any) -> str:
        return read_skill(root, args.name, args.path)

    listing = "\n".join(f"- {name}" for name in names)
    tool = define_tool(
        name="skill",
        description=(
            "Load a skill: its full instructions (SKILL.md), or with `path` one file "
            "from the skill's folder (for example references/guide.md). The system "
            "prompt lists each skill's name and what it is for; load one when a task "
            f"calls for it. Skills:\n{listing}"
        ),
        input_model=_args_model(names),
        handler=load,
    )
    return home_reader(tool)  # it reads the home's skills alone


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


def read_skill(home: Path, name: str, rel: str | None = None) -> str:
    """Return skill `name`'s SKILL.md body (with its file list), or the text of one file in it.

    Everything is read through the home's door: the skill's folder may be a link
    only within the home, and a file is served only from inside the skill's own
    folder once links are resolved, never a dot-file.

    Raises:
        ToolError: when the skill is gone or refused, or `rel` is empty, holds a NUL
            byte, is absolute, climbs out with `..` or a link, names a dot-file, a
            folder or anything but a regular file, or is missing or not text.
    """
    door = Door(home)
    # A valid skill's folder is named after it (a rule of the format).
    folder = os.path.join(home, SKILLS_DIR, name)
    root = os.path.realpath(folder)
    if not door.inside(root):
        raise ToolError(f"skill {name!r} is refused: its folder links to {root}, outside the home")
    if rel is None:
        path = os.path.join(folder, SKILL_FILE)
        try:
            data = door.read(path, cap=FILE_CAP)
            if data is None:
                raise ToolError(f"skill {name!r} is gone: its SKILL.md was removed")
            skill, _ = parse_skill(decode(data, path), path=Path(path))
        except HomeFileError as exc:
            why = "its SKILL.md is not a regular file" if exc.reason == "special" else str(exc)
            raise ToolError(f"skill {name!r} cannot be loaded: {why}") from None
        except HomeError as exc:
            raise ToolError(f"skill {name!r} cannot be loaded: {exc}") from None
        files = _list_files(root)
        if not files:
            return skill.body
        shown = files[:MAX_LISTED_FILES]
        more = f"\n- ... and {len(files) - len(shown)} more" if len(files) > len(shown) else ""
        listing = "\n".join(f"- {f}" for f in shown)
        return (
            f"{skill.body}\n\nFiles in this skill (load one with the skill tool, "
            f"name={name!r} and path=...):\n{listing}{more}"
        )
    return _read_file(name, root, rel)


def _read_file(name: str, root: str, rel: str) -> str:
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
    if any(part.startswith(".") for part in parts):
        raise ToolError(f"path {rel!r} names a hidden file or folder: those are never served")
    target = os.path.realpath(os.path.join(root, *parts))
    inner = os.path.relpath(target, root).split(os.sep)
    if not within(target, root):
        raise ToolError(f"path {rel!r} points outside the skill's folder (through a symlink)")
    if any(part.startswith(".") for part in inner):
        raise ToolError(f"path {rel!r} is a link to a hidden file: those are never served")
    try:
        data, size = read_prefix(target, limit=MAX_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(f"no file {rel!r} in skill {name!r}") from None
    except IsADirectoryError:
        raise ToolError(f"path {rel!r} is a directory: name a file inside it") from None
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


def _list_files(root: str) -> list[str]:
    """Relative paths of the files the tool would serve from `root` besides SKILL.md, sorted."""
    return sorted(rel for rel in _walk(root, root, PurePosixPath()) if rel != SKILL_FILE)


def _walk(root: str, folder: str, prefix: PurePosixPath) -> Iterator[str]:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        rel = prefix / entry.name
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(root, entry.path, rel)
        elif entry.is_symlink():
            # Listed only when the tool would serve it: a link to a visible file inside.
            target = os.path.realpath(entry.path)
            inner = os.path.relpath(target, root).split(os.sep)
            if (
                within(target, root)
                and not any(part.startswith(".") for part in inner)
                and os.path.isfile(target)
            ):
                yield rel.as_posix()
        elif entry.is_file(follow_symlinks=False):
            yield rel.as_posix()
