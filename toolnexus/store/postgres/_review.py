"""A persona's memory writes held for review in a PostgreSQL store: the folder's rules
(`store/folder/_database.FolderReview`), in `toolnexus_held`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .._review import COLUMNS, HeldOp, HeldWrite, held_of
from ._connection import PgConnection

__all__ = ["PgReview"]


class PgReview:
    """The writes held for review of one persona, shared by every machine."""

    __slots__ = ("db",)

    def __init__(self, db: PgConnection) -> None:
        self.db = db

    def hold(
        self, *, time: str, target: str, operations: Sequence[HeldOp], batch: bool, source: str
    ) -> HeldWrite:
        kept = HeldWrite(0, time, target, tuple(operations), batch, source)
        with self.db.connection() as conn, conn.transaction():
            found = conn.execute(
                "INSERT INTO toolnexus_held (key, time, target, operations, batch, source) "
                "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (self.db.key, *kept.row()[1:]),
            ).fetchone()
        assert found is not None
        return replace(kept, id=int(found[0]))

    def pending(self) -> list[HeldWrite]:
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM toolnexus_held WHERE key = %s ORDER BY id",
                (self.db.key,),
            ).fetchall()
        return [held_of(row) for row in rows]

    def take(self, id: int) -> HeldWrite | None:
        with self.db.connection() as conn, conn.transaction():
            row = conn.execute(
                f"DELETE FROM toolnexus_held WHERE key = %s AND id = %s RETURNING {COLUMNS}",
                (self.db.key, id),
            ).fetchone()
        return None if row is None else held_of(row)

    def put_back(self, held: HeldWrite) -> None:
        with self.db.connection() as conn, conn.transaction():
            conn.execute(
                f"INSERT INTO toolnexus_held (key, {COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO NOTHING",
                (self.db.key, *held.row()),
            )
