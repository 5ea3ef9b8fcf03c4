"""Durable file primitives: an inter-process lock and an atomic, fsynced rewrite.

A memory write must survive concurrent writers (threads, processes, a person
with an editor) and a crash at any instant. The recipe:

1. Take a per-file lock: a thread lock, then `fcntl.flock` on a hidden sidecar
   file (`.MEMORY.md.lock`), created on the first write and never deleted by
   us. Someone else may delete it (a `git clean`, a person tidying hidden
   files), which lets two processes lock two different inodes; so after the
   flock the lock file must still be the one at the path (else retry), and the
   writer checks that again just before its rename (else `LockLost`: the caller
   redoes its edit from the file on disk).
2. Under the lock, re-read the file from disk and compute the new text.
3. Write it to a hidden temp file in the same folder (`.MEMORY.md.<hex>.tmp`),
   flush and fsync it, `os.replace` it over the file, fsync the folder.

A forked child closes the lock descriptors it inherited, so a fork during a
write cannot keep the lock held after the parent lets go.

Readers never lock: a rename is atomic, so they see the old file or the new
one, never a torn one. Temp files are only created under the lock, so any temp
file found while holding it belongs to a dead process and is removed.

Without `fcntl` (Windows) only the thread lock applies: writers in one process
are safe, writers in several processes are not.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

try:
    import fcntl

    HAVE_FLOCK = True
except ImportError:  # pragma: no cover - not POSIX
    HAVE_FLOCK = False

__all__ = [
    "HAVE_FLOCK",
    "Lock",
    "LockLost",
    "atomic_write",
    "lock_path",
    "locked",
    "real_path",
]

_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()
# Lock-file descriptors open in this process; a forked child must not keep them.
_lock_fds: set[int] = set()


class LockLost(OSError):
    """The lock file was replaced or deleted while held; redo the edit under a new lock."""


def _after_fork_in_child() -> None:
    """Drop what a forked child inherited mid-write: thread locks and flock'd descriptors.

    Closing the child's copy of a descriptor does not unlock the parent's (flock
    is released when the last descriptor of the open file goes), so the lock stays
    the parent's and ends when the parent closes it.
    """
    global _thread_locks_guard
    _thread_locks.clear()
    _thread_locks_guard = threading.Lock()
    for fd in list(_lock_fds):
        with suppress(OSError):
            os.close(fd)
    _lock_fds.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def real_path(path: Path) -> Path:
    """Follow symlinks, so a shared USER.md stays a symlink and is locked in one place."""
    return Path(os.path.realpath(path))


def lock_path(path: Path) -> Path:
    """The hidden sidecar file that `locked` takes the lock on."""
    return path.with_name(f".{path.name}.lock")


def _temp_prefix(path: Path) -> str:
    return f".{path.name}."


def _thread_lock(path: Path) -> threading.Lock:
    key = str(path)
    with _thread_locks_guard:
        lock = _thread_locks.get(key)
        if lock is None:
            lock = _thread_locks[key] = threading.Lock()
        return lock


class Lock:
    """A held write lock; `check` says whether it still guards the file."""

    __slots__ = ("_fd", "_path")

    def __init__(self, path: Path, fd: int) -> None:
        self._path = path
        self._fd = fd

    def check(self) -> None:
        """Raise `LockLost` when the lock file at the path is no longer the one held."""
        if HAVE_FLOCK and not _same_file(self._fd, lock_path(self._path)):
            raise LockLost(f"{lock_path(self._path)} was replaced or deleted while held")


def _same_file(fd: int, path: Path) -> bool:
    held = os.fstat(fd)
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _open_lock(path: Path) -> int:
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o666)
    _lock_fds.add(fd)
    return fd


def _close_lock(fd: int) -> None:
    _lock_fds.discard(fd)
    os.close(fd)  # closing the descriptor releases the flock


@contextmanager
def locked(path: Path) -> Iterator[Lock]:
    """Hold the exclusive write lock of `path` (a resolved file path) for the block.

    Raises:
        OSError: when the folder does not exist or the lock file cannot be opened.
    """
    with _thread_lock(path):
        fd = _open_lock(path)
        try:
            if HAVE_FLOCK:
                fcntl.flock(fd, fcntl.LOCK_EX)
                # Deleted or replaced while we waited: we hold a lock nobody else sees.
                while not _same_file(fd, lock_path(path)):
                    _close_lock(fd)
                    fd = _open_lock(path)
                    fcntl.flock(fd, fcntl.LOCK_EX)
                _remove_stale_temps(path)
            yield Lock(path, fd)
        finally:
            _close_lock(fd)


def _remove_stale_temps(path: Path) -> None:
    """Delete temp files left by a writer that died: only lock holders create them."""
    prefix = _temp_prefix(path)
    with os.scandir(path.parent) as it:
        stale = [e.path for e in it if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    for name in stale:
        with suppress(FileNotFoundError):
            os.unlink(name)


def atomic_write(
    path: Path,
    data: bytes,
    *,
    fsync: bool = True,
    lock: Lock | None = None,
) -> str | None:
    """Replace `path` with `data` so that a crash leaves the old file or the new one.

    The file keeps its permission bits; a new file gets the usual umask-based ones.
    With `lock`, it is checked just before the rename (`LockLost` when it no longer
    guards the file). Returns None, or a note when the data is in place but the
    folder could not be synced (the rename may not survive a power loss).

    Raises:
        OSError: when the data could not be written; then the temp file is removed
            and `path` is untouched.
    """
    tmp = path.with_name(f"{_temp_prefix(path)}{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "wb") as f:
            if os.chmod in os.supports_fd:
                with suppress(FileNotFoundError):
                    os.chmod(f.fileno(), os.stat(path).st_mode & 0o7777)
            f.write(data)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        if lock is not None:
            lock.check()
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        try:
            _fsync_dir(path.parent)
        except OSError as exc:
            return (
                f"(the folder could not be synced: {exc.strerror or exc}; the change is in "
                "place but may not survive a power loss)"
            )
    return None


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable; a no-op where folders cannot be opened (Windows)."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
