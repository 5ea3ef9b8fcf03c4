"""The one door to a home's files: what a home holds, where, and every read of it.

The soul, the memory tool, the skill tool and the command line all read home
files through here, so a file is judged the same everywhere:

* a link is followed only while its target stays inside the home; one that
  leaves the home or points at nothing is refused (`Door.follow`);
* only regular files are read; a folder, FIFO, device or socket is refused at
  once (a FIFO is opened non-blocking, so it never hangs a read);
* each kind of file has a byte cap (`FILE_CAP`, `memory_cap`): a file over it is
  refused, never read whole and never silently cut;
* text is UTF-8 (a BOM allowed); line endings are normalised to LF by the one
  normaliser (`_document.normalize_text`), so the tool and the soul see the same
  entries;
* a refusal is a `HomeFileError` naming the file and the reason.

Nothing here creates, writes or deletes anything. Parsing what is read is
`_load`'s job; writing is `home/_writer.py`'s.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import FileRefusal, HomeError, HomeFileError
from ._identity import Target

__all__ = [
    "FILE_CAP",
    "IDENTITY_FILE",
    "MEMORY_FILES",
    "MEMORY_ORDER",
    "READ_FLAGS",
    "SKILLS_DIR",
    "SKILL_FILE",
    "STATE_DIR",
    "TEMPLATE_FILE",
    "Door",
    "NotRegularFile",
    "check_home",
    "decode",
    "memory_cap",
    "read_capped",
    "read_fd",
    "read_prefix",
    "refusal",
    "signature",
    "too_large",
    "within",
]

IDENTITY_FILE = "IDENTITY.md"
#: The file each memory target lives in, inside a home folder.
MEMORY_FILES: dict[Target, str] = {"self": "MEMORY.md", "user": "USER.md"}
SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"
TEMPLATE_FILE = "soul.md.j2"
#: The home's own state (history, conversations, trust marks): see `_state`.
STATE_DIR = ".toolnexus"

#: The memory targets in the order the soul shows them (most stable first).
MEMORY_ORDER: tuple[Target, ...] = ("user", "self")

#: The most bytes read of IDENTITY.md, soul.md.j2 or a SKILL.md (1 MiB).
FILE_CAP = 2**20


def memory_cap(limit: int) -> int:
    """The most bytes read of a memory file whose limit is `limit` characters.

    At least 1 MiB, and 4 bytes per character of the limit (the most a UTF-8
    character takes), so a file within its limit is never refused.
    """
    return max(FILE_CAP, 4 * limit)


# -- refusals ----------------------------------------------------------------------------

_HINTS: dict[FileRefusal, str] = {
    "folder": "is a folder: it must be a file",
    "special": "is not a regular file (a pipe, device or socket): make it a file",
}


def refusal(path: str, reason: FileRefusal, detail: str = "") -> HomeFileError:
    """The error for a refused file: `<path>: <what is wrong>`."""
    message = _HINTS.get(reason) or detail
    return HomeFileError(f"{path}: {message}", path=path, reason=reason)


def too_large(path: str, size: int, cap: int) -> HomeFileError:
    """The error for a file over its byte cap."""
    return refusal(
        path,
        "too_large",
        f"is {size:,} bytes, over its cap of {cap:,} bytes: it is not read "
        "(shorten it, or raise the memory limit that sets the cap)",
    )


class NotRegularFile(OSError):
    """The path is a FIFO, device or socket: reading it could block forever."""


# -- links -------------------------------------------------------------------------------


def within(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies under it (both resolved): the one containment rule."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def signature(st: os.stat_result) -> tuple[int, ...]:
    """What tells one version of a file from another without reading it."""
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Door:
    """One home's files seen through the link policy: links may move around inside the home only.

    Creating a door costs nothing; the home's resolved path is computed the first
    time a link needs checking, so homes without links pay for none of this.
    """

    __slots__ = ("_real", "home")

    def __init__(self, home: Path) -> None:
        self.home = home
        self._real: str | None = None

    @property
    def real(self) -> str:
        """The home's path with every link resolved."""
        if self._real is None:
            self._real = os.path.realpath(self.home)
        return self._real

    def inside(self, real: str) -> bool:
        """Whether a resolved path is the home or lies under it."""
        return within(real, self.real)

    def follow(self, path: str) -> tuple[str, os.stat_result]:
        """Resolve the link at `path`: its target and the target's stat, if it stays inside.

        Raises:
            HomeFileError: `link_out` when the target leaves the home, `link_broken`
                when it does not exist or cannot be resolved (a loop).
        """
        target = os.path.realpath(path)
        if not self.inside(target):
            raise refusal(
                path,
                "link_out",
                f"is a link to {target}, outside the home: refused (links may only "
                "point inside the home; copy the file in instead)",
            )
        try:
            return target, os.stat(target)
        except OSError as exc:
            why = "which does not exist" if isinstance(exc, FileNotFoundError) else "a loop"
            raise refusal(
                path, "link_broken", f"is a link to {target}, {why}: refused (fix or remove it)"
            ) from None

    def resolve(self, path: str) -> tuple[str, os.stat_result] | None:
        """Stat a home file without following a link out: (path to open, stat); None if absent.

        A link inside the home gives its target; the parents of `path` must already
        have been checked (they are the home itself, or vetted by the caller).

        Raises:
            HomeFileError: for a link out or a broken link, or when it cannot be looked at.
        """
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise refusal(path, "unreadable", f"cannot be read: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode):
            return self.follow(path)
        return path, st

    def read(self, path: str, *, cap: int) -> bytes | None:
        """Read a home file whole under every rule of the door; None when it is absent.

        Raises:
            HomeFileError: naming the file and the reason it is refused.
        """
        found = self.resolve(path)
        if found is None:
            return None
        target, st = found
        if stat.S_ISREG(st.st_mode) and st.st_size > cap:
            raise too_large(path, st.st_size, cap)
        return read_capped(target, cap=cap, shown=path)


# -- reading one file --------------------------------------------------------------------

#: How every home file is opened for reading: never blocking, never following a link.
READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # opening a FIFO would otherwise wait for a writer
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOFOLLOW", 0)  # the path was vetted: a link swapped in since is refused
)


