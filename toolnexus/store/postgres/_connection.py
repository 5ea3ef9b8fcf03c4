"""Connections to a PostgreSQL store: one pool per address and process, the schema brought
up to date, and a persona's key claimed by one identity.

A connection that broke (the server restarted, the network dropped) is checked
and replaced when it is next taken from the pool. Once a call found the server
unreachable, the next one first tries one direct connection: while that fails,
the call fails at once with `StoreError` (kind `unreachable`) naming the store
and why; once it works, the pool (which backs off between its own retries) is
replaced by a fresh one, so a session is back as soon as the server is.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import StoreError
from .._address import scrubbed, shown
from ._migrations import MIGRATIONS, VERSION_TABLE

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = [
    "CHANNEL",
    "TIMEOUT_VARIABLE",
    "PgConnection",
    "close_pools",
    "pool_for",
    "timeout",
]

#: The NOTIFY channel every persona's changes are announced on (payload: its key).
CHANNEL = "toolnexus"
#: The environment variable with the seconds to wait for a connection before the store is
#: called unreachable (default 5): a memory call waits at most that long.
TIMEOUT_VARIABLE = "TOOLNEXUS_STORE_TIMEOUT"


def timeout() -> float:
    """Seconds a call waits for a connection (`TOOLNEXUS_STORE_TIMEOUT`, default 5)."""
    try:
        value = float(os.environ.get(TIMEOUT_VARIABLE, "5"))
    except ValueError:
        return 5.0
    return value if 0 < value <= 600 else 5.0


_pools: dict[str, ConnectionPool[Any]] = {}
_pools_lock = threading.Lock()
#: (dsn, key, identity digest) already claimed or checked by this process.
_claimed: set[tuple[str, str, str]] = set()
_migrated: set[str] = set()
#: The connection each thread holds per address while a call runs (see `_connection`).
_held = threading.local()
#: Addresses whose last call found the server unreachable (see the module's docstring).
_down: set[str] = set()


def _forget_after_fork() -> None:
    # A child must not share its parent's sockets: it opens its own pools.
    _pools.clear()
    _claimed.clear()
    _migrated.clear()
    _down.clear()
    _held.__dict__.clear()


# A pool retrying a server that is down logs each try; an application that configures
# logging sees them, a command line does not print them (its errors say it once).
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def pool_for(dsn: str) -> ConnectionPool[Any]:
    """The process's connection pool for `dsn`, opened on first use (without waiting)."""
    with _pools_lock:
        pool = _pools.get(dsn)
        if pool is None:
            try:
                from psycopg_pool import ConnectionPool  # optional: the `postgres` extra
            except ImportError:
                raise StoreError(
                    f"{shown(dsn)}: the PostgreSQL store needs psycopg: "
                    "pip install 'toolnexus[postgres]'",
                    kind="unsupported",
                ) from None
            pool = ConnectionPool(
                dsn,
                min_size=1,
                max_size=8,
                open=False,
                timeout=timeout(),
                check=ConnectionPool.check_connection,
                kwargs=_connect_options(),
            )
            pool.open(wait=False)
            _pools[dsn] = pool
        return pool


def _connect_options() -> dict[str, Any]:
    """How each pooled connection is opened: a bounded connect, a bounded wait for the
    persona's row lock (a writer frozen while holding it cannot stall every machine),
    and TCP keepalives so a vanished peer is noticed."""
    wait = timeout()
    return {
        "connect_timeout": max(2, int(wait)),
        "application_name": "toolnexus",
        "options": f"-c lock_timeout={int(wait * 1000)}",
        "keepalives": 1,
        "keepalives_idle": 30,
        "keepalives_interval": 10,
        "keepalives_count": 3,
    }


def _renew_pool(dsn: str) -> None:
    """Replace `dsn`'s pool by a fresh one (the server is back; the old pool may be
    waiting out a back-off). Connections still out close when they are returned."""
    with _pools_lock:
        old = _pools.pop(dsn, None)
        _migrated.discard(dsn)
    if old is not None:
        old.close(timeout=0)


