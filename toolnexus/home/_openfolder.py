"""An open folder inside a home: file operations through its descriptor, links never followed.

The write path (`home/_writer.py`) creates, swaps and removes files only through a
`Folder`, so nothing is ever created, written or deleted outside the home.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

from ._door import Door

__all__ = ["Folder"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
_DIR_FDS = os.open in os.supports_dir_fd


# -- the folder a file lives in ------------------------------------------------------------


class Folder:
    """An open folder inside a home: every operation on its files goes through its descriptor.

    Where descriptors cannot name files (`os.supports_dir_fd` is empty, as on
    Windows), its path is used instead.
    """

    __slots__ = ("fd", "path")

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def of(cls, door: Door, path: str) -> tuple[Folder, str]:
        """Open the folder that `path` (a file directly in the home) really lives in; and its name.

        A link is followed only to a target inside the home; the folders on the way
        there are opened one by one without following links, so a folder swapped for
        a link meanwhile is refused rather than followed.

        Raises:
            HomeFileError: for a link out of the home or a broken link.
            OSError: when a folder cannot be opened.
        """
        path = os.path.abspath(path)
        found = door.resolve(path)
        target = path if found is None else found[0]
        folder, name = os.path.split(target)
        if target == path:  # not a link: the file lives right here
            return cls(folder, os.open(folder, _DIR_FLAGS) if _DIR_FDS else None), name
        if not _DIR_FDS:  # pragma: no cover - Windows
            return cls(folder, None), name
        fd = os.open(door.real, _DIR_FLAGS)
        try:
            for part in os.path.relpath(folder, door.real).split(os.sep):
                if part in ("", "."):
                    continue
                inner = os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return cls(folder, fd), name

    def close(self) -> None:
        """Close the folder's descriptor."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def join(self, name: str) -> str:
        """The path of `name` in this folder, for messages."""
        return os.path.join(self.path, name)

    def _at(self, name: str) -> tuple[str, dict[str, Any]]:
        if self.fd is None:
            return self.join(name), {}
        return name, {"dir_fd": self.fd}

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        """`os.open` of `name` in this folder; an error names the file's whole path."""
        where, kw = self._at(name)
        try:
            return os.open(where, flags, mode, **kw)
        except OSError as exc:
            exc.filename = self.join(name)
            raise

    def lstat(self, name: str) -> os.stat_result:
        """Stat `name` itself (a link is not followed)."""
        where, kw = self._at(name)
        return os.stat(where, follow_symlinks=False, **kw)

    def unlink(self, name: str) -> None:
        """Remove `name` from this folder."""
        where, kw = self._at(name)
        os.unlink(where, **kw)

    def replace(self, src: str, dst: str) -> None:
        """Rename `src` over `dst` (plain, atomic)."""
        if self.fd is None:
            os.replace(self.join(src), self.join(dst))
        else:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def exchange(self, a: str, b: str) -> bool:
        """Swap the names `a` and `b` atomically; False where the system cannot.

        Raises:
            OSError: when the swap is possible but fails.
        """
        return self.fd is not None and _renameat2(self.fd, a, b, _RENAME_EXCHANGE)

    def create(self, src: str, dst: str) -> None:
        """Rename `src` to `dst` only if `dst` does not exist.

        Raises:
            FileExistsError: when `dst` appeared meanwhile.
        """
        if self.fd is not None and _renameat2(self.fd, src, dst, _RENAME_NOREPLACE):
            return
        if self.fd is None:  # pragma: no cover - Windows
            os.link(self.join(src), self.join(dst))
        else:
            os.link(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        self.unlink(src)

    def sync(self) -> None:
        """Make renames in this folder durable (a no-op where folders cannot be opened)."""
        if self.fd is not None:
            os.fsync(self.fd)


# -- renameat2, where the system has it (Linux) ----------------------------------------------

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_renameat2_fn: Any = None
_renameat2_ok = sys.platform == "linux"


def _renameat2(fd: int, src: str, dst: str, flags: int) -> bool:
    """renameat2(2) in one folder; False (and never again) where it is not supported."""
    global _renameat2_fn, _renameat2_ok
    if not _renameat2_ok:
        return False
    import ctypes  # only writers need it

    if _renameat2_fn is None:
        try:
            fn = ctypes.CDLL(None, use_errno=True).renameat2
        except (OSError, AttributeError):  # pragma: no cover - an old C library
            _renameat2_ok = False
            return False
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        _renameat2_fn = fn
    if _renameat2_fn(fd, os.fsencode(src), fd, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        # The file system cannot (some network and FUSE ones): fall back for good.
        _renameat2_ok = False
        return False
    raise OSError(err, os.strerror(err), dst)
