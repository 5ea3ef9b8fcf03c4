"""The memory tool's face to a model: its description and its arguments' schema.

The names and shape are the contract (SPEC §3): `action`, `target`, `text`,
`with` (literally), `operations`. `action` stays optional in the schema (no
top-level `oneOf`, which tool formats refuse) and the rule is checked here, so
a model gets one plain message naming the field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from .._schema import describe_validation_error
from ..home._identity import Target
from ._edit import NO_CHANGE, Op, check_text, with_problem

__all__ = ["DESCRIPTION", "MemoryArgs", "MemoryOp"]

DESCRIPTION = """\
Save durable notes that carry over to your future sessions. Two files: \
target "self" (the default) is your own memory: facts about your work, \
decisions, lessons learned, details of the environment. Target "user" is what \
you know about the user: preferences, role, habits, how they like to work.

Write good entries: one fact per entry, short (a sentence or two), stated \
plainly, and durable (still worth knowing weeks from now). Do not save \
secrets, one-off task progress, or anything easy to look up again.

Actions: "add" saves `text` as a new entry. "replace" finds the one entry \
containing `text` and puts `with` in place of that part, keeping the rest of \
the entry; if `with` already restates the text before or after the match it \
is not repeated, so giving the whole new entry as `with` also works. \
"remove" deletes the one entry containing `text`. For replace and remove, \
quote enough of the entry to match only it; its whole text always works.

Batch: instead of `action`, give `operations`, a list of {"action", "text", \
"with"} changes for one target. They apply in order, together or not at all, \
and the limit is checked on the result only. When a file is full, use one \
batch that removes or shortens entries and then adds the new one: one call, \
and no other writer can take the room in between.

Writes are saved to disk at once but load NEXT SESSION: your current system \
prompt does not change, so do not add a note again because you cannot see it yet.

Each file has a character limit, and every result shows the usage; a "full" \
error lists the file's entries as they are now."""


def _drop_description(schema: JsonDict) -> None:
    """Keep the schema to the fields: the tool's description already explains the tool."""
    schema.pop("description", None)


def _drop_default(schema: JsonDict) -> None:
    """Keep optional fields plain in the schema (their None default is internal)."""
    schema.pop("default", None)


_ACTION = "add: save a new entry. replace: change part of one entry. remove: delete one entry."
_TEXT = (
    "add: the note to save. replace/remove: a part of the existing entry "
    "that matches only it (its whole text always works)."
)
_WITH = "replace only: the text that takes the place of `text` in the entry."


def _text_or_none(cls: type, value: object) -> object:
    """A string or nothing, with one plain message (not one per member of `str | None`)."""
    if value is not None and not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    return value


class MemoryOp(BaseModel):
    """One change of a batch (`operations`): the same fields as a single call."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, json_schema_extra=_drop_description
    )

    action: Literal["add", "replace", "remove"] = Field(description=_ACTION)
    text: str = Field(description=_TEXT)
    with_: str | SkipJsonSchema[None] = Field(
        default=None, alias="with", description=_WITH, json_schema_extra=_drop_default
    )

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, text: str) -> str:
        return check_text(text)

    _with_is_text = field_validator("with_", mode="before")(_text_or_none)

    @model_validator(mode="after")
    def _with_matches_action(self) -> MemoryOp:
        _with_rule(self.action, self.with_)
        return self

    def op(self) -> Op:
        """The change as the editor takes it."""
        return Op(self.action, self.text, self.with_)


def _with_rule(action: str, with_: str | None) -> None:
    problem = with_problem(action, with_)
    if problem is not None:
        raise ValueError(f"with: {problem}")


class MemoryArgs(BaseModel):
    """The arguments of the memory tool: one change (`action`) or a batch (`operations`).

    The schema property is literally `with`; `action` stays optional there (no
    top-level `oneOf`, which tool formats refuse), and the rule is checked here.
    """

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, json_schema_extra=_drop_description
    )

    action: Literal["add", "replace", "remove"] | SkipJsonSchema[None] = Field(
        default=None,
        description=_ACTION + " Leave it out when giving `operations`.",
        json_schema_extra=_drop_default,
    )
    target: Target = Field(
        default="self",
        description='"self": your own notes (MEMORY.md). "user": what you know about '
        "the user (USER.md).",
    )
    text: str | SkipJsonSchema[None] = Field(
        default=None, description=_TEXT, json_schema_extra=_drop_default
    )
    with_: str | SkipJsonSchema[None] = Field(
        default=None, alias="with", description=_WITH, json_schema_extra=_drop_default
    )
    operations: list[MemoryOp] | SkipJsonSchema[None] = Field(
        default=None,
        description="A batch instead of `action`: changes to one target, applied in order, "
        "all or nothing, the limit checked on the result only.",
        json_schema_extra=_drop_default,
    )

    @field_validator("action", mode="before")
    @classmethod
    def _action_is_known(cls, value: object) -> object:
        # One plain message instead of one per member of the optional type.
        if value is not None and value not in ("add", "replace", "remove"):
            raise ValueError("Input should be 'add', 'replace' or 'remove'")
        return value

    @field_validator("text", mode="before")
    @classmethod
    def _text_is_text(cls, value: object) -> object:
        value = _text_or_none(cls, value)
        return value if value is None else check_text(str(value))

    _with_is_text = field_validator("with_", mode="before")(_text_or_none)

    @field_validator("operations", mode="before")
    @classmethod
    def _each_item(cls, value: object) -> object:
        """Check each item alone, so an error names it by position (`item 3`)."""
        if value is None:
            return value
        if not isinstance(value, list):
            raise ValueError("Input should be a list of changes ({action, text, with} objects)")
        if not value:
            raise ValueError(NO_CHANGE)
        items: list[MemoryOp] = []
        for k, item in enumerate(value, 1):
            try:
                items.append(MemoryOp.model_validate(item))
            except ValidationError as exc:
                why = describe_validation_error(exc).removeprefix("invalid arguments: ")
                raise ValueError(f"item {k}: {why}") from None
        return items

    @model_validator(mode="after")
    def _one_form(self) -> MemoryArgs:
        if self.operations is not None:
            extra = [n for n, v in (("action", self.action), ("text", self.text)) if v is not None]
            if self.with_ is not None:
                extra.append("with")
            if extra:
                raise ValueError(
                    f"{extra[0]}: give either action/text/with (one change) or operations "
                    "(a batch), not both; inside a batch each item has its own"
                )
            return self
        if self.action is None:
            raise ValueError(
                'action: required ("add", "replace" or "remove"), or give operations for a batch'
            )
        if self.text is None:
            raise ValueError(f'text: required for action "{self.action}"')
        _with_rule(self.action, self.with_)
        return self

    def ops(self) -> list[Op]:
        """The changes this call asks for, in order."""
        if self.operations is not None:
            return [item.op() for item in self.operations]
        assert self.action is not None  # checked above
        assert self.text is not None
        return [Op(self.action, self.text, self.with_)]
