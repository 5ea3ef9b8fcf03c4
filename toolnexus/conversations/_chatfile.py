"""Conversations as rows: messages to what a transcript saves, and JSONL chat files in.

Pure translation and file reading, shared by the live `Transcript` and by
imports: a message's chat-format JSON, the words recall searches, its usage;
a JSONL file's messages, each checked, with its line as written.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ConversationError
from ..models._base import AssistantMessage, Message, ToolResultMessage, Usage
from ..models._chat import chat_problem, chat_text, to_chat
from ..store._sessions import Imported, Record, scrub

__all__ = ["imported", "new_session_id", "read_chat_file", "read_chat_lines", "to_records"]


def new_session_id() -> str:
    """A fresh session id: 12 hex digits."""
    return uuid.uuid4().hex[:12]


def to_records(messages: Iterable[Message]) -> list[Record]:
    """The rows to save for `messages`: the chat format, what recall searches, usage."""
    records = []
    for message in messages:
        data = to_chat(message)
        usage = message.usage if isinstance(message, AssistantMessage) else None
        if isinstance(message, ToolResultMessage):
            name = message.name
        else:  # a call to recall marks its message: recall never finds its own queries
            calls = message.tool_calls if isinstance(message, AssistantMessage) else ()
            name = "recall" if any(tc.name == "recall" for tc in calls) else ""
        records.append(
            Record(
                role=message.role,
                name=name,
                data=_dumps(data),
                # Indexed whole, so `forget` can name it; `search` leaves out recall's own
                # calls and results (`name` recall): they are earlier hits.
                text=chat_text(data),
                is_error=isinstance(message, ToolResultMessage) and message.is_error,
                usage=None if usage is None else _usage_tuple(usage),
            )
        )
    return records


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _usage_tuple(usage: Usage) -> tuple[int, int, int, int]:
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
    )


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


#: One decoder for every line (`json.loads` with an option builds one per call).
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def read_chat_file(path: str | os.PathLike[str]) -> list[Any]:
    """The messages of a JSONL conversation file, one chat-format message per line
    (blank lines skipped).

    Raises:
        ConversationError: (kind `invalid`) naming the file, each bad line and its
            rule, or why the file cannot be read.
    """
    return [value for _, value in read_chat_lines(path)]


def read_chat_lines(path: str | os.PathLike[str]) -> list[tuple[str, Any]]:
    """`read_chat_file`, keeping each message's line as written."""
    shown = os.fspath(path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            # Lines end at \n alone (and \r\n): U+2028 and friends are text in a JSON string.
            lines = [line.removesuffix("\r") for line in fh.read().split("\n")]
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConversationError(f"{shown}: cannot be read: {reason}", kind="invalid") from None
    values: list[tuple[str, Any]] = []
    problems = []
    for n, line in enumerate(lines, start=1):
        line = line.strip()
        if not line:
            continue
        try:
            value = _DECODER.decode(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{shown}:{n}: not JSON ({exc.msg}: column {exc.colno})")
            continue
        except (ValueError, RecursionError) as exc:  # NaN, a huge number, deep nesting
            problems.append(f"{shown}:{n}: not JSON a chat message can hold ({exc})")
            continue
        why = chat_problem(value)
        if why is not None:
            problems.append(f"{shown}:{n}: {why}")
        values.append((line, value))
    if not values and not problems:
        problems.append(f"{shown}: no messages: a conversation has at least one")
    if problems:
        raise ConversationError.of(problems, kind="invalid")
    return values


def imported(
    messages: Sequence[Mapping[str, Any]], title: str = "", lines: Sequence[str] | None = None
) -> Imported:
    """An import's rows (the messages are already checked), its digest and a new id.

    `lines` are the messages as a file wrote them (one JSON text each), kept as they
    are, so an export gives back the file's own lines.
    """
    datas = [scrub(_dumps(value)) for value in messages] if lines is None else lines
    records = [
        Record(
            role=str(value["role"]),
            name="",
            data=data,
            text=chat_text(value) if value["role"] not in ("system", "developer") else "",
        )
        for value, data in zip(messages, datas, strict=True)
    ]
    digest = hashlib.sha256("\n".join(datas).encode()).hexdigest()
    return Imported(new_session_id(), records, digest, title)
