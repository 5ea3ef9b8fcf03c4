"""Where a home's memory, history and conversations live: the `Store` seam.

Two stores keep them: the home's folder (MEMORY.md, USER.md and the SQLite
database in `.toolnexus/`, the default) and a PostgreSQL database that many
machines share (`PgStore`, chosen by `TOOLNEXUS_STORE` or IDENTITY.md's
`store:`). Both run the same edits, with the same limits, scanning and
messages; `copy` moves everything from one to the other exactly (`toolnexus
store HOME push | pull`).
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import HomeError, StoreError
from ..home._door import MEMORY_FILES, MEMORY_ORDER, Door, memory_cap
from ..home._identity import Target
from ..home._load import find_identity, load_identity
from ..home._writer import Folder, locked
from ..memory._document import MemoryDocument
from ..memory._tool import MemoryStore, Outcome, _resolve_limits
from ._config import STORE_VARIABLE, home_store
from ._snapshot import CHANGES, MESSAGES, SESSIONS, Snapshot
from .folder import _changes as _history
from .folder._changes import Change
from .folder._state import open_state
from .postgres._store import Edit, PgStore

__all__ = [
    "FolderStore",
    "PgStore",
    "Snapshot",
    "Store",
    "configured_store",
    "copy",
    "database_store",
]


@runtime_checkable
class Store(Protocol):
    """Where a home's memory files, history and conversations live."""

    @property
    def where(self) -> str:
        """The store as messages name it."""
        ...

    def read(self, target: Target) -> bytes | None:
        """A memory file's bytes (None: no file yet)."""
        ...

    def edit(
        self, target: Target, edit: Edit, *, source: str, cancel: threading.Event | None = None
    ) -> str:
        """Apply `edit` to a memory file atomically, with its history; the edit's message."""
        ...

    def log(
        self, target: str | None, *, limit: int | None = None, grep: str | None = None
    ) -> list[Change]:
        """The history, newest first."""
        ...

    def snapshot(self) -> Snapshot:
        """Everything held, as rows."""
        ...

    def replace(self, snapshot: Snapshot) -> None:
        """Make the store hold exactly `snapshot`."""
        ...


