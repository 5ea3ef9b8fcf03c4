"""Durable writes of one home file: the lock, and a swap that never loses a concurrent edit.

A memory write must survive concurrent writers (threads, processes, a person
with an editor), a crash at any instant, and a home whose files are links. The
recipe:

1. Find where the file really lives (`Folder.of`): a link is followed only
   inside the home (`_files.Door`), and every later step goes through a
   descriptor of that folder, opened without following links, so nothing is
   ever created, written or deleted outside the home.
2. Take a per-file lock: a thread lock, then `fcntl.flock` on a hidden sidecar
   file (`.MEMORY.md.lock`), created on the first write and never deleted by
   us. Someone else may delete it (a `git clean`), which lets two processes lock
   two different files; so after the flock the lock file must still be the one
   at the path (else retry), and the writer checks that again just before its
   swap (else `LockLost`: the caller redoes its edit from the file on disk).
3. Under the lock, read the file, refuse it when it has no write permission
   bit (even for root), and compute the new bytes.
4. Write them to a temp name only this tool uses (`.MEMORY.md.toolnexus-<8
   hex>.tmp`), fsync, check the file's stat signature is still the one read,
   and swap it in. A person's editor does not take our lock, so the swap must
   hand back exactly what it replaced: on Linux `renameat2(RENAME_EXCHANGE)`
   swaps the two names atomically and the displaced file is read back; if it is
   not the version the edit was made on (someone saved in between), the swap is
   undone at once and the edit is applied again to their version (bounded).
   Elsewhere the file is re-read just before a plain rename, which leaves a
   short window. Stale temps of dead writers are swept once per process.
5. fsync the folder.

A forked child closes the lock descriptors it inherited, so a fork during a
write cannot keep the lock held after the parent lets go. Readers never lock:
a rename is atomic, so they see the old file or the new one, never a torn one.
Without `fcntl` (Windows) only the thread lock applies: writers in one process
are safe, writers in several processes are not.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from ..errors import HomeFileError
from ._files import READ_FLAGS, read_fd, refusal, signature
from ._folder import Folder

try:
    import fcntl

    HAVE_FLOCK = True
except ImportError:  # pragma: no cover - not POSIX
    HAVE_FLOCK = False

__all__ = [
    "HAVE_FLOCK",
    "TEMP_SUFFIX",
    "Folder",
    "Lock",
    "LockLost",
    "ReadOnlyFile",
    "SwapConflict",
    "locked",
    "temp_name",
    "update",
]

#: Every temp file this tool writes is `.<file>.toolnexus-<8 hex>.tmp`: no other name is
#: ever cleaned up.
TEMP_SUFFIX = ".tmp"
#: How often a swap is redone when someone keeps saving the file in between.
SWAP_TRIES = 8

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()
# Lock-file descriptors open in this process; a forked child must not keep them.
_lock_fds: set[int] = set()


class LockLost(OSError):
    """The lock file was replaced or deleted while held; redo the edit under a new lock."""


class ReadOnlyFile(OSError):
    """The file has no write permission bit: a person marked it read-only, so it is not replaced."""


class SwapConflict(OSError):
    """The file kept changing under the swap, `SWAP_TRIES` times in a row."""


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


def temp_name(name: str) -> str:
    """A fresh temp name to write `name` through: a pattern only this tool uses."""
    return f".{name}.toolnexus-{secrets.token_hex(4)}{TEMP_SUFFIX}"


def _is_temp_of(entry: str, name: str) -> bool:
    prefix = f".{name}.toolnexus-"
    token = entry[len(prefix) : -len(TEMP_SUFFIX)]
    return (
        entry.startswith(prefix)
        and entry.endswith(TEMP_SUFFIX)
        and len(token) == 8
        and all(c in "0123456789abcdef" for c in token)
    )


#: Files whose folder this process has swept of stale temps (once each, not per write).
_swept: set[str] = set()


def _sweep(folder: Folder, name: str, key: str) -> None:
    """Remove temps of `name` left by writers that died (only lock holders create them)."""
    if key in _swept:
        return
    where: Any = folder.path
    if folder.fd is not None and os.scandir in os.supports_fd:
        where = folder.fd  # the folder we hold, not whatever the path names now
    with os.scandir(where) as it:
        stale = [e.name for e in it if _is_temp_of(e.name, name)]
    for entry in stale:
        with suppress(FileNotFoundError):
            folder.unlink(entry)
    _swept.add(key)


def _lock_name(name: str) -> str:
    return f".{name}.lock"


# -- the lock ----------------------------------------------------------------------------------


def _thread_lock(key: str) -> threading.Lock:
    with _thread_locks_guard:
        lock = _thread_locks.get(key)
        if lock is None:
            lock = _thread_locks[key] = threading.Lock()
        return lock


class Lock:
    """A held write lock; `check` says whether it still guards the file."""

    __slots__ = ("_fd", "_folder", "_name", "key")

    def __init__(self, folder: Folder, name: str, fd: int, key: str) -> None:
        self._folder = folder
        self._name = name
        self._fd = fd
        #: Which file this is, whatever path reached it (folder device and inode, name).
        self.key = key

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


def _open_lock(folder: Folder, name: str) -> int:
    # O_NOFOLLOW: a lock "file" planted as a link cannot make us create a file elsewhere.
    fd = folder.open(_lock_name(name), os.O_RDWR | os.O_CREAT | _CLOEXEC | _NOFOLLOW)
    _lock_fds.add(fd)
    return fd


def _close_lock(fd: int) -> None:
    _lock_fds.discard(fd)
    os.close(fd)  # closing the descriptor releases the flock


@contextmanager
def locked(folder: Folder, name: str) -> Iterator[Lock]:
    """Hold the exclusive write lock of `name` in `folder` for the block.

    Raises:
        OSError: when the lock file cannot be opened (a read-only folder, say).
    """
    key = folder.join(name)
    if folder.fd is not None:
        st = os.fstat(folder.fd)
        key = f"{st.st_dev}:{st.st_ino}/{name}"
    with _thread_lock(key):
        fd = _open_lock(folder, name)
        try:
            if HAVE_FLOCK:
                fcntl.flock(fd, fcntl.LOCK_EX)
                # Deleted or replaced while we waited: we hold a lock nobody else sees.
                while not _same_file(fd, folder, _lock_name(name)):
                    _close_lock(fd)
                    fd = _open_lock(folder, name)
                    fcntl.flock(fd, fcntl.LOCK_EX)
            yield Lock(folder, name, fd, key)
        finally:
            _close_lock(fd)


# -- reading and writing under the lock --------------------------------------------------------


def _read(folder: Folder, name: str, shown: str, cap: int) -> tuple[bytes | None, Any]:
    """The file's bytes and stat, or (None, None) when it does not exist."""
    try:
        fd = folder.open(name, READ_FLAGS)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # vetted, then swapped for a link: refuse, never follow
            raise refusal(shown, "link_out", "became a link while being written: refused") from None
        raise refusal(shown, "unreadable", f"cannot be read: {exc.strerror or exc}") from exc
    try:
        return read_fd(fd, shown, cap)
    finally:
        os.close(fd)


