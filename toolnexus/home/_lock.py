"""The write lock of one home file: a thread lock, then `flock` on a sidecar file.

The sidecar (`.MEMORY.md.lock` beside `MEMORY.md`) is created on the first
write, with the permission bits of the file it guards (never wider), opened
without following links (a link there is refused: `LockIsLink`), and never
deleted by us, so a person's script can hold the same lock with `flock`. Someone
else may delete it (a `git clean`), which would let two processes lock two
different files; so after the flock the lock file must still be the one at the
path (else retry), and `Lock.check` says so again just before a swap.

A waiter with a `cancel` event polls instead of blocking (1 ms, growing to 10
ms between tries), so a caller that gives up stops it within about 10 ms and
it never writes. A forked child closes the lock descriptors it inherited, so a
fork during a write cannot keep the lock held after the parent lets go.
Without `fcntl` (Windows) only the thread lock applies.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from ._openfolder import Folder

try:
    import fcntl

    HAVE_FLOCK = True
except ImportError:  # pragma: no cover - not POSIX
    HAVE_FLOCK = False

__all__ = ["HAVE_FLOCK", "Lock", "LockIsLink", "LockLost", "WriteCancelled", "locked"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()
# Lock-file descriptors open in this process; a forked child must not keep them.
_lock_fds: set[int] = set()


class LockLost(OSError):
    """The lock file was replaced or deleted while held; redo the edit under a new lock."""


class LockIsLink(OSError):
    """A link stands where the lock file goes: it is refused, never followed."""


class WriteCancelled(Exception):
    """The caller gave up before the write began: nothing was written."""


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


def _lock_name(name: str) -> str:
    return f".{name}.lock"


def _thread_lock(key: str) -> threading.Lock:
    with _thread_locks_guard:
        lock = _thread_locks.get(key)
        if lock is None:
            lock = _thread_locks[key] = threading.Lock()
        return lock


class Lock:
    """A held write lock; `check` says whether it still guards the file."""

    __slots__ = ("_cancel", "_fd", "_folder", "_name", "key")

    def __init__(
        self, folder: Folder, name: str, fd: int, key: str, cancel: threading.Event | None = None
    ) -> None:
        self._folder = folder
        self._name = name
        self._fd = fd
        self._cancel = cancel
        #: Which file this is, whatever path reached it (folder device and inode, name).
        self.key = key

    @property
    def cancelled(self) -> bool:
        """Whether the caller gave up (checked last before the write becomes visible)."""
        return self._cancel is not None and self._cancel.is_set()

    def check(self) -> None:
        """Raise `LockLost` when the lock file at the path is no longer the one held."""
        if HAVE_FLOCK and not _same_file(self._fd, self._folder, _lock_name(self._name)):
            raise LockLost(f"{self._folder.join(_lock_name(self._name))} was replaced or deleted")


def _same_file(fd: int, folder: Folder, name: str) -> bool:
    held = os.fstat(fd)
    try:
        now = folder.lstat(name)
    except FileNotFoundError:
        return False
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _guarded(folder: Folder, name: str) -> os.stat_result | None:
    try:
        return folder.lstat(name)
    except OSError:
        return None  # no file yet: the lock is made as the file itself will be


def _fit_owner(fd: int, guarded: os.stat_result | None) -> None:
    """As root, a lock root made in a person's home is handed to the file's owner.

    Root writes a person's file and keeps its owner; a lock left root's own
    (mode 0600, say) would lock that person out of their persona's memory.
    """
    if guarded is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    st = os.fstat(fd)
    if st.st_uid == 0 and guarded.st_uid != 0:
        with suppress(OSError):
            os.fchown(fd, guarded.st_uid, guarded.st_gid)


def _open_lock(folder: Folder, name: str) -> int:
    # O_NOFOLLOW: a lock "file" planted as a link cannot make us create a file elsewhere.
    lock = _lock_name(name)
    flags = os.O_CREAT | _CLOEXEC | _NOFOLLOW
    guarded = _guarded(folder, name)
    # A new lock gets the permission bits of the file it guards, never wider.
    mode = 0o666 if guarded is None else stat.S_IMODE(guarded.st_mode) & 0o666
    try:
        try:
            fd = folder.open(lock, os.O_RDWR | flags, mode)
        except PermissionError:
            # A lock made when the file was read-only (0444, say) has no write bit;
            # flock needs only an open descriptor.
            fd = folder.open(lock, os.O_RDONLY | flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP or _is_link(folder, lock):
            raise LockIsLink(
                errno.ELOOP, "is a link, and a lock file is never followed", folder.join(lock)
            ) from None
        raise
    _lock_fds.add(fd)
    _fit_owner(fd, guarded)
    return fd


def _is_link(folder: Folder, name: str) -> bool:
    try:
        return stat.S_ISLNK(folder.lstat(name).st_mode)
    except OSError:
        return False


def _wait(take: Callable[[], bool], cancel: threading.Event) -> None:
    """Poll `take` (a try-lock) until it succeeds or `cancel` is set (then `WriteCancelled`).

    The pause grows from 1 ms to 10 ms: a lock handed over quickly is taken
    quickly, and a cancelled wait lets go within about 10 ms.
    """
    pause = 0.001
    while not take():
        if cancel.wait(pause):
            raise WriteCancelled("cancelled while waiting for the lock")
        pause = min(pause * 2, 0.01)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _flock(fd: int, cancel: threading.Event | None) -> None:
    if cancel is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    elif not _try_flock(fd):
        _wait(lambda: _try_flock(fd), cancel)


def _close_lock(fd: int) -> None:
    _lock_fds.discard(fd)
    os.close(fd)  # closing the descriptor releases the flock


@contextmanager
def locked(folder: Folder, name: str, *, cancel: threading.Event | None = None) -> Iterator[Lock]:
    """Hold the exclusive write lock of `name` in `folder` for the block.

    With `cancel`, the wait polls instead of blocking, and stops when the event is
    set (`WriteCancelled`); once the lock is taken, a set event also cancels.

    Raises:
        OSError: when the lock file cannot be opened (a read-only folder, say);
            `LockIsLink` when a link stands at its path.
        WriteCancelled: when `cancel` was set before the lock was taken.
    """
    key = folder.join(name)
    if folder.fd is not None:
        st = os.fstat(folder.fd)
        key = f"{st.st_dev}:{st.st_ino}/{name}"
    thread_lock = _thread_lock(key)
    if cancel is None:
        thread_lock.acquire()
    else:
        while not thread_lock.acquire(timeout=0.01):
            if cancel.is_set():
                raise WriteCancelled("cancelled while waiting for the lock")
    fd = -1
    try:
        fd = _open_lock(folder, name)
        if HAVE_FLOCK:
            _flock(fd, cancel)
            # Deleted or replaced while we waited: we hold a lock nobody else sees.
            while not _same_file(fd, folder, _lock_name(name)):
                _close_lock(fd)
                fd = -1  # closed: never close that number again (another thread may reuse it)
                fd = _open_lock(folder, name)
                _flock(fd, cancel)
        if cancel is not None and cancel.is_set():
            raise WriteCancelled("cancelled while waiting for the lock")
        yield Lock(folder, name, fd, key, cancel)
    finally:
        if fd >= 0:
            _close_lock(fd)
        thread_lock.release()
