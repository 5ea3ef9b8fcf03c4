"""A deterministic model that replays planned turns, for tests, tutorials and examples.

It never guesses: each request consumes the next turn of the script, and a
script that runs out is a loud `ModelError`, so a test that talks longer than
planned fails where it happens.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from ..errors import ModelError
from ._base import AssistantMessage, ModelRequest, ToolCall, ToolResultMessage

__all__ = ["ScriptedModel", "Turn", "TurnValue", "call"]

#: One planned answer: text, one tool call, several tool calls in one turn, a full
#: message, or a function of the request returning any of those (sync or async).
TurnValue: TypeAlias = str | ToolCall | Sequence[ToolCall] | AssistantMessage
Turn: TypeAlias = TurnValue | Callable[[ModelRequest], TurnValue | Awaitable[TurnValue]]


def call(name: str, arguments: Mapping[str, Any] | None = None, /, **kwargs: Any) -> ToolCall:
    """Plan a tool call: `call("memory", action="add", text="...")`.

    Arguments go in a mapping, as keywords, or both; a mapping is the way to pass
    a key that is a Python keyword, such as the memory tool's `with`.
    """
    return ToolCall(name, {**(arguments or {}), **kwargs})


class ScriptedModel:
    """Replay `turns` in order, one per request, and record every request received.

    Tool calls without an id get a stable one (`call_<turn>_<index>`), so
    histories are the same on every run. `requests` lets a test assert exactly
    what the model was shown (the system prompt, the history, the tools).
    """

    def __init__(self, turns: Iterable[Turn]) -> None:
        self._turns: list[Turn] = list(turns)
        self._next = 0
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        """How many planned turns are left."""
        return len(self._turns) - self._next

    async def complete(self, request: ModelRequest, /) -> AssistantMessage:
        """Answer with the next planned turn.

        Raises:
            ModelError: when the script has no turn left, or a turn is not one of
                the accepted shapes.
        """
        self.requests.append(request)
        index = self._next
        if index >= len(self._turns):
            raise ModelError(
                f"ScriptedModel ran out of turns: request {index + 1} arrived but the "
                f"script plans {len(self._turns)}; add a turn for it "
                f"(last message: {_describe_last(request)})"
            )
        self._next += 1
        turn = self._turns[index]
        value: object = turn
        if callable(turn) and not isinstance(turn, (ToolCall, AssistantMessage)):
            value = turn(request)
            if inspect.isawaitable(value):
                value = await value
        return _to_message(value, index)


def _to_message(value: object, index: int) -> AssistantMessage:
    """Normalise a planned turn into an assistant message with stable call ids."""
    if isinstance(value, str):
        return AssistantMessage(value)
    if isinstance(value, AssistantMessage):
        message = value
    elif isinstance(value, ToolCall):
        message = AssistantMessage(tool_calls=(value,))
    elif (
        isinstance(value, Sequence) and value and all(isinstance(item, ToolCall) for item in value)
    ):
        message = AssistantMessage(tool_calls=tuple(value))
    else:
        raise ModelError(
            f"ScriptedModel turn {index + 1} is {value!r}: a turn is text, a ToolCall, a "
            "non-empty list of ToolCalls, an AssistantMessage, or a function of the "
            "request returning one of those"
        )
    if all(tc.id for tc in message.tool_calls):
        return message
    calls = tuple(
        tc if tc.id else dataclasses.replace(tc, id=f"call_{index + 1}_{n + 1}")
        for n, tc in enumerate(message.tool_calls)
    )
    return dataclasses.replace(message, tool_calls=calls)


def _describe_last(request: ModelRequest) -> str:
    if not request.messages:
        return "none"
    last = request.messages[-1]
    text = last.output if isinstance(last, ToolResultMessage) else last.text
    short = text if len(text) <= 60 else text[:57] + "..."
    return f"{last.role} {short!r}"