def _write_temp(folder: Folder, tmp: str, data: bytes, like: Any, *, fsync: bool) -> None:
    """Write `data` to the temp name, with the permission bits (and owner) of `like`."""
    with suppress(FileNotFoundError):
        folder.unlink(tmp)  # our own, left by a writer that died
    fd = folder.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | _NOFOLLOW)
    try:
        if like is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, like.st_mode & 0o7777)
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                with suppress(OSError):  # root edits a person's file: it stays theirs
                    os.fchown(fd, like.st_uid, like.st_gid)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if fsync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with suppress(OSError):
            folder.unlink(tmp)
        raise
    os.close(fd)


def _take(folder: Folder, tmp: str, name: str, shown: str, cap: int, expected: bytes) -> bool:
    """After a swap: keep it if it displaced exactly `expected`, else swap straight back.

    True when ours stays (the displaced file, now under the temp name, is removed).
    False when someone had saved in between: their file is put back at once, so
    ours is visible for microseconds at most, and the temp name (ours) is removed.
    """
    fd = folder.open(tmp, READ_FLAGS)
    try:
        try:
            data, _ = read_fd(fd, shown, cap)
        except HomeFileError:
            data = None
        kept = data == expected
        if not kept:
            folder.exchange(tmp, name)
        folder.unlink(tmp)
        return kept
    finally:
        os.close(fd)


