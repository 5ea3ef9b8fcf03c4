"""The `skill_manage` tool: the persona keeps procedures as Agent Skills in its own home.

Memory holds facts; a skill holds a procedure, loaded whole only when a task
calls for it. The tool's names and shape are the contract (SPEC §15): `action`
`create` (`name`, `description`, `body`), `patch` (`name`, `text`, `with`),
`write_file` (`name`, `path`, `content`), `remove` (`name`). The writes follow
the memory tool's rules: checked first, held for review after untrusted text
(`_review`), saved at once, loaded next session (`_skill_store`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from ..errors import HomeError
from ..home._identity import ReviewMode
from ..home._load import home_scanner
from ..scanner._scanner import Classifier, Scanner
from ..tools import Tool, define_tool, home_reader
from ._review import tool_review, write_or_hold
from ._skill_edit import MAX_FILE_CHARS, MAX_SKILL_BYTES, MAX_SKILL_FILES, SkillOp
from ._skill_store import SkillStore

__all__ = ["DESCRIPTION", "SkillManageArgs", "skill_manage_tool"]

DESCRIPTION = f"""\
Keep a procedure you have learned as a skill: a folder skills/<name>/ with a \
SKILL.md (a one-line description, then Markdown steps) and, if useful, files \
beside it. The system prompt of your later sessions lists each skill's name and \
description, and the `skill` tool loads its steps when a task calls for them.

Write a skill, not a memory entry, when you worked out HOW to do something that \
will come back: several steps, commands or a checklist (how this team ships a \
release, the steps that fixed an incident, the way the user wants reports \
written). A single fact or preference belongs in memory. Write the steps so a \
later you can follow them without this conversation: concrete commands, where \
things are, what to check. Never put secrets in a skill.

Actions: "create" makes a new skill from `name` (lowercase words joined by \
hyphens, e.g. release-checklist), `description` (one line: what it does and \
when to use it) and `body` (the steps). "patch" changes one file of a skill: it \
finds `text`, which must occur exactly once, and puts `with` in its place \
(`path` names a file beside SKILL.md; default SKILL.md). "write_file" writes \
`content` to the file `path` inside the skill's folder (references/notes.md). \
"remove" deletes the skill.

Limits: {MAX_FILE_CHARS:,} characters per file, {MAX_SKILL_FILES} files and \
{MAX_SKILL_BYTES:,} bytes per skill. Writes are saved at once but load NEXT \
SESSION: your current system prompt and skill list do not change, so do not \
create a skill again because you cannot see it yet."""


def _plain(schema: JsonDict) -> None:
    schema.pop("default", None)


def _no_description(schema: JsonDict) -> None:
    schema.pop("description", None)


class SkillManageArgs(BaseModel):
    """The arguments of `skill_manage`: which fields each action takes is checked on the call
    (one flat schema: tool formats refuse a top-level `oneOf`)."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, json_schema_extra=_no_description
    )

    action: Literal["create", "patch", "write_file", "remove"] = Field(
        description="create: a new skill. patch: change text in one of its files. "
        "write_file: write a file beside SKILL.md. remove: delete the skill."
    )
    name: str = Field(description="The skill's name, which is also its folder's name.")
    description: str | SkipJsonSchema[None] = Field(
        description="create: one line saying what the skill does and when to use it.",
        default=None,
        json_schema_extra=_plain,
    )
    body: str | SkipJsonSchema[None] = Field(
        description="create: the skill's instructions, in Markdown.",
        default=None,
        json_schema_extra=_plain,
    )
    text: str | SkipJsonSchema[None] = Field(
        description="patch: the exact text to change; it must occur once in the file.",
        default=None,
        json_schema_extra=_plain,
    )
    with_: str | SkipJsonSchema[None] = Field(
        alias="with",
        description="patch: the text that takes the place of `text`.",
        default=None,
        json_schema_extra=_plain,
    )
    path: str | SkipJsonSchema[None] = Field(
        description="write_file: the file to write, relative to the skill's folder "
        "(references/notes.md). patch: the file to change (default SKILL.md).",
        default=None,
        json_schema_extra=_plain,
    )
    content: str | SkipJsonSchema[None] = Field(
        description="write_file: the file's whole text.",
        default=None,
        json_schema_extra=_plain,
    )

    def op(self) -> SkillOp:
        """The change as the skill store takes it."""
        return SkillOp(
            self.action,
            self.name,
            description=self.description,
            body=self.body,
            text=self.text,
            with_=self.with_,
            path=self.path,
            content=self.content,
        )


def skill_manage_tool(
    dir: str | os.PathLike[str],
    *,
    scanner: Scanner | Classifier | None = None,
    review: ReviewMode | None = None,
) -> Tool:
    """Build the `skill_manage` tool: the persona creates, patches, extends and removes its
    own skills in `dir`'s `skills/` folder (SPEC §15).

    Args:
        dir: an existing home folder.
        scanner: a classifier of your own (or a `Scanner`), run on new text after the
            built-in scanner, as for `memory_tool`.
        review: which writes wait for a person's review (`Review` lists them with the
            memory writes): `"untrusted"`, `"all"` or `"off"`. Default: IDENTITY.md's
            `memory_review`, else `"untrusted"`.

    Raises:
        HomeError: when `dir` is not a folder, or its IDENTITY.md is invalid.
        ArgumentError: (a ValueError) for an unknown review mode.
    """
    home = Path(os.path.abspath(dir))
    if not home.is_dir():
        raise HomeError(f"{home}: not a folder: skill_manage_tool needs an existing home folder")
    mode = tool_review(home, review)
    store = SkillStore(home, scanner=home_scanner(home, scanner))

    async def handle(args: SkillManageArgs) -> str:
        return await write_or_hold(
            mode,
            lambda source, cancel: store.apply(args.op(), source=source, cancel=cancel),
            lambda source, why: store.hold(args.op(), source=source, why=why),
        )

    tool = define_tool(
        name="skill_manage", description=DESCRIPTION, input_model=SkillManageArgs, handler=handle
    )
    return home_reader(tool)  # its results are the persona's own words, echoed
