"""Durable writes of one home file: the lock, and a swap that never loses a concurrent edit.

A memory write must survive concurrent writers (threads, processes, a person
with an editor), a crash at any instant, and a home whose files are links. The
recipe:

1. Find where the file really lives (`Folder.of`): a link is followed only
   inside the home (`_door.Door`), and every later step goes through a
   descriptor of that folder, opened without following links, so nothing is
   ever created, written or deleted outside the home.
2. Take the file's lock (`_lock`): a thread lock, then `fcntl.flock` on a
   hidden sidecar file (`.MEMORY.md.lock`); the writer checks just before its
   swap that the lock file is still the one held (else `LockLost`: the caller
   redoes its edit from the file on disk), and that its caller has not given up
   (else `WriteCancelled`, and the temp file goes: nothing was written).
3. Under the lock, read the file, refuse it when it has no write permission
   bit (even for root), and compute the new bytes.
4. Write them to a temp name only this tool uses (`.MEMORY.md.toolnexus-<8
   hex>.tmp`), fsync, check the file is still the version read (same inode,
   which the read's open descriptor keeps from being reused, and same bytes),
   and swap it in. A person's editor does not take our lock, so the swap must
   hand back exactly what it replaced: on Linux `renameat2(RENAME_EXCHANGE)`
   swaps the two names atomically and the displaced file is checked the same
   way; if it is not the version the edit was made on (someone saved in
   between), the swap is undone at once, checking that what the undo displaces
   is ours (else a still newer save goes back instead), and the edit is applied
   again to their version (bounded). Elsewhere the check is followed by a plain
   rename, which leaves a short window. Stale temps of dead writers are swept
   once per process.
5. fsync the folder.

Readers never lock: a rename is atomic, so they see the old file or the new
one, never a torn one. Without `fcntl` (Windows) only the thread lock applies:
writers in one process are safe, writers in several processes are not.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from ._door import READ_FLAGS, read_fd, refusal
from ._lock import HAVE_FLOCK, Lock, LockIsLink, LockLost, WriteCancelled, locked
from ._openfolder import Folder

__all__ = [
    "HAVE_FLOCK",
    "TEMP_SUFFIX",
    "Folder",
    "Lock",
    "LockIsLink",
    "LockLost",
    "ReadOnlyFile",
    "SwapConflict",
    "WriteCancelled",
    "locked",
    "measure",
    "refuse_read_only",
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


class ReadOnlyFile(OSError):
    """The file has no write permission bit: a person marked it read-only, so it is not replaced."""


def refuse_read_only(st: os.stat_result, shown: str) -> None:
    """Raise `ReadOnlyFile` when the file `st` describes has no write permission bit."""
    if not st.st_mode & 0o222:
        mode = stat.S_IMODE(st.st_mode)
        raise ReadOnlyFile(errno.EACCES, f"read-only (mode {mode:04o})", shown)


class SwapConflict(OSError):
    """The file kept changing under the swap, `SWAP_TRIES` times in a row."""


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


# -- the lock ----------------------------------------------------------------------------------


# -- reading and writing under the lock --------------------------------------------------------


class _Version:
    """One version of the file as read. Its descriptor stays open while we compare
    against it, so its inode number cannot be reused by a newer file meanwhile."""

    __slots__ = ("data", "fd", "st")

    def __init__(self, data: bytes | None, st: Any, fd: int | None) -> None:
        self.data, self.st, self.fd = data, st, fd

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def is_at(self, st: os.stat_result) -> bool:
        """Whether `st` is this very version: the same inode (we hold it open, so the
        number is not reused) with the same bytes (an in-place save shows too).

        Times are not compared: a rename (our own swap) changes the inode's ctime.
        """
        if self.fd is None or self.data is None or not _same(st, self.st):
            return False
        return os.pread(self.fd, len(self.data) + 1, 0) == self.data


def _read(folder: Folder, name: str, shown: str, cap: int) -> _Version:
    """The file as it is now; `data` is None when it does not exist."""
    try:
        fd = folder.open(name, READ_FLAGS)
    except FileNotFoundError:
        return _Version(None, None, None)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # vetted, then swapped for a link: refuse, never follow
            raise refusal(shown, "link_out", "became a link while being written: refused") from None
        raise refusal(shown, "unreadable", f"cannot be read: {exc.strerror or exc}") from exc
    try:
        data, st = read_fd(fd, shown, cap)
    except BaseException:
        os.close(fd)
        raise
    return _Version(data, st, fd)


def _write_temp(folder: Folder, tmp: str, data: bytes, like: Any, *, fsync: bool) -> int:
    """Write `data` to the temp name, with the permission bits (and owner) of `like`.

    Returns the temp file's descriptor, still open: while it is, its inode number
    names our version and no other.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | _NOFOLLOW
    try:
        fd = folder.open(tmp, flags)
    except FileExistsError:  # our own name, left by a writer that died
        folder.unlink(tmp)
        fd = folder.open(tmp, flags)
    try:
        if like is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, like.st_mode & 0o7777)
            uid = os.geteuid() if hasattr(os, "geteuid") else None
            if uid == 0 and (like.st_uid, like.st_gid) != (0, os.getegid()):
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
    return fd


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _put_back(folder: Folder, tmp: str, name: str, theirs: Any, ours: Any) -> None:
    """Undo a swap that displaced someone's newer save (`theirs`, now at `tmp`).

    Swaps again and checks what comes out: it should be ours. If a still newer
    save had replaced ours at the path in the microseconds between, that one
    came out instead; it is the newest, so it goes back in turn (bounded).
    """
    back, expect = theirs, ours
    for _ in range(SWAP_TRIES):
        folder.exchange(tmp, name)
        out = folder.lstat(tmp)
        if _same(out, expect):
            break
        back, expect = out, back
    folder.unlink(tmp)