def _unchanged(folder: Folder, name: str, seen: Any) -> bool:
    """Whether the file at `name` still has the stat signature `seen`."""
    try:
        now = folder.lstat(name)
    except FileNotFoundError:
        return False
    return signature(now) == signature(seen)


def _unlink_on_error(folder: Folder, tmp: str, op: Callable[..., Any], *args: str) -> Any:
    """Run a rename `op`; if it fails, the temp file (still ours) goes, and the error is raised."""
    try:
        return op(*args)
    except BaseException:
        with suppress(OSError):
            folder.unlink(tmp)
        raise


def update(
    folder: Folder,
    name: str,
    apply: Callable[[bytes | None], bytes | None],
    *,
    lock: Lock,
    cap: int,
    shown: str,
    fsync: bool = True,
) -> str | None:
    """Replace the file `name` with `apply(its bytes)`, never losing a concurrent save.

    `apply` gets the current bytes (None when the file does not exist) and returns
    the new bytes, or None to write nothing; it is called again on a newer
    version when someone saved meanwhile (which is then back in place, so an
    exception it raises leaves their version). Returns None, or a note when the data
    is in place but the folder could not be synced.

    Raises:
        HomeFileError: when the file is refused (not a regular file, over `cap`).
        ReadOnlyFile: when it has no write permission bit.
        SwapConflict: when it kept changing `SWAP_TRIES` times in a row.
        OSError: when the data could not be written; the file is then as it was.
    """
    current, st = _read(folder, name, shown, cap)
    if st is not None and not st.st_mode & 0o222:
        raise ReadOnlyFile(errno.EACCES, f"read-only (mode {stat.S_IMODE(st.st_mode):04o})", shown)
    new = apply(current)
    if new is None or new == current:
        return None
    _sweep(folder, name, lock.key)
    tmp = temp_name(name)
    expected = current  # what the swap must hand back for no save to be lost
    seen = st  # the stat of what is at the path, as last known
    for _ in range(SWAP_TRIES):
        _write_temp(folder, tmp, new, st, fsync=fsync)
        _unlink_on_error(folder, tmp, lock.check)
        if expected is not None and not _unchanged(folder, name, seen):
            # Saved over since we read it: start again from that version, before ours
            # is ever visible (someone reading a stale edit of ours could build on it).
            folder.unlink(tmp)
            theirs, st = _read(folder, name, shown, cap)
            seen = st
        elif expected is None:
            try:
                _unlink_on_error(folder, tmp, folder.create, tmp, name)
                break
            except FileExistsError:  # someone created it meanwhile: edit theirs
                theirs, st = _read(folder, name, shown, cap)
                seen = st
        elif _unlink_on_error(folder, tmp, folder.exchange, tmp, name):
            if _take(folder, tmp, name, shown, cap, expected):
                break
            # Someone saved between our check and the swap: theirs is back in place;
            # start again from it.
            theirs, st = _read(folder, name, shown, cap)
            seen = st
        else:
            theirs, _ = _read(folder, name, shown, cap)
            if theirs == expected:
                _unlink_on_error(folder, tmp, folder.replace, tmp, name)
                break
            folder.unlink(tmp)  # changed since we read it: start again from it
        expected = theirs
        new = apply(theirs)
        if new is None or new == theirs:
            return None
    else:
        raise SwapConflict(errno.EBUSY, "kept changing while being written", shown)
    note = None
    if fsync:
        try:
            folder.sync()
        except OSError as exc:
            note = (
                f"(the folder could not be synced: {exc.strerror or exc}; the change is in "
                "place but may not survive a power loss)"
            )
    return note
