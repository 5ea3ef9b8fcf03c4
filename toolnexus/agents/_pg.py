"""The PostgreSQL store: one persona's memory files, history and conversations in a database
that many machines share (psycopg 3 with psycopg_pool: the `postgres` extra).

Every write is one transaction that first locks the persona's row, so writers on
any number of machines take turns on it as `flock` makes them take turns on one
machine; the edit itself is the folder's (a pure function of the file's bytes),
run on the text read under that lock. The whole text of each memory file is kept
(prose and entries), so a push / pull copies it byte for byte. A commit sends a
NOTIFY on `toolnexus` carrying the key: watchers on other machines listen.

A connection that broke (the server restarted, the network dropped) is checked
and replaced when it is next taken from the pool, so a session outlives the
server going away and coming back.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import StoreError
from ._history import Change, Pending, digest, file_text
from ._identity import Target
from ._lock import WriteCancelled
from ._pgschema import MIGRATIONS, VERSION_TABLE
from ._transcripts import Meta, Record, Stored, now, scrub, title_of

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["CHANNEL", "Edit", "PgStore", "describe", "pool_for"]

#: The NOTIFY channel every persona's changes are announced on (payload: its key).
CHANNEL = "toolnexus"
#: Seconds to wait for a connection before the store is called unreachable.
TIMEOUT = float(os.environ.get("TOOLNEXUS_STORE_TIMEOUT", "5"))

#: What an edit does to a memory file as read under the lock: given its bytes (None: no
#: file), the bytes to write (None: nothing), the message, and the changes to record.
Edit = Callable[[bytes | None], tuple[bytes | None, str, Sequence[Pending]]]

_pools: dict[str, ConnectionPool[Any]] = {}
_pools_lock = threading.Lock()
#: (dsn, key, identity digest) already claimed or checked by this process.
_claimed: set[tuple[str, str, str]] = set()
_migrated: set[str] = set()


def _forget_after_fork() -> None:
    # A child must not share its parent's sockets: it opens its own pools.
    _pools.clear()
    _claimed.clear()
    _migrated.clear()


# A pool retrying a server that is down logs each try; an application that configures
# logging sees them, a command line does not print them (its errors say it once).
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def describe(dsn: str) -> str:
    """The DSN as messages show it: host, port and database, never a password."""
    parts = urlsplit(dsn)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"postgresql://{host}{port}{parts.path or '/'}"


def pool_for(dsn: str) -> ConnectionPool[Any]:
    """The process's connection pool for `dsn`, opened on first use (without waiting)."""
    with _pools_lock:
        pool = _pools.get(dsn)
        if pool is None:
            try:
                from psycopg_pool import ConnectionPool  # optional: the `postgres` extra
            except ImportError:
                raise StoreError(
                    f"{describe(dsn)}: the PostgreSQL store needs psycopg: "
                    "pip install 'toolnexus[postgres]'",
                    kind="unsupported",
                ) from None
            pool = ConnectionPool(
                dsn,
                min_size=1,
                max_size=8,
                open=False,
                timeout=TIMEOUT,
                check=ConnectionPool.check_connection,
                kwargs={"connect_timeout": max(1, int(TIMEOUT)), "application_name": "toolnexus"},
            )
            pool.open(wait=False)
            _pools[dsn] = pool
        return pool


