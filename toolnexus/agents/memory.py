"""A persona's durable memory: the `memory` tool over MEMORY.md and USER.md.

Every action reads the file under a lock (through `_files`, the one reader of
home files), applies one edit, and writes it back atomically before it returns
(see `_store`); the entry format lives in `_memfile`, the safety check in
`_safety`. Writes never touch the running session: the soul is a snapshot, so
they load from the next session on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from .._schema import describe_validation_error
from ..errors import ArgumentError, HomeError, HomeFileError, MemoryEditError
from ..tools import Tool, define_tool
from ._files import MEMORY_FILES, Door, decode, memory_cap
from ._identity import MemoryLimits, Target, memory_limit
from ._load import find_identity
from ._memedit import NO_CHANGE, NOTHING, Op, Plan, check_text, usage, with_problem
from ._memfile import Block, MemoryDocument, parse_memory
from ._store import (
    Folder,
    LockIsLink,
    LockLost,
    ReadOnlyFile,
    SwapConflict,
    WriteCancelled,
    locked,
    update,
)

__all__ = [
    "MEMORY_FILES",
    "Block",
    "MemoryDocument",
    "MemoryStore",
    "Op",
    "Target",
    "memory_tool",
    "parse_memory",
]

_LOCK_RETRIES = 20


@dataclass(frozen=True, slots=True)
class MemoryStore:
    """One memory file (MEMORY.md or USER.md) in `dir`, edited safely and durably.

    Each edit takes the file's inter-process lock, re-reads the file from disk,
    applies the change and checks it (match, limit, safety), then replaces the
    file atomically; on any error nothing is written. `fsync=False` trades crash
    durability for speed (tests, benchmarks).

    Raises:
        ArgumentError: (a ValueError) at construction, for an unknown target or a
            limit out of range.
        TypeError: at construction, for a limit that is not an int.
    """

    dir: Path
    target: Target
    _: KW_ONLY
    limit: int
    fsync: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "dir", Path(self.dir))
        if self.target not in MEMORY_FILES:
            raise ArgumentError(
                f"target: unknown memory target {self.target!r}; use 'self' or 'user'"
            )
        memory_limit(self.limit, where="limit:")

    @property
    def path(self) -> Path:
        """Where the file lives (it may not exist yet: missing means empty)."""
        return self.dir / MEMORY_FILES[self.target]

    @property
    def name(self) -> str:
        """The file's name, as messages show it."""
        return MEMORY_FILES[self.target]

    def usage(self, doc: MemoryDocument) -> str:
        """Describe how full `doc` is, for a model deciding whether to consolidate."""
        return usage(doc, self.name, self.limit)

    def add(self, text: str) -> str:
        """Append `text` as one entry (an exact duplicate writes nothing).

        Raises:
            MemoryEditError: `invalid`, `rejected` (safety), `full`, `io`.
        """
        return self._run([Op("add", text)], batch=False)

    def replace(self, text: str, with_: str) -> str:
        """Swap the part `text` of the one matching entry for `with_` (SPEC §3's rule).

        Raises:
            MemoryEditError: `invalid`, `not_found`, `ambiguous`, `rejected`, `full`, `io`.
        """
        return self._run([Op("replace", text, with_)], batch=False)

    def remove(self, text: str) -> str:
        """Delete the one entry that `text` matches (with its identical copies).

        Raises:
            MemoryEditError: `invalid`, `not_found`, `ambiguous`, `io`.
        """
        return self._run([Op("remove", text)], batch=False)

    def apply(self, ops: Sequence[Op], *, cancel: threading.Event | None = None) -> str:
        """Apply a batch: every change in order to one read of the file, all or nothing.

        The limit is checked on the final result only, so a batch can free room
        and use it. `cancel`, once set, stops a call that has not written yet
        (`MemoryEditError` of kind `cancelled`); a write that has begun finishes.

        Raises:
            MemoryEditError: the first refusal, naming its item (`item 3: ...`).
        """
        return self._run(ops, batch=True, cancel=cancel)

    # -- internals -----------------------------------------------------------------

    def _run(self, ops: Sequence[Op], *, batch: bool, cancel: threading.Event | None = None) -> str:
        plan = Plan(ops, name=self.name, limit=self.limit, batch=batch)  # before the lock
        return self._edit(plan.apply, cancel)

    def _edit(
        self,
        edit: Callable[[MemoryDocument], tuple[MemoryDocument | None, str]],
        cancel: threading.Event | None = None,
    ) -> str:
        """Run `edit` on the freshly read file under the lock; write its result, if any."""
        folder: Folder | None = None
        try:
            folder, name = Folder.of(Door(self.dir), os.fspath(self.path))
            for _ in range(_LOCK_RETRIES):
                try:
                    return self._edit_locked(folder, name, edit, cancel)
                except LockLost:
                    continue  # the lock file was deleted under us: redo the edit from disk
        except WriteCancelled:
            raise MemoryEditError(
                f"cancelled: the call was given up before anything was written to "
                f"{self.name}. {NOTHING}",
                kind="cancelled",
            ) from None
        except HomeFileError as exc:  # the door refused the file (a link out, a FIFO, ...)
            raise MemoryEditError(
                f"cannot write {self.name}: {exc}. {NOTHING}", kind="io"
            ) from None
        except LockIsLink as exc:
            raise MemoryEditError(
                f"cannot write {self.name}: its lock file {exc.filename} {exc.strerror}; "
                f"a person must remove that link. {NOTHING}",
                kind="io",
            ) from None
        except ReadOnlyFile as exc:
            raise MemoryEditError(
                f"cannot write {self.name}: it is {exc.strerror}: a person marked it so. Make "
                f"it writable (chmod u+w {self.name}) to let the persona write to it. {NOTHING}",
                kind="io",
            ) from None
        except SwapConflict:
            msg = "it kept changing while being written (someone keeps saving it); try again"
            raise MemoryEditError(
                f"cannot write {self.name}: {msg}. {NOTHING}", kind="io"
            ) from None
        except OSError as exc:
            raise MemoryEditError(
                f"cannot write {self.name}: {exc.strerror or exc} ({exc.filename or self.path}). "
                f"Check that the folder is writable and has space. {NOTHING}",
                kind="io",
            ) from exc
        finally:
            if folder is not None:
                folder.close()
        raise MemoryEditError(
            f"cannot write {self.name}: its lock file .{name}.lock keeps being "
            f"deleted by something else. {NOTHING}",
            kind="io",
        )

    def _edit_locked(
        self,
        folder: Folder,
        name: str,
        edit: Callable[[MemoryDocument], tuple[MemoryDocument | None, str]],
        cancel: threading.Event | None,
    ) -> str:
        messages: list[str] = []

        def apply(data: bytes | None) -> bytes | None:
            text = ""
            if data:
                try:
                    text = decode(data, self.name)
                except HomeFileError:
                    raise MemoryEditError(
                        f"cannot edit {self.name}: it is not UTF-8 text; a person must re-save "
                        f"it as UTF-8. {NOTHING}",
                        kind="invalid",
                    ) from None
            doc = parse_memory(text)
            new, message = edit(doc)
            messages.append(message)
            return None if new is None else new.render().encode("utf-8")

        with locked(folder, name, cancel=cancel) as lock:
            note = update(
                folder,
                name,
                apply,
                lock=lock,
                cap=memory_cap(self.limit),
                shown=os.fspath(self.path),
                fsync=self.fsync,
            )
        message = messages[-1]
        return message if note is None else f"{message} {note}"


