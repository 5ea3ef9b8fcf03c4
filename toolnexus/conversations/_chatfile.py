"""Conversations as rows: messages to what a transcript saves, and JSONL chat files in.

Pure translation and file reading, shared by the live `Transcript` and by
imports: a message's chat-format JSON, the words recall searches, its usage;
a JSONL file's messages, each checked, with its line as written.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ..errors import ConversationError, HomeFileError
from ..home._door import read_fd
from ..models._base import AssistantMessage, Message, ToolResultMessage, Usage
from ..models._chat import chat_problem, chat_text, to_chat
from ..store._sessions import Imported, Record, scrub

__all__ = [
    "TIME_KEYS",
    "imported",
    "message_time",
    "new_session_id",
    "read_chat_file",
    "read_chat_lines",
    "time_problem",
    "to_records",
]


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


#: The most one conversation file may hold; a bigger one is refused before it is read.
IMPORT_CAP = 32 * 2**20
#: How deep a message's JSON may nest, tool-call arguments included (a chat message
#: needs five levels at most).
MAX_NESTING = 64
#: How many problems an import lists; the rest are counted.
SHOWN_PROBLEMS = 20
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO is refused, never waited on
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def _read_text(path: str | os.PathLike[str]) -> str:
    """A conversation file's text: a regular file (a link to one is followed), at most
    `IMPORT_CAP` bytes, UTF-8 (a BOM allowed)."""
    shown = os.fspath(path)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENXIO:
            reason = "a socket, not a regular file"
        raise ConversationError(f"{shown}: cannot be read: {reason}", kind="invalid") from None
    try:
        data, _ = read_fd(fd, shown, IMPORT_CAP)
    except HomeFileError as exc:
        why = {
            "folder": "is a folder, not a conversation file",
            "special": "is not a regular file (a FIFO, device or socket): refused",
            "too_large": f"is over the import cap of {IMPORT_CAP:,} bytes (one conversation "
            "per file: split a bigger one)",
        }.get(exc.reason, exc.reason)
        raise ConversationError(f"{shown}: {why}", kind="invalid") from None
    except OSError as exc:
        raise ConversationError(
            f"{shown}: cannot be read: {exc.strerror or exc}", kind="invalid"
        ) from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConversationError(
            f"{shown}: not UTF-8 text (byte {exc.start + 1:,} cannot be read)", kind="invalid"
        ) from None


def _too_deep(value: object, limit: int = MAX_NESTING) -> bool:
    """Whether `value` (or a tool call's arguments in it) nests deeper than `limit`."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _arguments_too_deep(value: object) -> bool:
    calls = value.get("tool_calls") if isinstance(value, dict) else None
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        raw = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(raw, str) and raw.count("[") + raw.count("{") > MAX_NESTING:
            try:
                if _too_deep(_DECODER.decode(raw), MAX_NESTING):
                    return True
            except (ValueError, RecursionError):
                return True
    return False


#: The keys a chat file may give a message's time under (the first found is used).
TIME_KEYS = ("timestamp", "time", "created_at")


def message_time(value: Mapping[str, Any]) -> str | None:
    """When a message was said, if it says (`timestamp`, `time` or `created_at`: ISO 8601
    text, UTC unless it gives an offset, or seconds since 1970), as the store keeps times."""
    for key in TIME_KEYS:
        given = value.get(key)
        if given is None:
            continue
        if isinstance(given, bool):
            return None
        if isinstance(given, (int, float)):
            if given != given or given in (float("inf"), float("-inf")):
                raise ValueError("not a number")
            seconds = given / 1000 if abs(given) > 1e11 else given  # milliseconds, as JavaScript
            moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
        elif isinstance(given, str):
            moment = datetime.fromisoformat(given.strip().replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
        else:
            return None
        moment = moment.astimezone(timezone.utc)
        if not 1000 <= moment.year <= 9999:  # the store's times sort as text: four digits
            raise ValueError(f"year {moment.year} is out of range (1000 to 9999)")
        return f"{moment.year:04d}" + moment.strftime("-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return None


def time_problem(value: object) -> str | None:
    """Why a message's own time cannot be read (None: it can, or it gives none)."""
    if not isinstance(value, dict):
        return None
    for key in TIME_KEYS:
        given = value.get(key)
        if given is None:
            continue
        try:
            if isinstance(given, bool) or not isinstance(given, (int, float, str)):
                raise TypeError
            message_time({key: given})
        except (TypeError, ValueError, OverflowError, OSError):
            return (
                f"{key}: expected a time (ISO 8601 text such as 2023-05-08T13:56:00Z, or "
                f"seconds since 1970), got {str(given)[:40]!r}"
            )
        return None
    return None


def _lines(text: str) -> Iterator[str]:
    """The lines of `text`, one at a time (a file of millions of lines is never split into
    a list): they end at \n alone (and \r\n); U+2028 and friends are text in a JSON string."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        yield text[start:end].removesuffix("\r")
        start = end + 1


def read_chat_lines(path: str | os.PathLike[str]) -> list[tuple[str, Any]]:
    """`read_chat_file`, keeping each message's line as written."""
    shown = os.fspath(path)
    text = _read_text(path)
    values: list[tuple[str, Any]] = []
    problems: list[str] = []
    more = 0

    def problem(text: str) -> None:
        nonlocal more
        if len(problems) < SHOWN_PROBLEMS:
            problems.append(text if len(text) <= 300 else text[:299] + "…")
        else:
            more += 1

    for n, line in enumerate(_lines(text), start=1):
        line = line.strip()
        if not line:
            continue
        try:
            value = _DECODER.decode(line)
        except json.JSONDecodeError as exc:
            problem(f"{shown}:{n}: not JSON ({exc.msg}: column {exc.colno})")
            continue
        except (ValueError, RecursionError) as exc:  # NaN, a huge number, deep nesting
            problem(f"{shown}:{n}: not JSON a chat message can hold ({exc})")
            continue
        if _too_deep(value) or _arguments_too_deep(value):
            problem(f"{shown}:{n}: nested deeper than {MAX_NESTING} levels")
            continue
        why = chat_problem(value) or time_problem(value)
        if why is not None:
            problem(f"{shown}:{n}: {why}")
        values.append((line, value))
    if not values and not problems:
        problems.append(f"{shown}: no messages: a conversation has at least one")
    if more:
        problems.append(f"{shown}: and {more:,} more line{'s' if more > 1 else ''} with problems")
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
            time=message_time(value),
        )
        for value, data in zip(messages, datas, strict=True)
    ]
    digest = hashlib.sha256("\n".join(datas).encode()).hexdigest()
    return Imported(new_session_id(), records, digest, title)
