"""The PostgreSQL store: one persona's memory files, history and conversations in a database
that many machines share (psycopg 3 with psycopg_pool: the `postgres` extra).

Every write is one transaction that first locks the persona's row, so writers on
any number of machines take turns on it as `flock` makes them take turns on one
machine; the edit itself is the folder's (a pure function of the file's bytes),
run on the text read under that lock. The whole text of each memory file is kept
(prose and entries), so a push / pull copies it byte for byte. A commit sends a
NOTIFY on `toolnexus` carrying the key: watchers on other machines listen.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import StoreError
from ...home._door import MEMORY_FILES, decode
from ...home._identity import Target
from ...home._lock import WriteCancelled
from ...home._memo import remembered
from ...memory._document import MemoryDocument, parse_memory
from .._protocol import Edit
from .._records import Pending, digest, now
from .._snapshot import CHANGES, MESSAGES, SESSIONS, Snapshot
from ._changes import PgRecords
from ._connection import CHANNEL, PgConnection, notifications
from ._review import PgReview
from ._transcripts import PgTalk

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgStore"]


@dataclass(frozen=True, slots=True)
class PgStore:
    """One persona in a PostgreSQL database: its memory files, history and conversations.

    `name` and `identity` (IDENTITY.md's digest) claim the key on first use; a
    different identity under a claimed key is refused (`StoreError`, kind
    `claimed`), never merged.
    """

    dsn: str
    key: str
    name: str
    identity: str
    #: The persona's handle on the database, shared by its history and conversations.
    db: PgConnection = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "db",
            PgConnection(dsn=self.dsn, key=self.key, name=self.name, identity=self.identity),
        )

    @property
    def where(self) -> str:
        """The store as messages name it."""
        return self.db.where

    @property
    def keeps_trust_marks(self) -> bool:
        """Trust marks are the folder's alone: a database keeps none."""
        return False

    @property
    def announces_changes(self) -> bool:
        """Every commit is announced (NOTIFY): other machines' writes are heard."""
        return True

    @property
    def forgotten_where(self) -> str:
        """Where forgotten text goes: old row versions stay until the server's VACUUM."""
        return (
            "in the database; the server frees the old rows at its next VACUUM, and its "
            "backups keep what they hold"
        )

    def migrate(self, *, claim: bool = False) -> int:
        """Create or upgrade the schema and claim the key; how many migrations ran.

        `claim=True` makes this IDENTITY.md the key's, replacing the one that claimed it.
        """
        return self.db.migrate(claim=claim)

    # -- memory ------------------------------------------------------------------------

    def read(self, target: Target) -> bytes | None:
        """A memory file's bytes as the database holds them (None: none yet)."""
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT body FROM toolnexus_memory WHERE key = %s AND target = %s",
                (self.key, target),
            ).fetchone()
        return None if row is None else bytes(row[0])

    def memory_file(self, target: Target, *, limit: int) -> tuple[str, MemoryDocument] | None:
        """A memory file's hash and parse (None: none yet), the parse memoised by its bytes.
        (`limit` is the folder's byte cap; the database holds what its writes allowed.)"""
        data = self.read(target)
        if data is None:
            return None
        sha = hashlib.sha256(data).hexdigest()
        text = decode(data, MEMORY_FILES[target])
        return sha, remembered(("stored", sha), len(text), lambda: parse_memory(text), view=True)

    def edit(
        self,
        target: Target,
        edit: Edit,
        *,
        source: str,
        limit: int,
        fsync: bool = True,
        cancel: threading.Event | None = None,
        then: Callable[[], str] | None = None,
    ) -> str:
        """Run `edit` on the file under the persona's row lock and commit what it wrote
        with its history, in one transaction; the edit's message. (`limit` and `fsync`
        are the folder's; the server keeps its own durability. `then` runs before the
        commit.)

        Raises:
            StoreError: `unreachable` (nothing written, or, when the commit itself
                was cut off, said so), or what `edit` raises (nothing written).
        """
        committing = False
        try:
            with self.db.connection() as conn:
                with conn.transaction():
                    self.db.lock_row(conn)
                    row = conn.execute(
                        "SELECT body FROM toolnexus_memory WHERE key = %s AND target = %s",
                        (self.key, target),
                    ).fetchone()
                    data = None if row is None else bytes(row[0])
                    new, message, pending = edit(data)
                    if then is not None:
                        message += then()
                    if new is None or new == data or not pending:
                        return message
                    self._write(conn, target, new, pending, source)
                    if cancel is not None and cancel.is_set():
                        raise WriteCancelled("cancelled before the commit")  # rolls back
                    committing = True
                committing = False  # committed
                return message
        except StoreError as exc:
            if committing:
                raise StoreError(
                    f"{exc}; the connection broke while committing, so the change may or "
                    "may not have been saved (read the memory to see)",
                    kind="unreachable",
                ) from None
            raise

    def _write(
        self,
        conn: psycopg.Connection[Any],
        target: Target,
        new: bytes,
        pending: Sequence[Pending],
        source: str,
    ) -> None:
        conn.execute(
            "INSERT INTO toolnexus_memory (key, target, body) VALUES (%s, %s, %s) "
            "ON CONFLICT (key, target) DO UPDATE SET body = excluded.body",
            (self.key, target, new),
        )
        dig = digest(new)
        conn.execute(
            "INSERT INTO toolnexus_states (key, digest, body) VALUES (%s, %s, %s) "
            "ON CONFLICT DO NOTHING",
            (self.key, dig, new),
        )
        row = conn.execute(
            "UPDATE toolnexus_personas SET next_change = next_change + %s WHERE key = %s "
            "RETURNING next_change",
            (len(pending), self.key),
        ).fetchone()
        assert row is not None
        first, time = int(row[0]) - len(pending), now()
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO toolnexus_changes (key, id, time, target, action, before, after, "
                "source, shape, digest) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        self.key,
                        first + i,
                        time,
                        target,
                        p.action,
                        p.before,
                        p.after,
                        source,
                        p.shape,
                        dig,
                    )
                    for i, p in enumerate(pending)
                ],
            )
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, self.key))

    # -- copying -----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Every row this persona has, in the order a folder lists them."""
        with self.db.connection() as conn, conn.transaction():
            # One view of every table, however many writers commit meanwhile.
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            key = (self.key,)
            memory = conn.execute(
                "SELECT target, body FROM toolnexus_memory WHERE key = %s", key
            ).fetchall()
            held = {t: bytes(b) for t, b in memory}
            changes = conn.execute(
                f"SELECT {CHANGES} FROM toolnexus_changes WHERE key = %s ORDER BY id", key
            ).fetchall()
            states = conn.execute(
                "SELECT digest, body FROM toolnexus_states WHERE key = %s ORDER BY digest", key
            ).fetchall()
            sessions = conn.execute(
                f"SELECT {SESSIONS} FROM toolnexus_sessions WHERE key = %s ORDER BY id", key
            ).fetchall()
            messages = conn.execute(
                f"SELECT {MESSAGES} FROM toolnexus_messages WHERE key = %s ORDER BY session, seq",
                key,
            ).fetchall()
        return Snapshot(
            tuple((t, held[t]) for t in ("user", "self") if t in held),
            tuple(tuple(r) for r in changes),
            tuple((d, bytes(b)) for d, b in states),
            tuple(tuple(r) for r in sessions),
            tuple(tuple(r) for r in messages),
        )

    def replace(self, snapshot: Snapshot) -> None:
        """Make this persona's rows exactly `snapshot`'s, in one transaction."""
        key = self.key
        with self.db.connection() as conn, conn.transaction():
            self.db.lock_row(conn)
            for table in ("memory", "messages", "sessions", "changes", "states"):
                conn.execute(f"DELETE FROM toolnexus_{table} WHERE key = %s", (key,))
            tables = (
                ("memory", "target, body", snapshot.memory),
                ("changes", CHANGES, snapshot.changes),
                ("states", "digest, body", snapshot.states),
                ("sessions", SESSIONS, snapshot.sessions),
                ("messages", MESSAGES, snapshot.messages),
            )
            with conn.cursor() as cur:
                for table, columns, rows in tables:
                    marks = _marks(columns.count(",") + 2)  # the key, then each column
                    cur.executemany(
                        f"INSERT INTO toolnexus_{table} (key, {columns}) VALUES ({marks})",
                        [(key, *r) for r in rows],
                    )
            last = max((int(r[0]) for r in snapshot.changes), default=0)
            conn.execute(
                "UPDATE toolnexus_personas SET next_change = %s WHERE key = %s", (last + 1, key)
            )
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, key))

    def sync(self, target: Target, *, limit: int) -> None:
        """Nothing to do: a database has no writes behind its back to find."""

    def records(self) -> PgRecords:
        """The memory history."""
        return PgRecords(self.db)

    def talk(self, *, create: bool = False) -> PgTalk:
        """The saved conversations."""
        return PgTalk(self.db)

    def review(self, *, create: bool = False) -> PgReview:
        """The writes held for review."""
        return PgReview(self.db)

    def health(self) -> list[str]:
        """Nothing to repair by hand: a server's problems are reported as they happen."""
        return []

    def failures(self) -> AbstractContextManager[None]:
        """Nothing to do: the connection already reports the server's refusals as
        StoreError, naming the database."""
        return nullcontext()

    def notifications(self) -> AsyncIterator[None]:
        """Yield whenever a change to this persona is committed, by any process on any
        machine (LISTEN / NOTIFY), and once as soon as it listens."""
        return notifications(self.db)


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)