def _unlink_on_error(folder: Folder, tmp: str, op: Callable[..., Any], *args: str) -> Any:
    """Run a rename `op`; if it fails, the temp file (still ours) goes, and the error is raised."""
    try:
        return op(*args)
    except BaseException:
        with suppress(OSError):
            folder.unlink(tmp)
        raise


def _swap(folder: Folder, tmp: str, name: str, base: _Version, ours: int, lock: Lock) -> bool:
    """Put the temp file in place if the file is still `base`; True when ours is in place.

    False when someone saved meanwhile: their version is at the path (if ours
    was ever visible, for microseconds) and the temp file is gone.
    """
    _unlink_on_error(folder, tmp, lock.check)
    if base.data is None:
        try:
            _unlink_on_error(folder, tmp, folder.create, tmp, name)
            return True
        except FileExistsError:  # someone created it meanwhile: edit theirs
            return False
    try:
        now = folder.lstat(name)
    except FileNotFoundError:
        now = None
    if now is None or not base.is_at(now):
        # Saved over since we read it: start again from that version, before ours
        # is ever visible (someone reading a stale edit of ours could build on it).
        folder.unlink(tmp)
        return False
    if _unlink_on_error(folder, tmp, folder.exchange, tmp, name):
        out = folder.lstat(tmp)
        if base.is_at(out):
            folder.unlink(tmp)
            return True
        # Someone saved between our check and the swap: theirs goes back at once.
        _put_back(folder, tmp, name, out, os.fstat(ours))
        return False
    _unlink_on_error(folder, tmp, folder.replace, tmp, name)  # no exchange here: a short window
    return True


def update(
    folder: Folder,
    name: str,
    apply: Callable[[bytes | None], bytes | None],
    *,
    lock: Lock,
    cap: int,
    shown: str,
    fsync: bool = True,
    swapped: Callable[[], None] | None = None,
) -> str | None:
    """Replace the file `name` with `apply(its bytes)`, never losing a concurrent save.

    `apply` gets the current bytes (None when the file does not exist) and returns
    the new bytes, or None to write nothing; it is called again on a newer
    version when someone saved meanwhile (which is then back in place, so an
    exception it raises leaves their version). `swapped` runs once the new bytes
    are in place, before the folder is synced (the history records the change
    there, as early as it can). Returns None, or a note when the data is in place
    but the folder could not be synced.

    Raises:
        HomeFileError: when the file is refused (not a regular file, over `cap`).
        ReadOnlyFile: when it has no write permission bit.
        SwapConflict: when it kept changing `SWAP_TRIES` times in a row.
        WriteCancelled: when the lock's `cancel` was set before the file was replaced.
        OSError: when the data could not be written; the file is then as it was.
    """
    base = _read(folder, name, shown, cap)
    try:
        new = apply(base.data)
        if new is None or new == base.data:
            return None
        if base.st is not None:  # refused only when there is a change
            refuse_read_only(base.st, shown)
        _sweep(folder, name, lock.key)
        tmp = temp_name(name)
        for _ in range(SWAP_TRIES):
            ours = _write_temp(folder, tmp, new, base.st, fsync=fsync)
            try:
                if lock.cancelled:  # the last moment nothing is visible yet
                    folder.unlink(tmp)
                    raise WriteCancelled("cancelled before the write")
                if _swap(folder, tmp, name, base, ours, lock):
                    break
            finally:
                os.close(ours)
            base.close()
            base = _read(folder, name, shown, cap)
            new = apply(base.data)
            if new is None or new == base.data:
                return None
        else:
            raise SwapConflict(errno.EBUSY, "kept changing while being written", shown)
    finally:
        base.close()
    if swapped is not None:
        swapped()
    if not fsync:
        return None
    try:
        folder.sync()
    except OSError as exc:
        return (
            f"(the folder could not be synced: {exc.strerror or exc}; the change is in "
            "place but may not survive a power loss)"
        )
    return None


def measure(folder: Folder, name: str) -> tuple[int, str]:
    """Size and sha256 of a file too big to read whole, read in pieces."""
    fd = folder.open(name, READ_FLAGS)
    try:
        h = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
            size += len(chunk)
        return size, h.hexdigest()
    finally:
        os.close(fd)
