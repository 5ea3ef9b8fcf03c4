"""The folder's state database as the `Store` seam sees it: `FolderRecords` (the memory
history), `FolderTalk` (saved conversations) and `FolderReview` (writes held for
review), each over one open `State`.

Apart from `_store` so that SQLite loads only when `FolderStore.records` or
`FolderStore.talk` is first called: composing a soul reads files alone.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from .._records import Change, Row
from .._review import COLUMNS as HELD
from .._review import HeldOp, HeldWrite, held_of
from .._sessions import Found, Imported, Line, Match, Meta, Record, Stored
from . import _changes, _search, _transcripts
from ._state import DB_NAME, State

__all__ = ["FolderRecords", "FolderReview", "FolderTalk"]


class FolderRecords:
    """The memory history in the home's state database."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def log(self, target: str | None, *, limit: int | None, grep: str | None) -> list[Change]:
        return _changes.history(self.state, target, limit=limit, grep=grep)

    def find_change(self, id: int) -> Row | None:
        return _changes.find(self.state, id)

    def latest_change(self, target: str) -> Row | None:
        return _changes.latest(self.state, target)

    def state_before(self, row: Row) -> bytes | None:
        return _changes.state_before(self.state, row)

    def state_bytes(self, dig: str) -> bytes | None:
        return _changes.state_bytes(self.state, dig)

    def forget(self, id: int) -> tuple[Row, list[int], int] | None:
        return _changes.forget(self.state, id)

    def compact(self, keep_days: int) -> tuple[int, int]:
        return _changes.compact(self.state, keep_days)

    def size(self) -> tuple[str, int] | None:
        """The database file's size with its write-ahead log, as `compact` reports it."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.stat(f"{self.state.path}{suffix}").st_size
            except FileNotFoundError:
                continue
        return DB_NAME, total


class FolderTalk:
    """The saved conversations in the home's state database."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def save(
        self,
        *,
        session: str,
        model: str | None,
        soul: str,
        records: Sequence[Record],
        create: bool = True,
    ) -> bool:
        return _transcripts.save(
            self.state, session=session, model=model, soul=soul, records=records, create=create
        )

    def import_conversations(self, batch: Sequence[Imported]) -> list[tuple[str, bool]]:
        return _transcripts.import_conversations(self.state, batch)

    def sessions(self, *, limit: int | None = None) -> list[Meta]:
        return _transcripts.sessions(self.state, limit=limit)

    def latest(self) -> Meta | None:
        return _transcripts.latest(self.state)

    def match_ids(self, prefix: str) -> list[str]:
        return _transcripts.match_ids(self.state, prefix)

    def meta(self, session: str) -> Meta | None:
        return _transcripts.meta(self.state, session)

    def messages(self, session: str) -> list[Stored]:
        return _transcripts.messages(self.state, session)

    def remove(self, session: str) -> int:
        return _transcripts.remove(self.state, session)

    def has_any(self) -> bool:
        return _transcripts.has_any(self.state)

    def corpus(self) -> tuple[int, float]:
        return _search.corpus(self.state)

    def matching(
        self, forms: Sequence[str], *, cap: int, exclude: str | None = None
    ) -> tuple[int, list[Match]]:
        return _search.matching(self.state, forms, cap=cap, exclude=exclude)

    def history_matching(
        self, forms: Sequence[str], *, cap: int, exclude: str | None = None
    ) -> tuple[int, list[Found]]:
        return _search.history_matching(self.state, forms, cap=cap, exclude=exclude)

    def lines(self, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Line]:
        return _search.lines(self.state, keys)

    def unembedded(self, model: str, *, limit: int) -> list[tuple[tuple[str, int], str]]:
        return _search.unembedded(self.state, model, limit=limit)

    def put_vectors(self, model: str, items: Sequence[tuple[tuple[str, int], bytes]]) -> None:
        _search.put_vectors(self.state, model, items)

    def vectors(self, model: str) -> list[tuple[tuple[str, int], bytes]]:
        return _search.vectors(self.state, model)

    def sessions_holding(self, texts: Sequence[str]) -> list[str]:
        return _search.sessions_holding(self.state, texts)


class FolderReview:
    """The writes held for review, in the home's state database (`held_writes`)."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def hold(
        self, *, time: str, target: str, operations: Sequence[HeldOp], batch: bool, source: str
    ) -> HeldWrite:
        kept = HeldWrite(0, time, target, tuple(operations), batch, source)
        with self.state.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO held_writes (time, target, operations, batch, source) "
                "VALUES (?, ?, ?, ?, ?)",
                kept.row()[1:],
            )
            id = cursor.lastrowid
        assert id is not None
        return replace(kept, id=id)

    def pending(self) -> list[HeldWrite]:
        with self.state.reading() as conn:
            rows = conn.execute(f"SELECT {HELD} FROM held_writes ORDER BY id").fetchall()
        return [held_of(row) for row in rows]

    def take(self, id: int) -> HeldWrite | None:
        with self.state.transaction() as conn:
            row = conn.execute(f"SELECT {HELD} FROM held_writes WHERE id = ?", (id,)).fetchone()
            if row is not None:
                conn.execute("DELETE FROM held_writes WHERE id = ?", (id,))
        return None if row is None else held_of(row)

    def put_back(self, held: HeldWrite) -> None:
        with self.state.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO held_writes ({HELD}) VALUES (?, ?, ?, ?, ?, ?)",
                held.row(),
            )
