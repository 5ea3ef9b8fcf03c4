"""The exceptions toolnexus raises, in one tree.

```
ToolnexusError                  root: catch this to catch anything toolnexus raises
├── ToolDefinitionError         a tool was defined wrongly (raised at definition time)
├── ToolError                   raised inside a handler: becomes ToolResult(is_error=True)
│   └── MemoryEditError         a memory action that cannot apply (not found, ambiguous,
│                               full, rejected text, disk error); the model reads it
├── HomeError                   a home directory breaks a rule (names file, line/key, rule)
└── AgentError                  an agent cannot be wired or a conversation cannot go on
    ├── ModelError              a model provider failed or answered nonsense
    └── ToolRoundsExceeded      the model kept calling tools past the round cap
```

Two families, as in any tool framework: *signals* (`ToolError` and below) are
raised inside tools and come back to the model as error results it can read;
everything else is a developer's or operator's mistake and is raised.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "AgentError",
    "HomeError",
    "MemoryEditError",
    "ModelError",
    "ToolDefinitionError",
    "ToolError",
    "ToolRoundsExceeded",
    "ToolnexusError",
]


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

    `kind` is one of `"invalid"`, `"not_found"`, `"ambiguous"`, `"full"`, `"rejected"`
    or `"io"` (the disk refused the write), so callers such as the CLI can react
    without parsing the message.
    """

    kind: str

    def __init__(self, message: str, *, kind: str) -> None:
        self.kind = kind
        super().__init__(message)


class HomeError(_ProblemList):
    """A home directory breaks a rule; `problems` names each file, line or key and rule."""


class AgentError(ToolnexusError):
    """An agent cannot be wired, or its conversation cannot go on."""


class ModelError(AgentError):
    """A model provider failed, or answered something the loop cannot use."""


class ToolRoundsExceeded(AgentError):
    """The model kept asking for tools beyond the session's round cap."""
