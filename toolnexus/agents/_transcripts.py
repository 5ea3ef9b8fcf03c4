"""Saved conversations in the home's state database, and full-text search over them
and the memory history.

A session is a row (`sessions`) and its messages are rows (`messages`) keyed by
the session and a sequence number given inside the writing transaction, so two
processes appending at once never collide and nothing is lost. Each message
keeps its chat-format JSON (what export writes) and, apart, the text recall
searches; an FTS5 index over that text (and one over the memory history, both
kept by triggers) answers queries ranked by bm25. Plain records in and out:
the conversation types are a layer above.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ._state import State

__all__ = [
    "Found",
    "Meta",
    "Record",
    "Stored",
    "fts_queries",
    "has_any",
    "import_conversation",
    "latest",
    "match_ids",
    "messages",
    "now",
    "remove",
    "save",
    "search",
    "sessions",
    "sessions_holding",
]

#: The longest title kept: the first line of the first thing the person said.
TITLE_CHARS = 80
#: Words of context a snippet shows around what matched.
SNIPPET_TOKENS = 24
#: At most this many query terms are searched (the rest are ignored).
MAX_TERMS = 32


def now() -> str:
    """The current UTC time as the state database writes it (sortable text)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass(frozen=True, slots=True)
class Record:
    """One message to save: its chat-format JSON, what recall searches, and its usage."""

    role: str
    name: str
    data: str
    text: str
    is_error: bool = False
    usage: tuple[int, int, int, int] | None = None


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


def title_of(records: Sequence[Record]) -> str:
    """A title for a conversation: the first line of its first user message."""
    for record in records:
        if record.role == "user":
            for line in record.text.splitlines():
                line = " ".join(line.split())
                if line:
                    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
    return ""


def _insert(conn: object, session: str, time: str, records: Sequence[Record]) -> None:
    first = conn.execute(  # type: ignore[attr-defined]
        "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session = ?", (session,)
    ).fetchone()[0]
    conn.executemany(  # type: ignore[attr-defined]
        "INSERT INTO messages (session, seq, time, role, name, data, text, is_error, "
        "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (session, first + n, time, r.role, r.name, r.data, r.text, int(r.is_error))
            + (r.usage or (None, None, None, None))
            for n, r in enumerate(records, start=1)
        ],
    )


def save(
    state: State, *, session: str, model: str | None, soul: str, records: Sequence[Record]
) -> None:
    """Append `records` to a live session, creating its row on the first save."""
    time = now()
    title = title_of(records)
    with state.transaction() as conn:
        updated = conn.execute(
            "UPDATE sessions SET ended = ?, model = COALESCE(?, model), soul = ?, "
            "title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
            (time, model, soul, title, session),
        ).rowcount
        if not updated:
            conn.execute(
                "INSERT INTO sessions (id, started, ended, model, soul, title, origin) "
                "VALUES (?, ?, ?, ?, ?, ?, 'live')",
                (session, time, time, model, soul, title),
            )
        _insert(conn, session, time, records)


def import_conversation(
    state: State, *, session: str, records: Sequence[Record], digest: str, title: str = ""
) -> str | None:
    """Save an imported conversation; the id it was imported as before, if it was."""
    time = now()
    with state.transaction() as conn:
        row = conn.execute("SELECT id FROM sessions WHERE digest = ?", (digest,)).fetchone()
        if row is not None:
            return str(row[0])
        conn.execute(
            "INSERT INTO sessions (id, started, ended, model, soul, title, origin, digest) "
            "VALUES (?, ?, ?, NULL, '', ?, 'import', ?)",
            (session, time, time, title or title_of(records), digest),
        )
        _insert(conn, session, time, records)
    return None


#: A session's row with its message count and summed usage (FROM sessions s).
_META = (
    "s.id, s.started, s.ended, s.model, s.soul, s.title, s.origin, "
    "(SELECT COUNT(*) FROM messages m WHERE m.session = s.id), "
    + ", ".join(
        f"(SELECT COALESCE(SUM(m.{column}), 0) FROM messages m WHERE m.session = s.id)"
        for column in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    )
)


def _meta(row: Sequence[Any]) -> Meta:
    id, started, ended, model, soul, title, origin, count, a, b, c, d = row
    usage = (int(a), int(b), int(c), int(d))
    return Meta(id, started, ended, model, soul, title, origin, int(count), usage)


def sessions(state: State, *, limit: int | None = None) -> list[Meta]:
    """Saved sessions, the most recently started first."""
    with state.reading() as conn:
        rows = conn.execute(
            f"SELECT {_META} FROM sessions s ORDER BY s.started DESC, s.id DESC LIMIT ?",
            (-1 if limit is None else limit,),
        ).fetchall()
    return [_meta(row) for row in rows]


def latest(state: State) -> Meta | None:
    """The session whose last message was saved most recently, or None."""
    with state.reading() as conn:
        row = conn.execute(
            f"SELECT {_META} FROM sessions s ORDER BY s.ended DESC, s.started DESC LIMIT 1"
        ).fetchone()
    return None if row is None else _meta(row)


