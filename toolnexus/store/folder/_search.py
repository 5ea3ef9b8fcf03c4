"""Full-text search over saved conversations and the memory history: what recall ranks.

Two FTS5 indexes, kept by triggers in the same database: one over saved
messages, one over memory changes. The store answers the ranking's questions
(`conversations/_rank.py`): which messages hold any form of one thing the query
looks for (`matching`), how many messages there are and how long they run
(`corpus`), and the messages around a hit (`lines`). What a person or a model
typed is never search syntax: each form becomes a quoted phrase (or a quoted
prefix).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from .._sessions import Found, Line, Match, change_found, scrub
from ._state import BUSY_MS, State

__all__ = [
    "corpus",
    "fts_query",
    "history_matching",
    "index_history",
    "lines",
    "matching",
    "put_vectors",
    "sessions_holding",
    "unembedded",
    "vectors",
]

_WORDY = re.compile(r"\w")
#: How many of the newest messages tell the mean length of a message (cheap, and close).
_LENGTH_SAMPLE = 2_000


def fts_query(forms: Sequence[str]) -> str | None:
    """An FTS5 query matching any of `forms` (a word, `prefix*`, or words in order), each a
    quoted phrase: nothing typed is FTS syntax. None when no form holds a word."""
    terms = []
    for form in forms:
        text = scrub(form).replace("\x00", " ")
        if not _WORDY.search(text):
            continue
        prefix = text.endswith("*")
        body = text.rstrip("*")
        terms.append('"' + body.replace('"', '""') + '"' + ("*" if prefix else ""))
    return " OR ".join(dict.fromkeys(terms)) or None


#: The last corpus figures of each state database, by its newest message's id: counting
#: every message is the one cost of a search that grows with the home, and the figures only
#: weigh words (a removal, which keeps the newest id, leaves them close enough).
_corpus: dict[tuple[str, tuple[int, int]], tuple[int, int, float]] = {}


def corpus(state: State) -> tuple[int, float]:
    """How many messages recall searches, and their mean length in characters."""
    with state.reading() as conn:
        newest = conn.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()[0]
        kept = _corpus.get((str(state.path), state.ident))
        if kept is not None and kept[0] == newest:
            return kept[1], kept[2]
        count = conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        mean = conn.execute(
            "SELECT AVG(length(text)) FROM "
            "(SELECT text FROM messages WHERE text != '' ORDER BY id DESC LIMIT ?)",
            (_LENGTH_SAMPLE,),
        ).fetchone()[0]
    _corpus[(str(state.path), state.ident)] = (int(newest), int(count), float(mean or 1.0))
    return int(count), float(mean or 1.0)


def matching(
    state: State, forms: Sequence[str], *, cap: int, exclude: str | None = None
) -> tuple[int, list[Match]]:
    """The saved messages holding any of `forms` (leaving out session `exclude` and
    recall's own calls): how many, and the newest `cap` of them."""
    query = fts_query(forms)
    if query is None:
        return 0, []
    with state.reading() as conn:
        rows = conn.execute(
            "SELECT m.session, m.seq, m.time, length(m.text) "
            "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            "WHERE messages_fts MATCH :query AND m.session IS NOT :exclude "
            "AND m.name != 'recall' ORDER BY messages_fts.rowid DESC LIMIT :cap",
            {"query": query, "exclude": exclude, "cap": cap},
        ).fetchall()
        count = len(rows)
        if count >= cap:
            count = conn.execute(
                "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?", (query,)
            ).fetchone()[0]
    return int(count), [Match(str(s), int(q), str(t), int(n)) for s, q, t, n in rows]


def lines(state: State, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Line]:
    """The saved messages at `keys` (session, seq) that exist, by key; recall's own calls
    and results are left out, as `matching` leaves them out."""
    found: dict[tuple[str, int], Line] = {}
    with state.reading() as conn:
        for session, seq in dict.fromkeys(keys):  # one indexed lookup each: a few µs
            row = conn.execute(
                "SELECT time, role, COALESCE(json_extract(data, '$.name'), ''), text "
                "FROM messages WHERE session = ? AND seq = ? AND name != 'recall'",
                (session, seq),
            ).fetchone()
            if row is not None:
                time, role, name, text = row
                found[(session, seq)] = Line(
                    session, seq, str(time), str(role), str(name), str(text)
                )
    return found


def unembedded(state: State, model: str, *, limit: int) -> list[tuple[tuple[str, int], str]]:
    """The newest `limit` messages recall searches that have no embedding by `model` yet."""
    with state.reading() as conn:
        rows = conn.execute(
            "SELECT m.session, m.seq, m.text FROM messages m WHERE m.text != '' "
            "AND m.name != 'recall' AND NOT EXISTS (SELECT 1 FROM message_vectors v "
            "WHERE v.message = m.id AND v.model = ?) ORDER BY m.id DESC LIMIT ?",
            (model, limit),
        ).fetchall()
    return [((str(s), int(q)), str(t)) for s, q, t in rows]


def put_vectors(state: State, model: str, items: Sequence[tuple[tuple[str, int], bytes]]) -> None:
    """Keep each message's embedding by `model` (a message gone meanwhile is skipped)."""
    with state.transaction() as conn:
        for (session, seq), vector in items:
            conn.execute(
                "INSERT OR REPLACE INTO message_vectors (message, model, vector) "
                "SELECT id, ?, ? FROM messages WHERE session = ? AND seq = ?",
                (model, vector, session, seq),
            )


def vectors(state: State, model: str) -> list[tuple[tuple[str, int], bytes]]:
    """Every embedding by `model`, with its message's place."""
    with state.reading() as conn:
        rows = conn.execute(
            "SELECT m.session, m.seq, v.vector FROM message_vectors v "
            "JOIN messages m ON m.id = v.message WHERE v.model = ?",
            (model,),
        ).fetchall()
    return [((str(s), int(q)), bytes(v)) for s, q, v in rows]


def history_matching(
    state: State, forms: Sequence[str], *, cap: int, exclude: str | None = None
) -> tuple[int, list[Found]]:
    """The memory changes holding any of `forms` (leaving out those made in session
    `exclude`): how many, and the newest `cap` of them."""
    query = fts_query(forms)
    if query is None:
        return 0, []
    indexed = index_history(state)
    rows = []
    with state.reading() as conn:
        tables = ["memory_changes_fts"]
        if not indexed:  # the changes not indexed yet, in an index of this connection only
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.pending_changes USING fts5("
                "before, after, tokenize='porter unicode61 remove_diacritics 2')"
            )
            conn.execute("DELETE FROM temp.pending_changes")
            conn.execute(f"INSERT INTO temp.pending_changes (rowid, before, after) {_UNINDEXED}")
            tables.append("pending_changes")
        for table in tables:
            rows += conn.execute(
                "SELECT c.id, c.source, c.time, c.target, c.action, "
                "COALESCE(c.before, '') || char(10) || COALESCE(c.after, '') "
                f"FROM {table} JOIN memory_changes c ON c.id = {table}.rowid "
                f"WHERE {table} MATCH :query "
                # a change made in the conversation asking is in that conversation already
                "AND (:exclude IS NULL "
                "OR instr(c.source || ' ', 'session=' || :exclude || ' ') = 0) "
                f"ORDER BY {table}.rowid DESC LIMIT :cap",
                {"query": query, "exclude": exclude, "cap": cap},
            ).fetchall()
    found = [change_found(row) for row in rows]
    return len(found), found


def index_history(state: State) -> bool:
    """Put the memory changes recorded since the last search in the search index.

    A memory write does not index its change (it stays at the disk's pace); the
    first search after it does, in one transaction. False when that cannot be
    done now (a database this process may not write, or one another writer holds
    for longer than `INDEX_WAIT_MS`): `search` then reads those changes unindexed.
    """
    with state.reading() as conn:
        behind = conn.execute(
            "SELECT (SELECT COALESCE(MAX(id), 0) FROM memory_changes) > upto "
            "FROM memory_changes_indexed"
        ).fetchone()[0]
        if not behind:
            return True
        conn.execute(f"PRAGMA busy_timeout = {INDEX_WAIT_MS}")  # never hold a search up
        try:
            with state.transaction() as conn:
                conn.execute(f"INSERT INTO memory_changes_fts (rowid, before, after) {_UNINDEXED}")
                conn.execute(
                    "UPDATE memory_changes_indexed SET upto = "
                    "(SELECT COALESCE(MAX(id), 0) FROM memory_changes)"
                )
        except sqlite3.OperationalError as exc:
            if not any(word in str(exc) for word in ("readonly", "locked", "busy")):
                raise
            return False
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    return True


#: The changes not in the index yet, as the index holds them.
_UNINDEXED = (
    "SELECT id, CASE WHEN shape = 'file' THEN NULL ELSE before END, after "
    "FROM memory_changes WHERE id > (SELECT upto FROM memory_changes_indexed)"
)
#: How long indexing the history waits for another writer before searching without it.
INDEX_WAIT_MS = 200


def sessions_holding(state: State, texts: Sequence[str]) -> list[str]:
    """The ids of saved sessions with a message that contains one of `texts` (any case)."""
    found: set[str] = set()
    with state.reading() as conn:
        for text in map(scrub, texts):
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