def close_pools() -> None:
    """Close every pool this process opened (at exit; tests)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
        _claimed.clear()
        _migrated.clear()
    for pool in pools:
        pool.close()


@dataclass(frozen=True, slots=True)
class PgStore:
    """One persona (`key`) in the PostgreSQL database at `dsn`.

    `name` and `identity` (IDENTITY.md's digest) claim the key on first use; a
    different identity under a claimed key is refused (`StoreError`, kind
    `claimed`), never merged.
    """

    dsn: str
    key: str
    name: str
    identity: str

    @property
    def where(self) -> str:
        """The store as messages name it."""
        return f"the PostgreSQL store {describe(self.dsn)} (key {self.key!r})"

    # -- connections -----------------------------------------------------------------

    @contextmanager
    def _connection(self, *, claim: bool = True) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection to a migrated database where this persona holds its key."""
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = pool_for(self.dsn)
        try:
            with pool.connection() as conn:
                if self.dsn not in _migrated:
                    self._migrate(conn)
                if claim and (self.dsn, self.key, self.identity) not in _claimed:
                    self._claim(conn, force=False)
                yield conn
        except PoolTimeout:
            raise StoreError(
                f"{self.where} is unreachable: no connection within {TIMEOUT:g} s",
                kind="unreachable",
            ) from None
        except psycopg.OperationalError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise StoreError(f"{self.where} is unreachable: {first}", kind="unreachable") from None

    def _migrate(self, conn: psycopg.Connection[Any]) -> int:
        """Bring the schema to this version (one transaction, under an advisory lock)."""
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('toolnexus schema'))")
            conn.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version integer NOT NULL)")
            row = conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
            version = 0 if row is None else int(row[0])
            if version > len(MIGRATIONS):
                raise StoreError(
                    f"{self.where}: its schema is version {version}, newer than this "
                    f"toolnexus knows ({len(MIGRATIONS)}): upgrade toolnexus",
                    kind="schema",
                )
            for script in MIGRATIONS[version:]:
                conn.execute(script)
            if row is None:
                conn.execute(f"INSERT INTO {VERSION_TABLE} VALUES (%s)", (len(MIGRATIONS),))
            else:
                conn.execute(f"UPDATE {VERSION_TABLE} SET version = %s", (len(MIGRATIONS),))
        _migrated.add(self.dsn)
        return len(MIGRATIONS) - version

    def _claim(self, conn: psycopg.Connection[Any], *, force: bool) -> None:
        with conn.transaction():
            conn.execute(
                "INSERT INTO toolnexus_personas (key, name, identity) VALUES (%s, %s, %s) "
                "ON CONFLICT (key) DO NOTHING",
                (self.key, self.name, self.identity),
            )
            if force:
                conn.execute(
                    "UPDATE toolnexus_personas SET name = %s, identity = %s WHERE key = %s",
                    (self.name, self.identity, self.key),
                )
            row = conn.execute(
                "SELECT name, identity FROM toolnexus_personas WHERE key = %s", (self.key,)
            ).fetchone()
        assert row is not None
        if row[1] != self.identity:
            raise StoreError(
                f"{self.where} belongs to another identity (persona {row[0]!r}, a different "
                "IDENTITY.md): give this persona its own `store_key:`, or run "
                "`toolnexus store HOME migrate --claim` to make this IDENTITY.md the key's",
                kind="claimed",
            )
        _claimed.add((self.dsn, self.key, self.identity))

    def migrate(self, *, claim: bool = False) -> int:
        """Create or upgrade the schema and claim the key; how many migrations ran.

        `claim=True` makes this IDENTITY.md the key's, replacing the one that claimed it.
        """
        _migrated.discard(self.dsn)
        with self._connection(claim=False) as conn:
            ran = self._migrate(conn)
            self._claim(conn, force=claim)
        return ran

    # -- memory ------------------------------------------------------------------------

    def read(self, target: Target) -> bytes | None:
        """A memory file's bytes as the database holds them (None: none yet)."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT body FROM toolnexus_memory WHERE key = %s AND target = %s",
                (self.key, target),
            ).fetchone()
        return None if row is None else bytes(row[0])

    def edit(
        self,
        target: Target,
        edit: Edit,
        *,
        source: str,
        cancel: threading.Event | None = None,
    ) -> str:
        """Run `edit` on the file under the persona's row lock and commit what it wrote
        with its history, in one transaction; the edit's message.

        Raises:
            StoreError: `unreachable` (nothing written, or, when the commit itself
                was cut off, said so), or what `edit` raises (nothing written).
        """
        committing = False
        try:
            with self._connection() as conn:
                with conn.transaction():
                    conn.execute(
                        "SELECT 1 FROM toolnexus_personas WHERE key = %s FOR UPDATE", (self.key,)
                    )
                    row = conn.execute(
                        "SELECT body FROM toolnexus_memory WHERE key = %s AND target = %s",
                        (self.key, target),
                    ).fetchone()
                    data = None if row is None else bytes(row[0])
                    new, message, pending = edit(data)
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

    # -- history -----------------------------------------------------------------------

    def log(
        self, target: str | None, *, limit: int | None = None, grep: str | None = None
    ) -> list[Change]:
        """Recorded changes, newest first, as `History.log` gives them from a folder."""
        where, params = ("AND target = %s", [target]) if target is not None else ("", [])
        if grep is not None:
            where += " AND (strpos(lower(coalesce(before, '')), %s) > 0"
            where += " OR strpos(lower(coalesce(after, '')), %s) > 0)"
            params += [grep.casefold(), grep.casefold()]
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT id, time, target, action, before, after, source FROM toolnexus_changes "
                f"WHERE key = %s {where} ORDER BY id DESC LIMIT %s",
                [self.key, *params, limit],
            ).fetchall()
        return [Change(int(r[0]), *r[1:]) for r in rows]

    # -- conversations -----------------------------------------------------------------

    def save(
        self,
        *,
        session: str,
        model: str | None,
        soul: str,
        records: Sequence[Record],
        create: bool = True,
    ) -> bool:
        """Append `records` to a live session (as `_transcripts.save` does in a folder);
        False when the session was removed while it ran (and not `create`)."""
        time, title = now(), scrub(title_of(records))
        with self._connection() as conn, conn.transaction():
            updated = conn.execute(
                "UPDATE toolnexus_sessions SET ended = %s, model = COALESCE(%s, model), "
                "soul = %s, title = CASE WHEN title = '' THEN %s ELSE title END "
                "WHERE key = %s AND id = %s RETURNING (SELECT COALESCE(MAX(seq), 0) FROM "
                "toolnexus_messages m WHERE m.key = %s AND m.session = %s)",
                (time, model, soul, title, self.key, session, self.key, session),
            ).fetchone()
            if updated is None:
                if not create:
                    return False
                conn.execute(
                    "INSERT INTO toolnexus_sessions (key, id, started, ended, model, soul, "
                    "title, origin) VALUES (%s, %s, %s, %s, %s, %s, %s, 'live')",
                    (self.key, session, time, time, model, soul, title),
                )
            last = 0 if updated is None else int(updated[0])
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO toolnexus_messages (key, session, seq, time, role, name, data, "
                    "text, is_error, input_tokens, output_tokens, cache_read_tokens, "
                    "cache_write_tokens) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                    "%s, %s)",
                    [
                        (
                            self.key,
                            session,
                            last + i,
                            time,
                            r.role,
                            r.name,
                            scrub(r.data),
                            scrub(r.text),
                            r.is_error,
                            *(r.usage or (None,) * 4),
                        )
                        for i, r in enumerate(records, 1)
                    ],
                )
        return True

    def sessions(self, *, limit: int | None = None) -> list[Meta]:
        """Saved sessions, the most recently started first."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT s.id, s.started, s.ended, s.model, s.soul, s.title, s.origin, "
                "COUNT(m.seq), COALESCE(SUM(m.input_tokens), 0), "
                "COALESCE(SUM(m.output_tokens), 0), COALESCE(SUM(m.cache_read_tokens), 0), "
                "COALESCE(SUM(m.cache_write_tokens), 0) FROM toolnexus_sessions s "
                "LEFT JOIN toolnexus_messages m ON m.key = s.key AND m.session = s.id "
                "WHERE s.key = %s GROUP BY s.key, s.id "
                "ORDER BY s.started DESC, s.id DESC LIMIT %s",
                (self.key, limit),
            ).fetchall()
        return [
            Meta(r[0], r[1], r[2], r[3], r[4], r[5], r[6], int(r[7]), _usage(r[8:12])) for r in rows
        ]

    def messages(self, session: str) -> list[Stored]:
        """A saved session's messages, in order."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT seq, time, role, name, data, is_error, input_tokens, output_tokens, "
                "cache_read_tokens, cache_write_tokens FROM toolnexus_messages "
                "WHERE key = %s AND session = %s ORDER BY seq",
                (self.key, session),
            ).fetchall()
        return [
            Stored(
                seq,
                time,
                role,
                name,
                data,
                bool(err),
                None if usage[0] is None else tuple(int(n or 0) for n in usage),  # type: ignore[arg-type]
            )
            for seq, time, role, name, data, err, *usage in rows
        ]

    def search(self, words: str, *, limit: int) -> list[tuple[str, str | None, str, str, str]]:
        """Messages and memory changes matching every word of `words` (else any word),
        best first: (kind, session, time, role or action, text)."""
        query = (
            "SELECT kind, session, time, role, text FROM ("
            " SELECT 'message' AS kind, session, time, role, text,"
            "  ts_rank(words, q) AS rank FROM toolnexus_messages, q"
            "  WHERE key = %(key)s AND words @@ q"
            " UNION ALL"
            " SELECT 'memory', NULL, time, action, coalesce(after, before, ''),"
            "  ts_rank(words, q) FROM toolnexus_changes, q"
            "  WHERE key = %(key)s AND words @@ q AND NOT redacted"
            ") hits ORDER BY rank DESC, time DESC LIMIT %(limit)s"
        )
        every = "WITH q AS (SELECT plainto_tsquery('english', %(words)s) AS q) "
        any_ = (
            "WITH q AS (SELECT replace(plainto_tsquery('english', %(words)s)::text, "
            "'&', '|')::tsquery AS q) "
        )
        params = {"key": self.key, "words": words, "limit": limit}
        with self._connection() as conn:
            rows = conn.execute(every + query, params).fetchall()
            if not rows:
                rows = conn.execute(any_ + query, params).fetchall()
        return [(str(r[0]), r[1], str(r[2]), str(r[3]), str(r[4])) for r in rows]

    def file_text(self, target: Target) -> str | None:
        """A memory file's text (None: none, or not UTF-8)."""
        return file_text(self.read(target))


def _usage(values: Sequence[Any]) -> tuple[int, int, int, int]:
    a, b, c, d = (int(v) for v in values)
    return a, b, c, d
