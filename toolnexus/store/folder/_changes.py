"""Memory history: every change to MEMORY.md / USER.md as a record in the home's state database.

A record is `id, time, target, action, before, after, source`. For `add`,
`replace` and `remove` (and an `undo` of one) `before` / `after` are the
entry's text as the tool's `text` gives it; for `outside-edit`, `restore` (and
an `undo` of one) they are the whole file's text. Each record also keeps, out
of sight, the digest of the file's bytes right after it, and the bytes
themselves once per distinct version (compressed), so `restore` can put any
kept version back exactly.

The writer's protocol, under the memory file's lock: `sync` first (the file on
disk differs from the last record's digest: someone else changed it, or a
writer died between its write and its record; that version is recorded whole
as an `outside-edit`), then the write, then `record`. Nothing here touches a
memory file: `memory.MemoryStore` does, and calls these.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal

from ...memory._document import nfc, parse_memory
from ._state import State

__all__ = [
    "ACTIONS",
    "COLUMNS",
    "REDACTED",
    "Change",
    "Pending",
    "Row",
    "compact",
    "digest",
    "file_text",
    "find",
    "forget",
    "forgotten_texts",
    "history",
    "holds",
    "last_digest",
    "latest",
    "record",
    "row_of",
    "state_before",
    "state_bytes",
    "sync",
]

Action = Literal["add", "replace", "remove", "outside-edit", "undo", "restore"]
ACTIONS: tuple[Action, ...] = ("add", "replace", "remove", "outside-edit", "undo", "restore")
Shape = Literal["entry", "merge", "file"]

#: What `forget` appends to a record's source.
REDACTED = "redacted"


@dataclass(frozen=True, slots=True)
class Change:
    """One recorded change to a memory file: what `memory log` shows, field for field."""

    id: int
    time: str
    target: str
    action: str
    before: str | None
    after: str | None
    source: str

    def to_json(self) -> str:
        """One line of `memory log --json`: exactly the record's fields."""
        return json.dumps(asdict(self), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Pending:
    """A change about to be recorded: what it did, and how an undo would invert it."""

    action: Action
    before: str | None
    after: str | None
    shape: Shape = "entry"


@dataclass(frozen=True, slots=True)
class Row:
    """A record with what undo and restore need besides its public fields."""

    change: Change
    shape: Shape
    digest: str
    redacted: bool


#: The last bytes digested and their digest: a write digests the file it leaves, and the
#: next write the same bytes as it finds them.
_last_digest: tuple[bytes, str] = (b"", hashlib.sha256(b"").hexdigest())


def digest(data: bytes | None) -> str:
    """The digest a record keeps of a file's bytes; '' for no file."""
    global _last_digest
    if data is None:
        return ""
    last = _last_digest
    if last[0] == data:
        return last[1]
    found = hashlib.sha256(data).hexdigest()
    _last_digest = (data, found)
    return found


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def file_text(data: bytes | None) -> str | None:
    """A file's bytes as a record shows them (None: no file, or not UTF-8 text)."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


COLUMNS = "id, time, target, action, before, after, source, shape, digest, redacted"


def row_of(values: Sequence[object]) -> Row:
    id_, time, target, action, before, after, source, shape, dig, redacted = values
    change = Change(
        int(id_),  # type: ignore[call-overload]
        str(time),
        str(target),
        str(action),
        None if before is None else str(before),
        None if after is None else str(after),
        str(source),
    )
    return Row(change, shape, str(dig), bool(redacted))  # type: ignore[arg-type]


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
        (time or _now(), target, p.action, p.before, p.after, source, p.shape, dig),
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
        if prev is None and data is None and size is None:
            return None  # no file, and none before: nothing happened
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
    time = _now()
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


def forgotten_texts(row: Row) -> list[str]:
    """What `forget` blanks of a record: an entry change's texts, or the lines a
    whole-file change added or removed."""
    c = row.change
    if row.shape == "file":
        return _changed_lines(c.before or "", c.after or "")
    return [t for t in (c.before, c.after) if t]


def _changed_lines(before: str, after: str) -> list[str]:
    """The lines one whole-file change added or removed, without list markers or indent."""
    old, new = set(before.splitlines()), set(after.splitlines())
    out = []
    for line in sorted(old ^ new):
        text = line.strip()
        text = text[2:].strip() if text.startswith("- ") else text
        if text and text != "-":
            out.append(text)
    return out


def holds(text: str, texts: Sequence[str]) -> bool:
    """Whether `text` (a file version, or a record's text) holds one of `texts`: raw, or in
    one of its entries (whose continuation lines are indented in the file)."""
    if not texts or not text:
        return False
    if any(t in text for t in texts):
        return True
    entries = [nfc(e) for e in parse_memory(text).entries]
    return any(nfc(t) in e for t in texts for e in entries)


def compact(state: State, keep_days: int) -> tuple[int, int]:
    """Drop records older than `keep_days` days (each file's latest always stays) and the
    file versions no remaining record left; (records removed, records kept)."""
    try:
        then = datetime.now(timezone.utc) - timedelta(days=keep_days)
        cutoff = then.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    except OverflowError:  # before the calendar starts: nothing is that old
        cutoff = ""
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