def read_prefix(path: str | os.PathLike[str], *, limit: int | None = None) -> tuple[bytes, int]:
    """Return up to `limit` bytes of a regular file and its size; never block, never follow a link.

    Raises:
        IsADirectoryError: for a folder.
        NotRegularFile: for a FIFO, device or socket.
        OSError: when it cannot be opened or read (FileNotFoundError when absent;
            ELOOP when the path itself is a link).
    """
    fd = os.open(path, READ_FLAGS)
    with open(fd, "rb") as f:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{os.fspath(path)}: is a folder")
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{os.fspath(path)}: not a regular file")
        return (f.read() if limit is None else f.read(limit)), st.st_size


def read_fd(fd: int, shown: str, cap: int) -> tuple[bytes, os.stat_result]:
    """Read an open home file whole if it is a regular file of at most `cap` bytes; and its stat.

    Raises:
        HomeFileError: for a folder, a FIFO, device or socket, or a file over `cap`
            (checked on the bytes read too, so a growing file cannot slip past).
    """
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        raise refusal(shown, "folder")
    if not stat.S_ISREG(st.st_mode):
        raise refusal(shown, "special")
    if st.st_size > cap:
        raise too_large(shown, st.st_size, cap)
    chunks: list[bytes] = []
    size = 0
    want = st.st_size + 1  # the size as stat saw it, plus one to notice growth
    while size <= cap:
        want = min(want, cap + 1 - size)
        chunk = os.pread(fd, want, size) if hasattr(os, "pread") else os.read(fd, want)
        want = 1 << 16
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > cap:
        raise too_large(shown, size, cap)
    return b"".join(chunks), st


def read_capped(path: str, *, cap: int, shown: str | None = None) -> bytes | None:
    """Open and read a regular file whole if it holds at most `cap` bytes; None when absent.

    `shown` is how errors name the file (the link a person sees, not its target).

    Raises:
        HomeFileError: as `read_fd`, or when it cannot be opened.
    """
    name = shown or path
    try:
        fd = os.open(path, READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket cannot be opened at all
            raise refusal(name, "special") from None
        raise refusal(name, "unreadable", f"cannot be read: {exc.strerror or exc}") from exc
    try:
        return read_fd(fd, name, cap)[0]
    finally:
        os.close(fd)


def decode(data: bytes, path: str | os.PathLike[str]) -> str:
    """Decode a home file's bytes as UTF-8 (a BOM is kept: callers decide).

    Raises:
        HomeFileError: `not_utf8`, naming the file and the first bad byte.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refusal(
            os.fspath(path), "not_utf8", f"not UTF-8 text (byte {exc.start}): save it as UTF-8"
        ) from None


def check_home(home: Path) -> None:
    """Raise HomeError unless `home` is an existing folder.

    Raises:
        HomeError: naming the path.
    """
    if not home.is_dir():
        what = "does not exist" if not home.exists() else "is not a folder"
        raise HomeError(f"{home}: {what}: a home is a folder with an IDENTITY.md in it")