# -- the tool ---------------------------------------------------------------------

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


def _resolve_limits(home: Path, limits: Mapping[str, int] | None) -> MemoryLimits:
    """Lay `limits` over IDENTITY.md's `memory_limits` (or the package defaults)."""
    found = find_identity(home)
    base = found[1].config.memory_limits if found is not None else MemoryLimits()
    return base if limits is None else base.merged(limits)


def memory_tool(dir: str | Path, *, limits: Mapping[str, int] | None = None) -> Tool:
    """Build the `memory` tool: add / replace / remove entries in `dir`'s memory files.

    Args:
        dir: an existing home folder; MEMORY.md and USER.md are created there
            on the first write.
        limits: characters per file, `{"self": ..., "user": ...}` (either key may
            be left out). Defaults: IDENTITY.md's `memory_limits` when `dir` has
            one, else the package defaults.

    Raises:
        HomeError: when `dir` is not a folder, or its IDENTITY.md is invalid.
        ArgumentError: (a ValueError) when `limits` has an unknown key or a value
            out of range.
        TypeError: when `limits` is not a mapping, or a value is not an int.
    """
    home = Path(dir)
    if not home.is_dir():
        raise HomeError(
            f"{home}: not a folder: memory_tool needs an existing home folder "
            "(it creates MEMORY.md and USER.md in it, never folders)"
        )
    resolved = _resolve_limits(home, limits)
    stores = {t: MemoryStore(home, t, limit=resolved.for_target(t)) for t in MEMORY_FILES}

    async def handle(args: MemoryArgs) -> str:
        # The write runs in a worker thread (it waits on a lock and on the disk). If
        # the caller gives up, the event stops the thread before anything is written.
        import asyncio  # here, not at the top: `toolnexus soul` never needs an event loop

        store = stores[args.target]
        cancel = threading.Event()
        batch = args.operations is not None
        try:
            return await asyncio.to_thread(store._run, args.ops(), batch=batch, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise

    return define_tool(
        name="memory", description=DESCRIPTION, input_model=MemoryArgs, handler=handle
    )
