"""Saved conversations as both stores keep them: plain records in and out.

A session is a row and its messages are rows keyed by the session and a
sequence number; each message keeps its chat-format JSON (what export writes)
and, apart, the text recall searches. The conversation types are a layer above
(`conversations`); these are the rows, the same in the folder and in a database.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "SNIPPET_TOKENS",
    "TITLE_CHARS",
    "Found",
    "Imported",
    "Line",
    "Match",
    "Meta",
    "Record",
    "Stored",
    "change_found",
    "import_each",
    "scrub",
    "title_of",
]


#: The longest title kept: the first line of the first thing the person said.
TITLE_CHARS = 80


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """Text either store can keep: a lone surrogate (half an emoji cut by a server, bytes
    a terminal could not decode) or a NUL (which PostgreSQL text refuses) becomes U+FFFD
    instead of failing the save, so a conversation reads the same from both."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


@dataclass(frozen=True, slots=True)
class Record:
    """One message to save: its chat-format JSON, what recall searches, and its usage;
    `time`, when the message carries its own (an imported one may), else the save's."""

    role: str
    name: str
    data: str
    text: str
    is_error: bool = False
    usage: tuple[int, int, int, int] | None = None
    time: str | None = None


@dataclass(frozen=True, slots=True)
class Meta:
    """A saved session as listed: `messages` is how many it holds."""

    id: str
    started: str
    ended: str
    model: str | None
    soul: str
    title: str
    origin: str
    messages: int
    usage: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Stored:
    """A saved message, as read back."""

    seq: int
    time: str
    role: str
    name: str
    data: str
    is_error: bool
    usage: tuple[int, int, int, int] | None


def title_of(records: Sequence[Record]) -> str:
    """A title for a conversation: the first line of its first user message."""
    for record in records:
        if record.role == "user":
            for line in record.text.splitlines():
                line = " ".join(line.split())
                if line:
                    line = scrub(line)
                    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
    return ""


@dataclass(frozen=True, slots=True)
class Imported:
    """One conversation to import: a new id for it, its rows, and the digest of its
    messages (the same messages are imported once)."""

    session: str
    records: Sequence[Record]
    digest: str
    title: str = ""


#: Words of context a snippet shows around what matched.
SNIPPET_TOKENS = 32


@dataclass(frozen=True, slots=True)
class Found:
    """One search hit before it is shown: `kind` is `message` or `memory`; `ref` is the
    message's row id or the change's id; `text` is the whole text it was found in."""

    kind: str
    ref: int
    session: str | None
    time: str
    role: str
    snippet: str
    text: str
    rank: float


@dataclass(frozen=True, slots=True)
class Match:
    """A saved message that holds one of the forms recall looks for: where it is, when it
    was said, and its length in characters (what the ranking weighs)."""

    session: str
    seq: int
    time: str
    chars: int


@dataclass(frozen=True, slots=True)
class Line:
    """A saved message as recall shows it: who said it (`name`: the speaker a chat file
    named, else '') and its text."""

    session: str
    seq: int
    time: str
    role: str
    name: str
    text: str


_SESSION_IN_SOURCE = re.compile(r"\bsession=(\S+)")


def change_found(row: Sequence[object]) -> Found:
    """A memory change as recall finds it, from its row (`id, source, time, target, action,
    text`): the session it was made in is read from its source."""
    ref, source, time, target, action, text = row
    mark = _SESSION_IN_SOURCE.search(str(source))
    role = f"memory {target} {action}"
    session = mark.group(1) if mark else None
    return Found("memory", int(str(ref)), session, str(time), role, "", str(text), 0.0)


def import_each(
    batch: Sequence[Imported],
    *,
    known: Callable[[str], str | None],
    insert: Callable[[Imported], None],
) -> list[tuple[str, bool]]:
    """The import rule both stores share; for each conversation, `(id, new)`.

    A conversation whose messages were imported before (its digest is `known` to
    the store, or came earlier in this batch) keeps the id it got then and is not
    saved again; each new one is `insert`ed under its own id.
    """
    out: list[tuple[str, bool]] = []
    seen: dict[str, str] = {}
    for item in batch:
        before = seen.get(item.digest) or known(item.digest)
        if before is not None:
            out.append((before, False))
            continue
        insert(item)
        seen[item.digest] = item.session
        out.append((item.session, True))
    return out