@dataclass(frozen=True, slots=True)
class FolderStore:
    """The home's folder: MEMORY.md and USER.md, and `.toolnexus/state.db`."""

    dir: Path

    @property
    def where(self) -> str:
        """The store as messages name it."""
        return f"the folder {self.dir}"

    def _store(self, target: Target) -> MemoryStore:
        limit = _resolve_limits(self.dir, None).for_target(target)
        return MemoryStore(self.dir, target, limit=limit)

    def read(self, target: Target) -> bytes | None:
        """A memory file's bytes, read through the home's door (None: no file)."""
        path = os.fspath(self.dir / MEMORY_FILES[target])
        limit = _resolve_limits(self.dir, None).for_target(target)
        return Door(self.dir).read(path, cap=memory_cap(limit))

    def edit(
        self, target: Target, edit: Edit, *, source: str, cancel: threading.Event | None = None
    ) -> str:
        """Apply `edit` to the file under its lock, recording it in the history."""

        def change(_doc: MemoryDocument, data: bytes | None) -> Outcome:
            new, message, pending = edit(data)
            return new, message, tuple(pending)

        return self._store(target)._write(change, source=source, cancel=cancel)

    def log(
        self, target: str | None, *, limit: int | None = None, grep: str | None = None
    ) -> list[Change]:
        """The history, newest first (empty when there is none yet)."""
        state = open_state(self.dir, create=False)
        if state is None:
            return []
        return _history.history(state, target, limit=limit, grep=grep)

    def snapshot(self) -> Snapshot:
        """The memory files and every row of the state database."""
        memory = tuple((t, data) for t in MEMORY_ORDER if (data := self.read(t)) is not None)
        state = open_state(self.dir, create=False)
        if state is None:
            return Snapshot(memory, (), (), (), ())
        with state.reading() as conn:
            changes = conn.execute(f"SELECT {CHANGES} FROM memory_changes ORDER BY id").fetchall()
            states = conn.execute(
                "SELECT digest, body FROM memory_states ORDER BY digest"
            ).fetchall()
            sessions = conn.execute(f"SELECT {SESSIONS} FROM sessions ORDER BY id").fetchall()
            messages = conn.execute(
                f"SELECT {MESSAGES} FROM messages ORDER BY session, seq"
            ).fetchall()
        return Snapshot(
            memory,
            tuple((*r[:9], bool(r[9])) for r in changes),
            tuple((d, zlib.decompress(b)) for d, b in states),
            tuple(tuple(r) for r in sessions),
            tuple((*r[:7], bool(r[7]), *r[8:]) for r in messages),
        )

    def replace(self, snapshot: Snapshot) -> None:
        """Write the memory files (atomically, under their locks), then the database's rows."""
        held = dict(snapshot.memory)
        for target in MEMORY_ORDER:
            data = held.get(target)
            if data is None:
                self._remove(target)
            else:
                self._store(target)._write(_put(data), source="pull")
        state = open_state(self.dir, create=True)
        assert state is not None
        with state.transaction() as conn:
            conn.execute("UPDATE memory_changes_indexed SET upto = 0")
            for table in ("memory_changes", "memory_states", "messages", "sessions"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute(
                "INSERT INTO memory_changes_fts (memory_changes_fts) VALUES ('delete-all')"
            )
            conn.executemany(
                f"INSERT INTO memory_changes ({CHANGES}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                snapshot.changes,
            )
            conn.executemany(
                "INSERT INTO memory_states (digest, body) VALUES (?, ?)",
                [(d, zlib.compress(b, 1)) for d, b in snapshot.states],
            )
            conn.executemany(
                f"INSERT INTO sessions ({SESSIONS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                snapshot.sessions,
            )
            conn.executemany(
                f"INSERT INTO messages ({MESSAGES}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                snapshot.messages,
            )

    def _remove(self, target: Target) -> None:
        name = MEMORY_FILES[target]
        folder, name = Folder.of(Door(self.dir), os.fspath(self.dir / name))
        try:
            with locked(folder, name):
                try:
                    folder.unlink(name)
                except FileNotFoundError:
                    return
                folder.sync()
        finally:
            folder.close()


def _put(data: bytes) -> Callable[[MemoryDocument, bytes | None], Outcome]:
    """A change that leaves the file as `data` and records nothing (its history comes along)."""
    return lambda _doc, _old: (data, "", ())


def configured_store(dir: str | os.PathLike[str]) -> PgStore | None:
    """The database store the home `dir` uses, or None for its folder (also when its
    IDENTITY.md cannot be read: composing reports that).

    Raises:
        HomeError: when `TOOLNEXUS_STORE` is set but is not a PostgreSQL address,
            or the home has no IDENTITY.md to claim the key with.
    """
    home = Path(dir)
    try:
        found = find_identity(home)
    except HomeError:
        found = None
    if found is None and not os.environ.get(STORE_VARIABLE, "").strip():
        return None
    return home_store(home, found)


def database_store(dir: str | os.PathLike[str]) -> PgStore:
    """The database store the home `dir` is configured for.

    Raises:
        HomeError: when the home or its IDENTITY.md is missing or invalid, or no
            store is configured (`TOOLNEXUS_STORE`, IDENTITY.md's `store:`).
    """
    home = Path(dir)
    store = home_store(home, load_identity(home))
    if store is None:
        raise HomeError(
            f"{home}: no database store is configured: set TOOLNEXUS_STORE or "
            "IDENTITY.md's `store:` to a postgresql:// address"
        )
    return store


def copy(source: Store, destination: Store, *, force: bool = False) -> Snapshot:
    """Make `destination` hold exactly what `source` holds; the snapshot copied.

    Raises:
        StoreError: (kind `not_empty`) when the destination holds something else and
            not `force`: a copy never overwrites memory by surprise.
    """
    snapshot = source.snapshot()
    if not force:
        there = destination.snapshot()
        if not there.empty and there != snapshot:
            raise StoreError(
                f"{destination.where} already holds memory, history or conversations "
                f"that {source.where} does not: copying would overwrite them (force=True, "
                "or --force on the command line, replaces them)",
                kind="not_empty",
            )
    destination.replace(snapshot)
    return snapshot