def close_pools() -> None:
    """Close every pool this process opened (at exit; tests)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
        _claimed.clear()
        _migrated.clear()
        _down.clear()
    for pool in pools:
        pool.close()


@dataclass(frozen=True, slots=True)
class PgConnection:
    """One persona (`key`) in the PostgreSQL database at `dsn`: its connections, the
    schema, and the key's claim. `PgStore` and its parts reach the database through it.

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
        return f"the PostgreSQL store {shown(self.dsn)} (key {self.key!r})"

    # -- connections -----------------------------------------------------------------

    @contextmanager
    def connection(
        self, *, claim: bool = True, migrate: bool = True
    ) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection to a migrated database where this persona holds its key.

        A call made while this thread already holds one for the same address (a
        history read inside an edit's locked transaction) shares it: it sees what the
        transaction sees, and a pool of writers each waiting for a second connection
        cannot starve.
        """
        import psycopg
        from psycopg_pool import PoolTimeout

        held: dict[str, psycopg.Connection[Any]] = _held.__dict__.setdefault("conns", {})
        if self.dsn in held:
            conn = held[self.dsn]
            if claim and (self.dsn, self.key, self.identity) not in _claimed:
                self._claim(conn, force=False)  # another persona in the same database
            yield conn
            return
        if self.dsn in _down:
            why = _why_not(self.dsn)
            if why is not None:
                raise self._unreachable(why)
            _renew_pool(self.dsn)
            _down.discard(self.dsn)
        pool = pool_for(self.dsn)
        try:
            with pool.connection() as conn:
                if migrate and self.dsn not in _migrated:
                    self._migrate(conn)
                if claim and (self.dsn, self.key, self.identity) not in _claimed:
                    self._claim(conn, force=False)
                held[self.dsn] = conn
                try:
                    yield conn
                finally:
                    del held[self.dsn]
        except PoolTimeout:
            _down.add(self.dsn)
            # The pool already waited: the reason is asked for briefly (libpq's least, 2 s).
            why = _why_not(self.dsn, wait=2) or f"no connection within {timeout():g} s"
            raise self._unreachable(why) from None
        except psycopg.errors.LockNotAvailable:
            raise StoreError(
                f"{self.where} is busy: another writer has held the persona's lock for over "
                f"{timeout():g} s ({TIMEOUT_VARIABLE}); try again",
                kind="failed",
            ) from None
        except psycopg.Error as exc:
            why = scrubbed(_first_line(exc), self.dsn)
            if not _lost(exc):
                raise StoreError(f"{self.where} refused: {why}", kind="failed") from None
            _down.add(self.dsn)
            raise self._unreachable(why) from None

    def _unreachable(self, why: str) -> StoreError:
        return StoreError(f"{self.where} is unreachable: {why}", kind="unreachable")

    def _migrate(self, conn: psycopg.Connection[Any]) -> int:
        """Bring the schema to this version (one transaction, under an advisory lock); a
        schema already current is only read, so a role without CREATE can use it."""
        with conn.transaction():
            exists = conn.execute("SELECT to_regclass(%s)", (VERSION_TABLE,)).fetchone()
            row = None
            if exists is not None and exists[0] is not None:
                row = conn.execute(f"SELECT version FROM {VERSION_TABLE}").fetchone()
        if row is not None and int(row[0]) == len(MIGRATIONS):
            _migrated.add(self.dsn)
            return 0
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
        self._check_claim(row[0], row[1])
        _claimed.add((self.dsn, self.key, self.identity))

    def _check_claim(self, name: str | None, identity: str | None) -> None:
        if identity != self.identity:
            _claimed.discard((self.dsn, self.key, self.identity))
            raise StoreError(
                f"{self.where} belongs to another identity (persona {name!r}, a different "
                "IDENTITY.md): give this persona its own `store_key:`, or run "
                "`toolnexus store HOME migrate --claim` to make this IDENTITY.md the key's",
                kind="claimed",
            )

    def lock_row(self, conn: psycopg.Connection[Any]) -> None:
        """Take the persona's row lock for this transaction (writers on every machine take
        turns on it), and check the key is still this identity's: a claim handed to
        another IDENTITY.md since this process last looked is refused, not written over."""
        row = conn.execute(
            "SELECT name, identity FROM toolnexus_personas WHERE key = %s FOR UPDATE",
            (self.key,),
        ).fetchone()
        self._check_claim(*(row if row is not None else (None, None)))

    def migrate(self, *, claim: bool = False) -> int:
        """Create or upgrade the schema and claim the key; how many migrations ran.

        `claim=True` makes this IDENTITY.md the key's, replacing the one that claimed it.
        """
        with self.connection(claim=False, migrate=False) as conn:
            ran = self._migrate(conn)
            self._claim(conn, force=claim)
        return ran


def _lost(exc: BaseException) -> bool:
    """Whether `exc` says the connection itself is gone (not that a statement failed)."""
    import psycopg

    state = getattr(exc, "sqlstate", None)
    if state is None:
        return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))
    # 08: connection exceptions; 57P01-57P03: the server shutting down or starting up.
    return state.startswith("08") or state in {"57P01", "57P02", "57P03"}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _why_not(dsn: str, *, wait: float | None = None) -> str | None:
    """Why a connection to `dsn` fails now (a refused port, a wrong password, no
    password given), told by one direct try of at most `wait` seconds (default the
    store's timeout); None when it works again."""
    import psycopg

    try:
        psycopg.connect(dsn, connect_timeout=max(2, int(wait or timeout()))).close()
    except psycopg.Error as exc:
        return scrubbed(_first_line(exc).removeprefix("connection failed: "), dsn)
    return None


async def notifications(store: PgConnection, *, retry: float = 1.0) -> AsyncIterator[None]:
    """Yield whenever a change to `store`'s persona is committed, by any process on any
    machine (LISTEN / NOTIFY), and once as soon as it listens.

    A broken connection is opened again every `retry` seconds; once it is back,
    it yields once more (changes made meanwhile were not announced to it).
    """
    import asyncio  # here: `toolnexus soul` never starts an event loop

    import psycopg  # optional: the `postgres` extra

    while True:
        try:
            # The pool's options (keepalives: a listener on a dead link hears it break).
            options = _connect_options() | {"application_name": "toolnexus listen"}
            conn = await psycopg.AsyncConnection.connect(store.dsn, autocommit=True, **options)
        except psycopg.OperationalError:
            await asyncio.sleep(retry)
            continue
        try:
            await conn.execute(f"LISTEN {CHANNEL}")
            yield  # listening: whatever happened before is for the caller to read
            async for note in conn.notifies():
                if note.payload == store.key:
                    yield
        except psycopg.OperationalError:
            await asyncio.sleep(retry)
        finally:
            await conn.close()
