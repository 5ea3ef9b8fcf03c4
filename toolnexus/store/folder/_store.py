"""`FolderStore`: a home's memory files, history and conversations kept in the home itself.

MEMORY.md and USER.md are files (written by `_files` under their locks); the
history and the conversations are rows of `.toolnexus/state.db` (`_changes`,
`_transcripts`, `_search`), which the first write that needs it creates and no
read ever does.
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import MemoryEditError
from ...home._door import MEMORY_FILES, MEMORY_ORDER, Door, memory_cap
from ...home._identity import Target
from ...home._identity_file import resolve_limits
from ...home._memo import parsed
from ...memory._document import MemoryDocument, parse_memory
from .._protocol import Edit, Outcome
from .._snapshot import CHANGES, MESSAGES, SESSIONS, Snapshot

if TYPE_CHECKING:
    from ._database import FolderRecords, FolderReview, FolderTalk

# The SQLite parts (`_files`, `_state`, `_database`) are imported where they are
# used: composing a soul reads the memory files alone, and `toolnexus soul` loads
# no sqlite3.

__all__ = ["FolderStore"]


@dataclass(frozen=True, slots=True)
class FolderStore:
    """The home's folder: MEMORY.md and USER.md, and `.toolnexus/state.db`."""

    dir: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "dir", Path(self.dir))

    @property
    def where(self) -> str:
        """The store as messages name it."""
        return f"the folder {self.dir}"

    @property
    def keeps_trust_marks(self) -> bool:
        """Trust marks live in `.toolnexus/` beside the files they vouch for."""
        return True

    @property
    def announces_changes(self) -> bool:
        """A folder's changes are seen by watching its files."""
        return False

    @property
    def forgotten_where(self) -> str:
        """Where forgotten text goes: the rows are overwritten in place."""
        return "overwritten on disk"

    # -- memory files ------------------------------------------------------------------

    def read(self, target: Target) -> bytes | None:
        """A memory file's bytes, read through the home's door (None: no file)."""
        path = os.fspath(self.dir / MEMORY_FILES[target])
        limit = resolve_limits(self.dir).for_target(target)
        return Door(self.dir).read(path, cap=memory_cap(limit))

    def memory_file(self, target: Target, *, limit: int) -> tuple[str, MemoryDocument] | None:
        """A memory file's hash and parse, memoised by content (None: no file): an
        unchanged file is not even read again."""
        path = os.fspath(self.dir / MEMORY_FILES[target])
        return parsed(Door(self.dir), "memory", path, _parse_memory, cap=memory_cap(limit))

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
        """Apply `edit` to the file under its lock, recording it in the history."""
        from ._files import write_file

        return write_file(
            self.dir,
            target,
            edit,
            source=source,
            limit=limit,
            fsync=fsync,
            cancel=cancel,
            then=then,
        )

    def sync(self, target: Target, *, limit: int) -> None:
        """Record the file as found when someone else wrote it since the last record."""
        from ._files import write_file
        from ._state import open_state

        if open_state(self.dir, create=False) is None and not os.path.lexists(
            self.dir / MEMORY_FILES[target]
        ):
            return  # nothing ever written, nothing to record: create nothing
        try:
            write_file(self.dir, target, _nothing, source="outside", limit=limit, record_found=True)
        except MemoryEditError as exc:
            if exc.kind not in ("io", "invalid"):
                raise
            # The file is refused (too big, not UTF-8, a link out): what could be
            # recorded of it was; the history is still worth reading.

    # -- history and conversations -------------------------------------------------------

    def records(self) -> FolderRecords | None:
        """The memory history in `.toolnexus/state.db` (None: no database yet)."""
        from ._database import FolderRecords
        from ._state import open_state

        state = open_state(self.dir, create=False)
        return None if state is None else FolderRecords(state)

    def talk(self, *, create: bool = False) -> FolderTalk | None:
        """The saved conversations in `.toolnexus/state.db` (None: no database yet, and
        not `create`)."""
        from ._database import FolderTalk
        from ._state import open_state

        state = open_state(self.dir, create=create)
        return None if state is None else FolderTalk(state)

    def review(self, *, create: bool = False) -> FolderReview | None:
        """The writes held for review in `.toolnexus/state.db` (None: no database yet, and
        not `create`)."""
        from ._database import FolderReview
        from ._state import open_state

        state = open_state(self.dir, create=create)
        return None if state is None else FolderReview(state)

    def health(self) -> list[str]:
        """Problems with `.toolnexus/` or its database (a link, damage, permissions)."""
        from ._state import state_problems  # sqlite3 only when asked

        return state_problems(self.dir)

    def failures(self) -> AbstractContextManager[None]:
        """SQLite refusing `.toolnexus/state.db` (busy, damaged, read-only) as a HistoryError."""
        from ._state import state_errors  # sqlite3 only when the state is used

        return state_errors(self.dir)

    async def notifications(self) -> AsyncIterator[None]:
        """Nothing to listen to: a folder's changes are seen by watching its files."""
        nothing: tuple[None, ...] = ()
        for item in nothing:  # an async generator that ends at once
            yield item

    # -- copying -----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The memory files and every row of the state database."""
        from ._state import open_state

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
        from ._files import remove_file, write_file
        from ._state import open_state

        held = dict(snapshot.memory)
        limits = resolve_limits(self.dir)
        for target in MEMORY_ORDER:
            data = held.get(target)
            if data is None:
                remove_file(self.dir, target)
            else:
                write_file(
                    self.dir,
                    target,
                    _put(data),
                    source="pull",
                    limit=limits.for_target(target),
                )
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


def _parse_memory(text: str, path: Path) -> MemoryDocument:
    return parse_memory(text)


def _nothing(data: bytes | None) -> Outcome:
    """An edit that writes nothing: the file as found is recorded, if it changed."""
    return None, "", ()


def _put(data: bytes) -> Edit:
    """An edit that leaves the file as `data` and records nothing (its history comes along)."""
    return lambda _old: (data, "", ())
