"""The OpenAI chat format: the one translation between the conversation types and
chat-completions messages.

The OpenAI adapter sends messages in this format; saved conversations keep each
message in it, so `sessions export` writes it and `sessions import` reads it
from any tool that speaks it. Pure functions: nothing here does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ._base import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage

__all__ = [
    "CHAT_ROLES",
    "chat_problem",
    "chat_text",
    "decode_arguments",
    "from_chat",
    "to_chat",
]

#: The roles a chat-format message may have. `system` and `developer` messages are
#: kept in a saved conversation but never resumed: a resumed conversation starts
#: from a fresh soul.
CHAT_ROLES = ("system", "developer", "user", "assistant", "tool")


def to_chat(message: Message) -> dict[str, Any]:
    """One message in the chat format (what the OpenAI endpoint is sent)."""
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.text}
    if isinstance(message, ToolResultMessage):
        return {"role": "tool", "tool_call_id": message.call_id, "content": message.output}
    if not message.tool_calls:
        # Chat completions rejects an assistant message with neither content nor calls.
        return {"role": "assistant", "content": message.text}
    return {
        "role": "assistant",
        "content": message.text or None,
        "tool_calls": [
            {
                "id": tc.id,
                "type": "function",
                "function": {
                    "name": tc.name,
                    "arguments": (
                        tc.raw_arguments
                        if tc.raw_arguments is not None and tc.raw_arguments.strip()
                        # Blank text (some servers' "no arguments") goes back as a JSON object.
                        else json.dumps(dict(tc.arguments), ensure_ascii=False)
                    ),
                },
            }
            for tc in message.tool_calls
        ],
    }


def decode_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Decode a tool call's argument text into an object, or say why it is not one.

    Empty text means "no arguments": some servers send "" for tools without parameters.
    """
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        shown = raw if len(raw) <= 200 else raw[:197] + "..."
        return {}, f"invalid arguments: not valid JSON ({exc.msg} at position {exc.pos}): {shown}"
    except RecursionError:
        return {}, "invalid arguments: nested too deep to read"
    if not isinstance(value, dict):
        return {}, f"invalid arguments: expected a JSON object, got {type(value).__name__}"
    return value, None


def chat_problem(value: object) -> str | None:
    """Why `value` is not a chat-format message (None: it is one)."""
    if not isinstance(value, dict):
        return f"expected a JSON object (one message), got {_kind(value)}"
    role = value.get("role")
    if role not in CHAT_ROLES:
        return f"role: expected one of {', '.join(CHAT_ROLES)}, got {role!r}"
    content = value.get("content")
    parts = isinstance(content, list) and all(isinstance(p, dict) for p in content)
    if content is not None and not isinstance(content, str) and not parts:
        return f"content: expected text, a list of parts or null, got {_kind(content)}"
    if role == "tool":
        call_id = value.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            return "tool_call_id: a tool message must name the call it answers"
    calls = value.get("tool_calls")
    if calls is not None:
        if role != "assistant":
            return f"tool_calls: only an assistant message makes tool calls, not {role!r}"
        if not isinstance(calls, list):
            return f"tool_calls: expected a list, got {_kind(calls)}"
        for n, tc in enumerate(calls, start=1):
            function = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                return f"tool_calls: call {n}: expected {{id, type, function: {{name, arguments}}}}"
            if not isinstance(function.get("arguments", ""), str):
                return f"tool_calls: call {n}: arguments must be JSON text (a string)"
    elif role == "assistant" and content is None:
        return "content: an assistant message without tool calls needs content"
    return None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def chat_text(value: Mapping[str, Any]) -> str:
    """The words of a chat-format message: its text, and the text values of its tool
    calls' arguments."""
    text = _content_text(value.get("content"))
    words = [text] if text else []
    for tc in value.get("tool_calls") or ():
        arguments, _ = decode_arguments(tc["function"].get("arguments") or "")
        words.extend(_strings(arguments))
    return "\n".join(words)


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def from_chat(items: Iterable[tuple[Mapping[str, Any], bool]]) -> list[Message]:
    """Messages a session can continue from, given chat-format messages and, for each,
    whether it is a failed tool result.

    System and developer messages are left out (a resumed conversation starts from a
    fresh soul); a tool result that answers no earlier call is left out, and a call
    left without a result gets an error result saying so, so the history is one a
    provider accepts.
    """
    out: list[Message] = []
    open_calls: dict[str, str] = {}  # id -> name, for the calls awaiting a result

    def close_open() -> None:
        for call_id, name in open_calls.items():
            out.append(
                ToolResultMessage(
                    call_id=call_id,
                    name=name,
                    output="cancelled: no result was saved for this tool call",
                    is_error=True,
                )
            )
        open_calls.clear()

    for value, is_error in items:
        role = value.get("role")
        if role == "tool":
            call_id = value.get("tool_call_id", "")
            name = open_calls.pop(call_id, None)
            if name is not None:
                output = _content_text(value.get("content"))
                out.append(
                    ToolResultMessage(call_id=call_id, name=name, output=output, is_error=is_error)
                )
            continue
        if role not in ("user", "assistant"):
            continue
        close_open()
        text = _content_text(value.get("content"))
        if role == "user":
            out.append(UserMessage(text))
            continue
        calls = []
        for n, tc in enumerate(value.get("tool_calls") or (), start=1):
            function = tc["function"]
            raw = function.get("arguments") or ""
            arguments, error = decode_arguments(raw)
            call_id = tc.get("id") or f"call_{len(out) + 1}_{n}"
            calls.append(
                ToolCall(
                    function["name"],
                    arguments,
                    id=call_id,
                    raw_arguments=raw,
                    arguments_error=error,
                )
            )
            open_calls[call_id] = function["name"]
        out.append(AssistantMessage(text, tool_calls=tuple(calls)))
    close_open()
    return out
