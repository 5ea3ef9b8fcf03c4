"""The folder's memory files: an edit applied under the file's lock and recorded in the history.

The recipe of a write is `home/_writer.py`'s (the lock, a swap that never
loses a concurrent save); here it is wrapped with the history's protocol:
under the lock, an outside edit found on disk is recorded first, then the
edit runs on the file as it is now, the new bytes are swapped in and recorded
at once. A history that cannot be kept never stops the write (SPEC §10): busy,
damaged, unreadable, on a full disk, or a link where the database or
`.toolnexus/` should be (never written through), the note lands and its result
says it is not recorded; `toolnexus check` names the problem and the repair.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from ...errors import HistoryError, HomeFileError, MemoryEditError
from ...home._door import MEMORY_FILES, Door, memory_cap
from ...home._identity import Target
from ...home._writer import (
    Folder,
    LockIsLink,
    LockLost,
    ReadOnlyFile,
    SwapConflict,
    locked,
    measure,
    update,
)
from ...memory._match import NOTHING
from .._records import Pending
from . import _changes
from ._state import DB_NAME, STATE_DIR, State, open_state, unusable

__all__ = ["remove_file", "write_file"]

#: How often an edit is redone when its lock file was deleted under it.
_LOCK_RETRIES = 20

#: What an edit makes of a file's bytes (None: no file): the bytes to write (None:
#: nothing), the message, and the changes to record.
Outcome = tuple[bytes | None, str, tuple[Pending, ...]]


def write_file(
    home: Path,
    target: Target,
    edit: Callable[[bytes | None], Outcome],
    *,
    source: str,
    limit: int,
    fsync: bool = True,
    cancel: threading.Event | None = None,
    record_found: bool = False,
    then: Callable[[], str] | None = None,
) -> str:
    """Under the file's lock: record an outside edit if any, run `edit` on the file as it
    is now, write its bytes (if any) and record what it did, with `source`.

    `record_found` records the file as found even when nothing is written and
    the history does not exist yet: reading the log does that. `then` runs
    under the lock once the file is in place (or found unchanged); what it
    returns ends the message.

    Raises:
        MemoryEditError: `io` when the file or its lock is refused (a link out, a
            read-only file, a full disk), or what `edit` raises; nothing written.
        WriteCancelled: when `cancel` was set before anything was written.
    """
    name = MEMORY_FILES[target]
    path = os.path.join(home, name)
    folder: Folder | None = None
    try:
        folder, inside = Folder.of(Door(home), path)
        for _ in range(_LOCK_RETRIES):
            try:
                return _write_locked(
                    home,
                    target,
                    folder,
                    inside,
                    edit,
                    source=source,
                    cap=memory_cap(limit),
                    shown=path,
                    fsync=fsync,
                    cancel=cancel,
                    record_found=record_found,
                    then=then,
                )
            except LockLost:
                continue  # the lock file was deleted under us: redo the edit from disk
    except HomeFileError as exc:  # the door refused the file (a link out, a FIFO, ...)
        raise MemoryEditError(f"cannot write {name}: {exc}. {NOTHING}", kind="io") from None
    except LockIsLink as exc:
        raise MemoryEditError(
            f"cannot write {name}: its lock file {exc.filename} {exc.strerror}; "
            f"a person must remove that link. {NOTHING}",
            kind="io",
        ) from None
    except ReadOnlyFile as exc:
        raise MemoryEditError(
            f"cannot write {name}: it is {exc.strerror}: a person marked it so. Make "
            f"it writable (chmod u+w {name}) to let the persona write to it. {NOTHING}",
            kind="io",
        ) from None
    except SwapConflict:
        msg = "it kept changing while being written (someone keeps saving it); try again"
        raise MemoryEditError(f"cannot write {name}: {msg}. {NOTHING}", kind="io") from None
    except HistoryError as exc:
        if exc.kind != "state":
            raise
        raise MemoryEditError(
            f"cannot write {name}: its history cannot be kept: {exc}. {NOTHING}",
            kind="io",
        ) from None
    except sqlite3.Error as exc:
        raise MemoryEditError(
            f"cannot write {name}: its history ({STATE_DIR}/) cannot be written: {exc}. {NOTHING}",
            kind="io",
        ) from None
    except OSError as exc:
        raise MemoryEditError(
            f"cannot write {name}: {exc.strerror or exc} ({exc.filename or path}). "
            f"Check that the folder is writable and has space. {NOTHING}",
            kind="io",
        ) from exc
    finally:
        if folder is not None:
            folder.close()
    raise MemoryEditError(
        f"cannot write {name}: its lock file .{name}.lock keeps being "
        f"deleted by something else. {NOTHING}",
        kind="io",
    )


def _write_locked(
    home: Path,
    target: Target,
    folder: Folder,
    name: str,
    edit: Callable[[bytes | None], Outcome],
    *,
    source: str,
    cap: int,
    shown: str,
    fsync: bool,
    cancel: threading.Event | None,
    record_found: bool,
    then: Callable[[], str] | None,
) -> str:
    state: State | None = None
    broken: str | None = None  # why the history cannot be kept (the write lands all the same)
    outcome: list[tuple[bytes | None, bytes | None, str, tuple[Pending, ...]]] = []

    def lost(exc: BaseException) -> None:
        nonlocal state, broken
        state = None
        if broken is None:
            broken = str(exc) if isinstance(exc, HistoryError) else _why(home, exc)

    def apply(data: bytes | None) -> bytes | None:
        if state is not None:
            try:
                _changes.sync(state, target, data)  # someone else's version goes first
            except (sqlite3.Error, HistoryError) as exc:
                lost(exc)
        new, message, pending = edit(data)
        outcome[:] = [(data, new, message, pending)]
        return new

    def record() -> None:
        # The new bytes are in place: record them at once (before the folder sync).
        nonlocal state
        base, new, _, pending = outcome[-1]
        if new is None or new == base or not pending or broken is not None:
            return
        try:
            if state is None:  # the first write that lands makes the history
                state = open_state(home, create=True)
                assert state is not None
                _changes.sync(state, target, base)  # the file as found goes first
            _changes.record(state, target, pending, new, source)
        except (sqlite3.Error, HistoryError) as exc:  # written: the next write records it
            lost(exc)

    with locked(folder, name, cancel=cancel) as lock:
        # Under the lock, so no other writer of this file records in between. The
        # history is created by the first write that lands, not by a refused one.
        try:
            state = open_state(home, create=record_found)
        except (sqlite3.Error, HistoryError) as exc:
            lost(exc)
        try:
            note = update(
                folder,
                name,
                apply,
                lock=lock,
                cap=cap,
                shown=shown,
                fsync=fsync,
                swapped=record,
            )
            if then is not None:
                base, new, said, pending = outcome[-1]
                outcome[-1] = (base, new, said + then(), pending)
        except HomeFileError as exc:
            if exc.reason == "too_large" and state is not None:  # by size and digest
                size, sha = measure(folder, name)
                with suppress(sqlite3.Error, HistoryError):
                    _changes.sync(state, target, None, size=size, sha=sha)
            raise
    base, new, message, pending = outcome[-1]
    if broken is not None and new is not None and new != base and pending:
        unrecorded = f"(not recorded in the history: {broken}; `toolnexus check` names the repair)"
        note = f"{note} {unrecorded}" if note else unrecorded
    return message if not note else f"{message} {note}"


def _why(home: Path, exc: BaseException) -> str:
    """What SQLite's refusal of the history means, in words (busy, damaged, disk full)."""
    if isinstance(exc, sqlite3.Error):
        return str(unusable(home / STATE_DIR / DB_NAME, exc))
    return str(exc)


def remove_file(home: Path, target: Target) -> None:
    """Delete a memory file under its lock (a pull that holds none of it)."""
    name = MEMORY_FILES[target]
    folder, inside = Folder.of(Door(home), os.fspath(home / name))
    try:
        with locked(folder, inside):
            try:
                folder.unlink(inside)
            except FileNotFoundError:
                return
            folder.sync()
    finally:
        folder.close()
