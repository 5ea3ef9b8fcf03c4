"""A persona's memory history in a PostgreSQL store: read it, find what undo and restore
need, forget a text, compact; the same rules as the folder's (`store/folder/_changes.py`)."""

from __future__ import annotations

from .._records import (
    COLUMNS,
    REDACTED,
    Change,
    Row,
    compact_cutoff,
    forgotten_texts,
    holds,
    row_of,
)
from ._connection import PgConnection

__all__ = ["PgRecords"]


class PgRecords:
    """A persona's memory history in PostgreSQL, read and pruned by the folder's rules."""

    __slots__ = ("db",)

    def __init__(self, db: PgConnection) -> None:
        self.db = db

    def log(
        self, target: str | None, *, limit: int | None = None, grep: str | None = None
    ) -> list[Change]:
        """Recorded changes newest first, as `History.log` gives them from a folder."""
        return [row.change for row in self._rows(target, limit=limit, grep=grep)]

    def _rows(self, target: str | None, *, limit: int | None, grep: str | None) -> list[Row]:
        where, params = ("AND target = %s", [target]) if target is not None else ("", [])
        with self.db.connection() as conn:
            found = conn.execute(
                f"SELECT {COLUMNS} FROM toolnexus_changes WHERE key = %s {where} "
                "ORDER BY id DESC LIMIT %s",
                [self.db.key, *params, None if grep is not None else limit],
            ).fetchall()
        rows = [row_of(values) for values in found]
        if grep is not None:  # case folded as in a folder, not as the server lowers case
            needle = grep.casefold()
            rows = [
                r
                for r in rows
                if any(
                    t is not None and needle in t.casefold()
                    for t in (r.change.before, r.change.after)
                )
            ][:limit]
        return rows

    def find_change(self, id: int) -> Row | None:
        """The record with this id, or None."""
        with self.db.connection() as conn:
            found = conn.execute(
                f"SELECT {COLUMNS} FROM toolnexus_changes WHERE key = %s AND id = %s",
                (self.db.key, id),
            ).fetchone()
        return None if found is None else row_of(found)

    def latest_change(self, target: str) -> Row | None:
        """The newest record of one file, or None."""
        rows = self._rows(target, limit=1, grep=None)
        return rows[0] if rows else None

    def state_bytes(self, dig: str) -> bytes | None:
        """The kept file version with digest `dig` (b'' for no file); None if not kept."""
        if dig == "":
            return b""
        with self.db.connection() as conn:
            found = conn.execute(
                "SELECT body FROM toolnexus_states WHERE key = %s AND digest = %s",
                (self.db.key, dig),
            ).fetchone()
        return None if found is None else bytes(found[0])

    def state_before(self, row: Row) -> bytes | None:
        """The kept version right before `row`'s change (None: not kept, its file's first
        record, or one item of a batch), as `_changes.state_before` in a folder."""
        c = row.change
        query = (
            "SELECT digest, time, source FROM toolnexus_changes WHERE key = %s AND target = %s "
            "AND id {} %s ORDER BY id {} LIMIT 1"
        )
        with self.db.connection() as conn:
            prev = conn.execute(query.format("<", "DESC"), (self.db.key, c.target, c.id)).fetchone()
            after = conn.execute(query.format(">", "ASC"), (self.db.key, c.target, c.id)).fetchone()
        if prev is None:
            return None
        if any(n is not None and tuple(n) == (row.digest, c.time, c.source) for n in (prev, after)):
            return None  # one item of a batch
        return self.state_bytes(str(prev[0]))

    def forget(self, id: int) -> tuple[Row, list[int], int] | None:
        """Blank one record's texts and every kept version that holds them; the record as
        it was, the other records still holding them, how many versions went."""
        row = self.find_change(id)
        if row is None:
            return None
        c, texts = row.change, forgotten_texts(row)
        with self.db.connection() as conn, conn.transaction():
            self.db.lock_row(conn)
            conn.execute(
                "UPDATE toolnexus_changes SET before = NULL, after = NULL, redacted = true, "
                "source = CASE WHEN redacted THEN source ELSE source || ' ' || %s END "
                "WHERE key = %s AND id = %s",
                (REDACTED, self.db.key, id),
            )
            doomed = {row.digest} if row.shape == "file" and c.after is not None else set()
            for dig, body in conn.execute(
                "SELECT digest, body FROM toolnexus_states WHERE key = %s", (self.db.key,)
            ).fetchall():
                if holds(bytes(body).decode("utf-8", errors="replace"), texts):
                    doomed.add(dig)
            dropped = 0
            for dig in doomed:
                dropped += conn.execute(
                    "DELETE FROM toolnexus_states WHERE key = %s AND digest = %s",
                    (self.db.key, dig),
                ).rowcount
            others = [
                int(other)
                for other, before, after in conn.execute(
                    "SELECT id, before, after FROM toolnexus_changes "
                    "WHERE key = %s AND target = %s AND id <> %s",
                    (self.db.key, c.target, id),
                ).fetchall()
                if holds(before or "", texts) or holds(after or "", texts)
            ]
        return row, others, dropped

    def compact(self, keep_days: int) -> tuple[int, int]:
        """Drop records older than `keep_days` days (each file's latest always stays) and
        the versions no remaining record left; (records removed, records kept)."""
        cutoff = compact_cutoff(keep_days)
        key = self.db.key
        with self.db.connection() as conn, conn.transaction():
            self.db.lock_row(conn)  # an edit committing meanwhile keeps its record and state
            removed = conn.execute(
                "DELETE FROM toolnexus_changes WHERE key = %(k)s AND time < %(t)s AND id NOT IN "
                "(SELECT MAX(id) FROM toolnexus_changes WHERE key = %(k)s GROUP BY target)",
                {"k": key, "t": cutoff},
            ).rowcount
            conn.execute(
                "DELETE FROM toolnexus_states s WHERE key = %s AND NOT EXISTS (SELECT 1 FROM "
                "toolnexus_changes c WHERE c.key = s.key AND c.digest = s.digest)",
                (key,),
            )
            kept = conn.execute(
                "SELECT COUNT(*) FROM toolnexus_changes WHERE key = %s", (key,)
            ).fetchone()
        return int(removed), int(kept[0] if kept else 0)

    def size(self) -> None:
        """A database does not tell one persona's share of its disk: None."""
        return
