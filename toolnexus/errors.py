"""The exceptions toolnexus raises, in one tree.

```
ToolnexusError                  root: catch this to catch anything toolnexus raises
├── ToolDefinitionError         a tool was defined wrongly (raised at definition time)
├── ToolError                   raised inside a handler: becomes ToolResult(is_error=True)
│   └── MemoryEditError         a memory or skill action that cannot apply (not found,
│                               ambiguous, full, rejected text, disk error); the model reads it
├── HomeError                   a home directory breaks a rule (names file, line/key, rule)
│   └── HomeFileError           one file refused by the door: a link out, a FIFO, too big, …
├── HistoryError                a memory history action cannot apply (no such change, an
│                               undo whose entry changed since, an unusable state database)
├── ConversationError           a saved-conversation action cannot apply (no such session,
│                               an import file that is not chat format, an unusable database)
├── StoreError                  a home's database store cannot be used (unreachable, its key
│                               claimed by another identity, a newer schema, a copy refused)
├── ClassifierError (RuntimeError)  a scanner's classifier of your own raised: the text
│                               could not be judged, so it is not written
├── ServeError (OSError)        `serve` cannot listen (an address or port refused)
├── ArgumentError (ValueError)  a function was given an argument value it cannot use
└── AgentError                  an agent cannot be wired or a conversation cannot go on
    ├── ModelError              a model provider failed or answered nonsense
    └── ToolRoundsExceeded      the model kept calling tools past the round cap
```

Two families, as in any tool framework: *signals* (`ToolError` and below) are
raised inside tools and come back to the model as error results it can read;
everything else is a developer's or operator's mistake and is raised.

The contract: what escapes a public function or the command line is one of
these, and its message names the file, key or field and the reason. Two
exceptions stay the built-in ones, as in any Python library: a `TypeError` for
an argument of the wrong type, and `asyncio.CancelledError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

__all__ = [
    "AgentError",
    "ArgumentError",
    "ClassifierError",
    "ConversationError",
    "HistoryError",
    "HomeError",
    "HomeFileError",
    "MemoryEditError",
    "ModelError",
    "ServeError",
    "StoreError",
    "ToolDefinitionError",
    "ToolError",
    "ToolRoundsExceeded",
    "ToolnexusError",
]

#: Why a memory action was refused; `MemoryEditError.kind` is always one of these.
MemoryEditKind = Literal[
    "invalid",
    "not_found",
    "ambiguous",
    "full",
    "rejected",
    "io",
    "cancelled",
    "internal",
    "exists",
]
MEMORY_EDIT_KINDS: tuple[MemoryEditKind, ...] = get_args(MemoryEditKind)

#: Why a history action was refused; `HistoryError.kind` is always one of these.
HistoryKind = Literal["not_found", "conflict", "unavailable", "state"]
HISTORY_KINDS: tuple[HistoryKind, ...] = get_args(HistoryKind)

#: Why a saved-conversation action was refused; `ConversationError.kind` is one of these.
ConversationKind = Literal["not_found", "ambiguous", "invalid", "state"]
CONVERSATION_KINDS: tuple[ConversationKind, ...] = get_args(ConversationKind)

#: Why a store action was refused; `StoreError.kind` is always one of these.
StoreKind = Literal["unreachable", "claimed", "schema", "not_empty", "unsupported", "failed"]
STORE_KINDS: tuple[StoreKind, ...] = get_args(StoreKind)

#: Why the door refused a home file; `HomeFileError.reason` is always one of these.
FileRefusal = Literal[
    "folder", "special", "link_out", "link_broken", "too_large", "not_utf8", "unreadable"
]
FILE_REFUSALS: tuple[FileRefusal, ...] = get_args(FileRefusal)


def _one_of(field: str, value: str, allowed: tuple[str, ...]) -> None:
    """Refuse a `kind` / `reason` outside its documented set (a bug in the raiser)."""
    if value not in allowed:
        raise ValueError(f"{field}: {value!r} is not one of {', '.join(allowed)}")


class ToolnexusError(Exception):
    """Root of every exception toolnexus raises on purpose."""


class _ProblemList(ToolnexusError):
    """An error that may carry several problems, all reported at once."""

    problems: tuple[str, ...]

    def __init__(self, message: str, *, problems: Iterable[str] = ()) -> None:
        self.problems = tuple(problems) or (message,)
        if len(self.problems) > 1 or self.problems[0] != message:
            message = message + "".join(f"\n  - {p}" for p in self.problems)
        super().__init__(message)


class ToolDefinitionError(_ProblemList):
    """A tool definition is wrong; `problems` lists every mistake found, not just the first."""


class ToolError(ToolnexusError):
    """Raise inside a tool handler to return `ToolResult(output=message, is_error=True)`."""

    message: str

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class MemoryEditError(ToolError):
    """A memory action that cannot be applied; nothing was written.

    `kind` says why, so callers such as the CLI can react without parsing the
    message: `"invalid"` (bad arguments, or a file that is not UTF-8 text),
    `"not_found"`, `"ambiguous"`, `"full"`, `"rejected"` (the safety check),
    `"io"` (the disk refused the read or write), `"internal"` (a bug: the edit
    would not read back as intended) or `"exists"` (a skill to create is there).
    """

    kind: MemoryEditKind

    def __init__(self, message: str, *, kind: MemoryEditKind) -> None:
        _one_of("kind", kind, MEMORY_EDIT_KINDS)
        self.kind = kind
        super().__init__(message)


class HomeError(_ProblemList):
    """A home directory breaks a rule; `problems` names each file, line or key and rule."""

    @classmethod
    def of(cls, problems: Iterable[str]) -> HomeError:
        """One error listing every problem (the problem itself when there is just one)."""
        listed = tuple(problems)
        if len(listed) == 1:
            return cls(listed[0])
        return cls(f"{len(listed)} problems in the home", problems=listed)


class HomeFileError(HomeError):
    """A home file the door will not read; `path` names it and `reason` says why.

    `reason` is one of `FILE_REFUSALS`: `"folder"`, `"special"` (a FIFO, device or
    socket, never opened in a way that blocks), `"link_out"` (a link whose target
    leaves the home), `"link_broken"` (a link to nothing), `"too_large"` (over
    the file's byte cap), `"not_utf8"` or `"unreadable"` (the system refused the read).
    """

    path: str
    reason: FileRefusal

    def __init__(self, message: str, *, path: str, reason: FileRefusal) -> None:
        _one_of("reason", reason, FILE_REFUSALS)
        self.path = path
        self.reason = reason
        super().__init__(message)


class HistoryError(ToolnexusError):
    """A memory history action that cannot apply; nothing was written.

    `kind` says why: `"not_found"` (no change with that id), `"conflict"` (an
    undo whose entry or file changed since), `"unavailable"` (what it needs was
    forgotten or compacted away) or `"state"` (the home's `.toolnexus/` state
    cannot be used: a link, a newer schema, a damaged database).
    """

    kind: HistoryKind

    def __init__(self, message: str, *, kind: HistoryKind) -> None:
        _one_of("kind", kind, HISTORY_KINDS)
        self.kind = kind
        super().__init__(message)


class StoreError(ToolnexusError):
    """A home's database store cannot be used; nothing was written.

    `kind` says why: `"unreachable"` (the server cannot be reached or failed
    mid-call), `"claimed"` (its key belongs to a different IDENTITY.md),
    `"schema"` (made by a newer toolnexus, or not migrated), `"not_empty"` (a
    push or pull would overwrite what is there), `"unsupported"` (an action
    the database store does not offer) or `"failed"` (the server refused the
    call: a missing privilege, a lock not granted in time; the message says which).
    """

    kind: StoreKind

    def __init__(self, message: str, *, kind: StoreKind) -> None:
        _one_of("kind", kind, STORE_KINDS)
        self.kind = kind
        super().__init__(message)


class ConversationError(_ProblemList):
    """A saved-conversation action that cannot apply; nothing was saved or removed.

    `kind` says why: `"not_found"` (no saved session with that id), `"ambiguous"`
    (a shortened id that fits several), `"invalid"` (an import that is not the
    chat format; `problems` names each file, line and rule) or `"state"` (the
    home's `.toolnexus/` state cannot be used).
    """

    kind: ConversationKind

    def __init__(
        self, message: str, *, kind: ConversationKind, problems: Iterable[str] = ()
    ) -> None:
        _one_of("kind", kind, CONVERSATION_KINDS)
        self.kind = kind
        super().__init__(message, problems=problems)

    @classmethod
    def of(cls, problems: Iterable[str], *, kind: ConversationKind) -> ConversationError:
        """One error listing every problem (the problem itself when there is just one)."""
        listed = tuple(problems)
        if len(listed) == 1:
            return cls(listed[0], kind=kind)
        return cls(f"{len(listed)} problems", kind=kind, problems=listed)


class ArgumentError(ToolnexusError, ValueError):
    """An argument's value is out of range (`memory_tool(dir, limits={"self": 0})`).

    Also a `ValueError`, so code written against the built-in type still catches it.
    """


class ClassifierError(ToolnexusError, RuntimeError):
    """Your classifier raised: the text could not be judged, so it is not written.

    Also a `RuntimeError`, as it was before it joined the tree.
    """


class ServeError(ToolnexusError, OSError):
    """`serve` cannot listen: the address is not this machine's, or the port is taken.

    Also an `OSError` carrying the system's `errno`; its text is the message alone.
    """

    def __str__(self) -> str:
        return self.strerror or super().__str__()


class AgentError(ToolnexusError):
    """An agent cannot be wired, or its conversation cannot go on."""


class ModelError(AgentError):
    """A model provider failed, or answered something the loop cannot use."""


class ToolRoundsExceeded(AgentError):
    """The model kept asking for tools beyond the session's round cap."""
