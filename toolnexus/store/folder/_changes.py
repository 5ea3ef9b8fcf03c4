"""Memory history: every change to MEMORY.md / USER.md as a record in the home's state database.

A record is `id, time, target, action, before, after, source`. For `add`,
`replace` and `remove` (and an `undo` of one) `before` / `after` are the
entry's text as the tool's `text` gives it; for `outside-edit`, `restore` (and
an `undo` of one) they are the whole file's text. Each record also keeps, out
of sight, the digest of the file's bytes right after it, and the bytes
themselves once per distinct version (compressed), so `restore` can put any
kept version back exactly.

The records' shape and the rules both stores share are `store/_records.py`'s.
The writer's protocol, under the memory file's lock: `sync` first (the file on
disk differs from the last record's digest: someone else changed it, or a
writer died between its write and its record; that version is recorded whole
as an `outside-edit`), then the write, then `record`. Nothing here touches a
memory file: the folder's writer (`_files`) does, and calls these.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence

from .._records import (
    COLUMNS,
    REDACTED,
    Change,
    Pending,
    Row,
    compact_cutoff,
    digest,
    file_text,
    forgotten_texts,
    holds,
    now,
    row_of,
)
from ._state import State

__all__ = [
    "compact",
    "find",
    "forget",
    "history",
    "last_digest",
    "latest",
    "record",
    "state_before",
    "state_bytes",
    "sync",
]


def last_digest(state: State, target: str) -> str | None:
    """The digest of the file after its latest record; None when it has no record yet."""
    with state.reading() as conn:
        found = conn.execute(
            "SELECT digest FROM memory_changes WHERE target = ? ORDER BY id DESC LIMIT 1",
            (target,),
        ).fetchone()
    return None if found is None else str(found[0])


def _keep(conn: object, data: bytes, dig: str) -> None:
    conn.execute(  # type: ignore[attr-defined]
        "INSERT OR IGNORE INTO memory_states (digest, body) VALUES (?, ?)",
        (dig, zlib.compress(data, 1)),  # the fastest level: a third quicker, 4% larger
    )


def _insert(
    conn: object, target: str, p: Pending, source: str, dig: str, time: str | None = None
) -> int:
    cur = conn.execute(  # type: ignore[attr-defined]
        "INSERT INTO memory_changes (time, target, action, before, after, source, shape, digest) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (time or now(), target, p.action, p.before, p.after, source, p.shape, dig),
    )
    return int(cur.lastrowid)


def state_bytes(state: State, dig: str) -> bytes | None:
    """The kept bytes of the file version with digest `dig` (b'' for no file); None if not kept."""
    if dig == "":
        return b""
    with state.reading() as conn:
        found = conn.execute("SELECT body FROM memory_states WHERE digest = ?", (dig,)).fetchone()
    return None if found is None else zlib.decompress(found[0])


def sync(
    state: State, target: str, data: bytes | None, *, size: int | None = None, sha: str = ""
) -> int | None:
    """Record the file as found on disk, if it is not what the last record left; its id.

    `data` is the file's bytes (None: there is none). A file too big to read is
    passed as `size` and `sha` instead, and recorded by those alone.
    """
    found = sha if size is not None else digest(data)
    if size is None and last_digest(state, target) == found:
        return None  # the common case, a plain read: nobody else wrote (we hold the lock)
    with state.transaction() as conn:
        prev = conn.execute(
            "SELECT digest FROM memory_changes WHERE target = ? ORDER BY id DESC LIMIT 1",
            (target,),
        ).fetchone()
        if prev is None and not data and size is None:
            return None  # no file (or an empty one, as `init` makes), and none before
        if prev is not None and prev[0] == found:
            return None
        before = None
        if prev is not None:
            kept = conn.execute(
                "SELECT body FROM memory_states WHERE digest = ?", (prev[0],)
            ).fetchone()
            before = file_text(zlib.decompress(kept[0])) if kept is not None else None
        after = None if size is not None else file_text(data)
        source = "outside"
        if size is not None or (data is not None and after is None):
            shown = size if size is not None else len(data or b"")
            source = f"outside size={shown} sha256={found}"
        elif data is not None:
            _keep(conn, data, found)
        return _insert(conn, target, Pending("outside-edit", before, after, "file"), source, found)


def record(
    state: State, target: str, pending: Sequence[Pending], data: bytes, source: str
) -> list[int]:
    """Record the changes of one write, which left the file as `data`; their ids.

    The changes of one batch share its time, source and resulting file version
    (the file was never in between).
    """
    dig = digest(data)
    time = now()
    with state.transaction() as conn:
        _keep(conn, data, dig)
        return [_insert(conn, target, p, source, dig, time) for p in pending]


def find(state: State, id: int) -> Row | None:
    """The record with this id, or None."""
    with state.reading() as conn:
        found = conn.execute(f"SELECT {COLUMNS} FROM memory_changes WHERE id = ?", (id,)).fetchone()
    return None if found is None else row_of(found)


def latest(state: State, target: str) -> Row | None:
    """The newest record of one file, or None."""
    with state.reading() as conn:
        found = conn.execute(
            f"SELECT {COLUMNS} FROM memory_changes WHERE target = ? ORDER BY id DESC LIMIT 1",
            (target,),
        ).fetchone()
    return None if found is None else row_of(found)


def state_before(state: State, row: Row) -> bytes | None:
    """The kept file version right before `row`'s change, or None: not kept, the change
    was the file's first record, or it was one item of a batch (the file was never
    between the items)."""
    c = row.change
    query = (
        "SELECT digest, time, source FROM memory_changes WHERE target = ? AND id {} ? "
        "ORDER BY id {} LIMIT 1"
    )
    with state.reading() as conn:
        prev = conn.execute(query.format("<", "DESC"), (c.target, c.id)).fetchone()
        after = conn.execute(query.format(">", "ASC"), (c.target, c.id)).fetchone()
    if prev is None:
        return None
    if any(n is not None and tuple(n) == (row.digest, c.time, c.source) for n in (prev, after)):
        return None  # one item of a batch
    return state_bytes(state, str(prev[0]))


def history(
    state: State, target: str | None, *, limit: int | None = None, grep: str | None = None
) -> list[Change]:
    """Records newest first: of one file (or both when `target` is None), every one unless
    `limit`, only those whose texts contain `grep` (case-insensitive) when given."""
    return [row.change for row in _rows(state, target, limit=limit, grep=grep)]


def _rows(
    state: State, target: str | None, *, limit: int | None, grep: str | None
) -> Iterator[Row]:
    where, params = ("WHERE target = ?", (target,)) if target is not None else ("", ())
    with state.reading() as conn:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM memory_changes {where} ORDER BY id DESC", params
        ).fetchall()
    needle = grep.casefold() if grep is not None else None
    count = 0
    for values in rows:
        if limit is not None and count >= limit:
            return
        row = row_of(values)
        if needle is not None and not any(
            t is not None and needle in t.casefold() for t in (row.change.before, row.change.after)
        ):
            continue
        count += 1
        yield row


def forget(state: State, id: int) -> tuple[Row, list[int], int] | None:
    """Blank one record's texts and every kept file version that holds them.

    What is forgotten: an entry change's entry texts; for a whole-file change
    (an outside edit, a restore), the lines it added or removed. Returns the
    record as it was, the ids of other records whose texts still hold one of
    them (for the caller to name), and how many kept versions were dropped;
    None for no such record.
    """
    row = find(state, id)
    if row is None:
        return None
    c = row.change
    texts = forgotten_texts(row)
    with state.transaction() as conn:
        conn.execute(
            "UPDATE memory_changes SET before = NULL, after = NULL, redacted = 1, "
            "source = CASE WHEN redacted THEN source ELSE source || ' ' || ? END WHERE id = ?",
            (REDACTED, id),
        )
        doomed = {row.digest} if row.shape == "file" and c.after is not None else set()
        for dig, body in conn.execute("SELECT digest, body FROM memory_states").fetchall():
            if holds(zlib.decompress(body).decode("utf-8", errors="replace"), texts):
                doomed.add(dig)
        dropped = 0
        for dig in doomed:
            dropped += conn.execute("DELETE FROM memory_states WHERE digest = ?", (dig,)).rowcount
        others = [
            int(other)
            for other, before, after in conn.execute(
                "SELECT id, before, after FROM memory_changes WHERE target = ? AND id != ?",
                (c.target, id),
            ).fetchall()
            if holds(before or "", texts) or holds(after or "", texts)
        ]
        # The search index drops a deleted text only when its segments merge: merge now.
        conn.execute("INSERT INTO memory_changes_fts (memory_changes_fts) VALUES ('optimize')")
    state.checkpoint()
    return row, others, dropped


def compact(state: State, keep_days: int) -> tuple[int, int]:
    """Drop records older than `keep_days` days (each file's latest always stays) and the
    file versions no remaining record left; (records removed, records kept)."""
    cutoff = compact_cutoff(keep_days)
    with state.transaction() as conn:
        removed = conn.execute(
            "DELETE FROM memory_changes WHERE time < ? AND id NOT IN "
            "(SELECT MAX(id) FROM memory_changes GROUP BY target)",
            (cutoff,),
        ).rowcount
        conn.execute(
            "DELETE FROM memory_states WHERE digest NOT IN (SELECT digest FROM memory_changes)"
        )
        kept = conn.execute("SELECT COUNT(*) FROM memory_changes").fetchone()[0]
        conn.execute("INSERT INTO memory_changes_fts (memory_changes_fts) VALUES ('optimize')")
    with state.reading() as conn:
        conn.execute("VACUUM")
    state.checkpoint()
    return int(removed), int(kept)