def match_ids(state: State, prefix: str) -> list[str]:
    """The ids of saved sessions that start with `prefix` (an exact id matches alone)."""
    with state.reading() as conn:
        if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (prefix,)).fetchone():
            return [prefix]
        rows = conn.execute(
            "SELECT id FROM sessions WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 10",
            (len(prefix), prefix),
        ).fetchall()
    return [str(row[0]) for row in rows]


def meta(state: State, session: str) -> Meta | None:
    """One saved session's row, or None."""
    with state.reading() as conn:
        row = conn.execute(
            f"SELECT {_META} FROM sessions s WHERE s.id = ?",
            (session,),
        ).fetchone()
    return None if row is None else _meta(row)


def messages(state: State, session: str) -> list[Stored]:
    """A saved session's messages, in order."""
    with state.reading() as conn:
        rows = conn.execute(
            "SELECT seq, time, role, name, data, is_error, input_tokens, output_tokens, "
            "cache_read_tokens, cache_write_tokens FROM messages WHERE session = ? ORDER BY seq",
            (session,),
        ).fetchall()
    return [
        Stored(
            seq,
            time,
            role,
            name,
            data,
            bool(is_error),
            None if usage[0] is None else tuple(int(n or 0) for n in usage),  # type: ignore[arg-type]
        )
        for seq, time, role, name, data, is_error, *usage in rows
    ]


def remove(state: State, session: str) -> int:
    """Delete a saved session and its messages for good; how many messages it had."""
    with state.transaction() as conn:
        count = conn.execute("DELETE FROM messages WHERE session = ?", (session,)).rowcount
        conn.execute("DELETE FROM sessions WHERE id = ?", (session,))
        # The search index drops a deleted text only when its segments merge: merge now.
        conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")
    state.checkpoint()
    return int(count)


def sessions_holding(state: State, texts: Sequence[str]) -> list[str]:
    """The ids of saved sessions with a message that contains one of `texts` (any case)."""
    found: set[str] = set()
    with state.reading() as conn:
        for text in texts:
            if not _WORDY.search(text):
                continue
            phrase = '"' + text.replace('"', '""') + '"'
            rows = conn.execute(
                "SELECT m.session, m.text FROM messages_fts "
                "JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?",
                (phrase,),
            )
            found.update(str(s) for s, body in rows if text.casefold() in body.casefold())
    return sorted(found)


def has_any(state: State) -> bool:
    """Whether there is anything to recall: a saved session or a memory change."""
    with state.reading() as conn:
        row = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM memory_changes)"
        ).fetchone()
    return bool(row[0])


_WORDY = re.compile(r"\w")
_SESSION_IN_SOURCE = re.compile(r"\bsession=(\S+)")


def fts_queries(text: str) -> tuple[str, str] | None:
    """FTS5 queries for what a person typed: all the words, then any of them.

    Each whitespace-separated chunk becomes a quoted phrase, so nothing the user
    types is FTS syntax (`NEAR`, `-`, `(`, `:` are words or nothing); a chunk
    ending in `*` is a prefix term. None when the text has no word at all.
    """
    terms: list[str] = []
    for chunk in text.replace("\x00", " ").split():  # SQLite ends a query at a NUL
        if not _WORDY.search(chunk):
            continue
        prefix = chunk.endswith("*")
        term = '"' + chunk.replace('"', '""') + '"' + ("*" if prefix else "")
        if term not in terms:
            terms.append(term)
    terms = terms[:MAX_TERMS]
    if not terms:
        return None
    return " ".join(terms), " OR ".join(terms)


def search(state: State, query: str, *, limit: int, exclude: str | None = None) -> list[Found]:
    """The best `limit` hits for FTS5 `query` among saved messages (leaving out the
    session `exclude`) and the memory history, best first."""
    with state.reading() as conn:
        rows = conn.execute(
            "SELECT m.id, m.session, m.time, m.role, m.text, "
            f"snippet(messages_fts, 0, '', '', '…', {SNIPPET_TOKENS}), messages_fts.rank "
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            "WHERE messages_fts MATCH ? AND m.session IS NOT ? "
            "ORDER BY messages_fts.rank LIMIT ?",
            (query, exclude, limit),
        ).fetchall()
        found = [
            Found("message", ref, session, time, role, snippet, text, rank)
            for ref, session, time, role, text, snippet, rank in rows
        ]
        rows = conn.execute(
            "SELECT c.id, c.source, c.time, c.target, c.action, "
            "COALESCE(c.before, '') || char(10) || COALESCE(c.after, ''), "
            f"snippet(memory_changes_fts, -1, '', '', '…', {SNIPPET_TOKENS}), "
            "memory_changes_fts.rank "
            "FROM memory_changes_fts JOIN memory_changes c ON c.id = memory_changes_fts.rowid "
            "WHERE memory_changes_fts MATCH ? ORDER BY memory_changes_fts.rank LIMIT ?",
            (query, limit),
        ).fetchall()
    for ref, source, time, target, action, text, snippet, rank in rows:
        mark = _SESSION_IN_SOURCE.search(source)
        role = f"memory {target} {action}"
        found.append(
            Found("memory", ref, mark.group(1) if mark else None, time, role, snippet, text, rank)
        )
    found.sort(key=lambda f: f.time, reverse=True)  # equal ranks: the newest first
    found.sort(key=lambda f: f.rank)  # bm25: lower is better
    return found[:limit]
