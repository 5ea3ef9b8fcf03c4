"""Running part of a test as an ordinary user when the suite runs as root.

Root reads and writes any file whatever its mode, so tests of permissions drop
to `nobody`. That user must be able to reach the files: pytest's temp folders,
and a private TMPDIR, are out of its reach, so such tests work in a folder
under the first temp base it can traverse.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["NOBODY", "as_nobody", "reachable_base", "traversable_by"]

#: The unprivileged uid and gid ("nobody").
NOBODY = 65534


def traversable_by(path: Path, uid: int) -> bool:
    """Whether `uid` (no groups assumed) can reach inside `path` and every parent of it."""
    for part in (path, *path.parents):
        info = part.stat()
        bit = stat.S_IXUSR if info.st_uid == uid else stat.S_IXOTH
        if not info.st_mode & bit:
            return False
    return True


def reachable_base(uid: int = NOBODY) -> Path:
    """The system temp folder, or /tmp when TMPDIR is private: a base `uid` can traverse."""
    for base in (Path(tempfile.gettempdir()), Path("/tmp")):
        if traversable_by(base, uid):
            return base
    raise RuntimeError(f"no temp folder that uid {uid} can reach")


@contextmanager
def as_nobody() -> Iterator[None]:
    """Run the block as `nobody` (effective ids only) when the process is root."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
