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

import sqlite3
from collections.abc import Sequence
from typing import Any

from .._records import now
from .._sessions import Imported, Meta, Record, Stored, import_each, scrub, title_of
from ._state import State

__all__ = [
    "has_any",
    "import_conversations",
    "latest",
    "match_ids",
    "messages",
    "remove",
    "save",
    "secure_delete",
    "sessions",
]


_COLUMNS = 12
_ROW = "(" + ", ".join("?" * _COLUMNS) + ")"


def _rows_per_statement(conn: sqlite3.Connection) -> int:
    """How many message rows fit in one INSERT (SQLite caps the parameters per statement)."""
    limit = 999  # the smallest cap any SQLite has had
    getlimit = getattr(conn, "getlimit", None)  # Python 3.11+
    which = getattr(sqlite3, "SQLITE_LIMIT_VARIABLE_NUMBER", None)
    if getlimit is not None and which is not None:
        limit = getlimit(which)
    return max(1, min(limit // _COLUMNS, 2000))


def _rows(session: str, first: int, time: str, records: Sequence[Record]) -> list[tuple[Any, ...]]:
    return [
        (
            session,
            first + n,
            r.time or time,
            r.role,
            r.name,
            scrub(r.data),
            scrub(r.text),
            int(r.is_error),
        )
        + (r.usage or (None, None, None, None))
        for n, r in enumerate(records, start=1)
    ]


def _insert(conn: sqlite3.Connection, session: str, time: str, records: Sequence[Record]) -> None:
    """Append `records` to `session`'s messages, numbered after the last one saved."""
    first = conn.execute(
        "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session = ?", (session,)
    ).fetchone()[0]
    _insert_rows(conn, _rows(session, first, time, records))


def _insert_rows(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert message rows as multi-row INSERTs: the search index's trigger then writes
    one index segment per statement, not one per message, which is several times faster."""
    step = _rows_per_statement(conn)
    for start in range(0, len(rows), step):
        chunk = rows[start : start + step]
        conn.execute(
            "INSERT INTO messages (session, seq, time, role, name, data, text, is_error, "
            "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens) VALUES "
            + ", ".join([_ROW] * len(chunk)),
            [value for row in chunk for value in row],
        )


def save(
    state: State,
    *,
    session: str,
    model: str | None,
    soul: str,
    records: Sequence[Record],
    create: bool = True,
) -> bool:
    """Append `records` to a live session, creating its row when `create`; False (and
    nothing saved) when the row is gone and not `create`: the conversation was removed."""
    time = now()
    title = title_of(records)
    with state.transaction() as conn:
        updated = conn.execute(
            "UPDATE sessions SET ended = ?, model = COALESCE(?, model), soul = ?, "
            "title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
            (time, model, soul, title, session),
        ).rowcount
        if not updated:
            if not create:
                return False
            conn.execute(
                "INSERT INTO sessions (id, started, ended, model, soul, title, origin) "
                "VALUES (?, ?, ?, ?, ?, ?, 'live')",
                (session, time, time, model, soul, title),
            )
        _insert(conn, session, time, records)
    return True


def import_conversations(state: State, batch: Sequence[Imported]) -> list[tuple[str, bool]]:
    """Save imported conversations in one transaction; for each, `(id, new)`: a
    conversation imported before keeps the id it got then and is not saved again."""
    time = now()
    rows: list[tuple[Any, ...]] = []
    with state.transaction() as conn:

        def known(digest: str) -> str | None:
            row = conn.execute("SELECT id FROM sessions WHERE digest = ?", (digest,)).fetchone()
            return None if row is None else str(row[0])

        def insert(item: Imported) -> None:
            times = [r.time for r in item.records if r.time]  # its own, when it has them
            started, ended = (min(times), max(times)) if times else (time, time)
            conn.execute(
                "INSERT INTO sessions (id, started, ended, model, soul, title, origin, digest) "
                "VALUES (?, ?, ?, NULL, '', ?, 'import', ?)",
                (item.session, started, ended, item.title or title_of(item.records), item.digest),
            )
            rows.extend(_rows(item.session, 0, time, item.records))  # a new id: seq from 1

        out = import_each(batch, known=known, insert=insert)
        _insert_rows(conn, rows)
    return out


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
        prefix = scrub(prefix)
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
        secure = secure_delete(conn, "messages_fts")
        count = conn.execute("DELETE FROM messages WHERE session = ?", (session,)).rowcount
        conn.execute("DELETE FROM sessions WHERE id = ?", (session,))
        if not secure:  # the index drops a deleted text only when its segments merge
            conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")
    state.checkpoint()
    return int(count)


def secure_delete(conn: sqlite3.Connection, table: str) -> bool:
    """Have the FTS5 index `table` remove a deleted row's tokens at once (SQLite 3.42+);
    False where SQLite cannot, and the caller must merge the index (`optimize`) instead,
    which rewrites all of it."""
    try:
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('secure-delete', 1)")
    except sqlite3.OperationalError:
        return False
    return True


def has_any(state: State) -> bool:
    """Whether there is anything to recall: a saved session or a memory change."""
    with state.reading() as conn:
        row = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM memory_changes)"
        ).fetchone()
    return bool(row[0])
