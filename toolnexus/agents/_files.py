"""The one door to a home's files: what a home holds, where, and every read of it.

The soul, the memory tool, the skill tool and the command line all read home
files through here, so a file is judged the same everywhere:

* only regular files are read; a folder, FIFO, device or socket is refused at
  once (a FIFO is opened non-blocking, so it never hangs a read);
* text is UTF-8 (a BOM allowed), or a `HomeError` naming the file and the byte;
* a problem names the file and the rule.

Nothing here creates, writes or deletes anything. Parsing what is read is
`_load`'s job.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import HomeError
from ._identity import Target

__all__ = [
    "IDENTITY_FILE",
    "MEMORY_FILES",
    "MEMORY_ORDER",
    "SKILLS_DIR",
    "SKILL_FILE",
    "TEMPLATE_FILE",
    "NotRegularFile",
    "check_home",
    "decode",
    "read_file",
    "read_prefix",
]

IDENTITY_FILE = "IDENTITY.md"
#: The file each memory target lives in, inside a home folder.
MEMORY_FILES: dict[Target, str] = {"self": "MEMORY.md", "user": "USER.md"}
SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"
TEMPLATE_FILE = "soul.md.j2"

#: The memory targets in the order the soul shows them (most stable first).
MEMORY_ORDER: tuple[Target, ...] = ("user", "self")

# -- reading one file ------------------------------------------------------------------


class NotRegularFile(OSError):
    """The path is a FIFO, device or socket: reading it could block forever."""


def read_prefix(path: str | os.PathLike[str], *, limit: int | None = None) -> tuple[bytes, int]:
    """Return up to `limit` bytes of a regular file and its size; never block on a FIFO.

    Raises:
        IsADirectoryError: for a folder.
        NotRegularFile: for a FIFO, device or socket.
        OSError: when it cannot be opened or read (FileNotFoundError when absent).
    """
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    with open(fd, "rb") as f:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{os.fspath(path)}: is a folder")
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{os.fspath(path)}: not a regular file")
        return (f.read() if limit is None else f.read(limit)), st.st_size


def read_file(path: str | os.PathLike[str]) -> bytes | None:
    """Read a home file whole; None when it does not exist.

    Raises:
        HomeError: naming the file, for a folder, a FIFO, device or socket, or a read error.
    """
    name = os.fspath(path)
    try:
        return read_prefix(name)[0]
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        raise HomeError(f"{name}: is a folder: it must be a file") from None
    except NotRegularFile:
        raise HomeError(
            f"{name}: is not a regular file (a pipe, device or socket): make it a file"
        ) from None
    except OSError as exc:
        raise HomeError(f"{name}: cannot be read: {exc.strerror or exc}") from exc


def decode(data: bytes, path: str | os.PathLike[str]) -> str:
    """Decode a home file's bytes as UTF-8 (a BOM is kept: callers decide).

    Raises:
        HomeError: naming the file and the first bad byte.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HomeError(
            f"{os.fspath(path)}: not UTF-8 text (byte {exc.start}): save it as UTF-8"
        ) from None


def check_home(home: Path) -> None:
    """Raise HomeError unless `home` is an existing folder.

    Raises:
        HomeError: naming the path.
    """
    if not home.is_dir():
        what = "does not exist" if not home.exists() else "is not a folder"
        raise HomeError(f"{home}: {what}: a home is a folder with an IDENTITY.md in it")
