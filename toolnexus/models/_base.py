"""The conversation as data, and the one-method protocol every model implements.

A model sees a `ModelRequest` (system prompt, history, tools) and answers with
an `AssistantMessage`: text, tool calls, or both. Messages are frozen so a
history handed to a model can never be edited behind the session's back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, Literal, Protocol, TypeAlias, runtime_checkable

from ..tools import Tool

__all__ = [
    "AssistantMessage",
    "Done",
    "Event",
    "Message",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "TextDelta",
    "ToolCall",
    "ToolFinished",
    "ToolResultMessage",
    "ToolStarted",
    "Usage",
    "UsageReport",
    "UserMessage",
]


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the person said."""

    role: ClassVar[Literal["user"]] = "user"

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool the model asks to run, with its decoded arguments.

    `raw_arguments` keeps the provider's exact argument text (adapters send it
    back verbatim); `arguments_error` says why that text could not be decoded into
    a JSON object, in which case the loop answers with an error result instead of
    running the tool, so the model can correct itself.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    _: KW_ONLY
    id: str = ""
    raw_arguments: str | None = None
    arguments_error: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one model response cost, when the provider says.

    `input_tokens` counts the prompt tokens neither read from nor written to the
    provider's prompt cache, so the four fields add up to everything billed.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """What the model answered: text, tool calls, or both; `usage` when the provider said."""

    role: ClassVar[Literal["assistant"]] = "assistant"

    text: str = ""
    _: KW_ONLY
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # Accept any sequence (a list is the natural thing to write) but store a tuple.
        calls: object = self.tool_calls
        if not isinstance(calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultMessage:
    """What a tool call returned, fed back to the model.

    `exception` is the object behind an unexpected tool failure: the model only
    reads `output`, but the developer can still inspect or re-raise it. It takes
    no part in equality or repr.
    """

    role: ClassVar[Literal["tool"]] = "tool"

    call_id: str
    name: str
    output: str
    is_error: bool = False
    exception: BaseException | None = field(default=None, compare=False, repr=False)


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage

#: A model's answer is an assistant message; the alias names it from the model's side.
ModelResponse: TypeAlias = AssistantMessage


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """Everything a model needs for one completion: system prompt, history, tools."""

    system: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()


@runtime_checkable
class Model(Protocol):
    """Anything that can answer a `ModelRequest`: one async method, so any provider fits.

    A model may also stream: a method `stream(request)` returning an async
    generator of `TextDelta`s, as the answer is produced, and then the whole
    `AssistantMessage`, last. `Session.stream` uses it when present; without it
    the answer arrives in one piece.
    """

    async def complete(self, request: ModelRequest, /) -> AssistantMessage:
        """Answer one request; raise `ModelError` when the provider fails."""
        ...


# -- what a streaming turn reports, as it happens -------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text, as the model produces it."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """The model asked for a tool call; it runs now."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call finished (`result.is_error` says how)."""

    call: ToolCall
    result: ToolResultMessage


@dataclass(frozen=True, slots=True)
class UsageReport:
    """The tokens one model response cost, as the provider reported them."""

    usage: Usage


@dataclass(frozen=True, slots=True)
class Done:
    """The turn is over: the model's final text, and the session's usage so far."""

    text: str
    usage: Usage


#: What `Session.stream` yields.
Event: TypeAlias = TextDelta | ToolStarted | ToolFinished | UsageReport | Done
