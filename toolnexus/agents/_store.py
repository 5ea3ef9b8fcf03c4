"""Durable file primitives: an inter-process lock and an atomic, fsynced rewrite.

A memory write must survive concurrent writers (threads, processes, a person
with an editor) and a crash at any instant. The recipe:

1. Take a per-file lock: a thread lock, then `fcntl.flock` on a hidden sidecar
   file (`.MEMORY.md.lock`), created on the first write and never deleted
   (deleting a lock file lets two processes lock two different inodes).
2. Under the lock, re-read the file from disk and compute the new text.
3. Write it to a hidden temp file in the same folder (`.MEMORY.md.<hex>.tmp`),
   flush and fsync it, `os.replace` it over the file, fsync the folder.

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
    "atomic_write",
    "lock_path",
    "locked",
    "read_bytes",
    "real_path",
]

_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()


def _forget_thread_locks() -> None:
    """Drop inherited thread locks in a forked child: their holders do not exist there."""
    global _thread_locks_guard
    _thread_locks.clear()
    _thread_locks_guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_thread_locks)


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


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive write lock of `path` (a resolved file path) for the block.

    Raises:
        OSError: when the folder does not exist or the lock file cannot be opened.
    """
    with _thread_lock(path):
        fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o666)
        try:
            if HAVE_FLOCK:
                fcntl.flock(fd, fcntl.LOCK_EX)
                _remove_stale_temps(path)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock


def _remove_stale_temps(path: Path) -> None:
    """Delete temp files left by a writer that died: only lock holders create them."""
    prefix = _temp_prefix(path)
    with os.scandir(path.parent) as it:
        stale = [e.path for e in it if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    for name in stale:
        with suppress(FileNotFoundError):
            os.unlink(name)


def read_bytes(path: Path) -> bytes | None:
    """Read the file's bytes; None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def atomic_write(path: Path, data: bytes, *, fsync: bool = True) -> None:
    """Replace `path` with `data` so that a crash leaves the old file or the new one.

    The file keeps its permission bits; a new file gets the usual umask-based ones.
    On any error the temp file is removed and `path` is untouched.
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
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        _fsync_dir(path.parent)


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
