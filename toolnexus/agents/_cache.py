"""The parse cache under Home: each file parsed once per content, never served stale.

Keyed by a file's stat signature (inode, device, size, mtime, ctime) and checked
by content hash inside the racy window, it makes composing a soul on every new
session cheap. Both caches are LRUs bounded by bytes, so a process that meets
many homes stays small.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..errors import HomeError
from ._frontmatter import normalize_newlines
from .safety import scan_text

__all__ = [
    "RACY_WINDOW_NS",
    "NotRegularFile",
    "clear_caches",
    "load_cached",
    "read_regular",
    "read_regular_file",
    "verdict",
]

T = TypeVar("T")

#: A file changed less than this long before it was last read may hide a same-size
#: rewrite inside one timestamp tick (2 s covers FAT and modest network clock skew),
#: so its content is re-read and compared rather than trusted from its stat.
RACY_WINDOW_NS = 2_000_000_000
#: Budgets of the parse cache and the safety-verdict cache, in (estimated) bytes kept.
_CACHE_BUDGET = 32 * 2**20
_VERDICTS_BUDGET = 8 * 2**20
#: What one cached entry costs beyond its text (the objects, the key, the stat signature).
_ENTRY_OVERHEAD = 512


@dataclass(frozen=True, slots=True, kw_only=True)
class _Entry:
    key: tuple[int, ...]
    verified_ns: int
    sha256: str
    value: Any
    cost: int


class _LRU(OrderedDict[Any, Any]):
    """A dict that forgets its least recently used items past a budget of bytes."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget
        self.used = 0
        self.costs: dict[Any, int] = {}

    def hit(self, key: Any) -> None:
        self.move_to_end(key)

    def put(self, key: Any, value: Any, cost: int) -> None:
        self.drop(key)
        self[key] = value
        self.costs[key] = cost
        self.used += cost
        while self.used > self.budget and len(self) > 1:
            self.drop(next(iter(self)))

    def drop(self, key: Any) -> None:
        if key in self.costs:
            del self[key]
            self.used -= self.costs.pop(key)

    def clear(self) -> None:
        super().clear()
        self.costs.clear()
        self.used = 0


_CACHE = _LRU(_CACHE_BUDGET)


class _Unreadable(HomeError):
    """A file that exists but cannot be decoded: carries its bytes' hash, so an edit shows."""

    def __init__(self, message: str, *, sha256: str) -> None:
        super().__init__(message)
        self.sha256 = sha256


def load_cached(
    path: str | Path,
    kind: str,
    parse: Callable[[str, Path], T],
    *,
    cost: Callable[[Any], int] | None = None,
) -> tuple[str | None, T | None]:
    """Return `(sha256 of the bytes, parse(text, path))` for a file, or `(None, None)` if absent.

    `parse` receives the text with BOM and CRLF normalised and must be pure and
    not raise (return problems as values). Results are reused while the file's
    stat signature (inode, device, size, mtime, ctime) is unchanged *and* the file
    was last verified well after it last changed (git's racy-clean rule): a
    rewrite that keeps size and mtime still moves ctime, unless it lands in the
    same timestamp tick as an earlier write, and a file that recent is re-read.

    Args:
        path: the file.
        kind: what `parse` makes of it (one file may be cached as several kinds).
        parse: text and path to value.
        cost: the bytes a value keeps alive, for the cache's budget (default: the
            file's size, right for a value that holds all of its text).

    Raises:
        HomeError: when the file exists but is not a readable UTF-8 regular file
            (when it is not UTF-8, the error carries the bytes' hash as `sha256`).
    """
    name = os.fspath(path)
    slot = (name, kind)
    try:
        st = os.stat(name)
    except (FileNotFoundError, NotADirectoryError):
        _CACHE.drop(slot)
        return None, None
    except OSError as exc:
        raise HomeError(f"{name}: cannot be read: {exc.strerror or exc}") from exc
    key = (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    entry = _CACHE.get(slot)
    if (
        entry is not None
        and entry.key == key
        and max(st.st_ctime_ns, st.st_mtime_ns) < entry.verified_ns - RACY_WINDOW_NS
    ):
        _CACHE.hit(slot)
        return entry.sha256, entry.value
    verified_ns = time.time_ns()
    data = read_regular_file(name, st)
    if data is None:
        _CACHE.drop(slot)
        return None, None
    sha = hashlib.sha256(data).hexdigest()
    if entry is not None and entry.sha256 == sha:
        value, weight = entry.value, entry.cost
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Unreadable(
                f"{name}: not UTF-8 text (byte {exc.start}): save it as UTF-8", sha256=sha
            ) from None
        value = parse(normalize_newlines(text), Path(name))
        weight = _ENTRY_OVERHEAD + (len(data) if cost is None else cost(value))
    _CACHE.put(
        slot, _Entry(key=key, verified_ns=verified_ns, sha256=sha, value=value, cost=weight), weight
    )
    return sha, value


class NotRegularFile(OSError):
    """The path is a FIFO, device or socket: reading it could block forever."""


def read_regular(path: str | os.PathLike[str], *, limit: int | None = None) -> tuple[bytes, int]:
    """Return up to `limit` bytes of a regular file and its size; never block on a FIFO.

    Raises:
        NotRegularFile: for anything but a regular file.
        OSError: when it cannot be opened or read.
    """
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with open(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{os.fspath(path)}: not a regular file")
        return (f.read() if limit is None else f.read(limit)), st.st_size


def read_regular_file(name: str, st: os.stat_result) -> bytes | None:
    """Read a regular file whole (None if it is gone), as a home loader wants it.

    Raises:
        HomeError: for a folder, a FIFO, device or socket, or a read error.
    """
    not_regular = f"{name}: is not a regular file (a pipe, device or socket): make it a file"
    if stat.S_ISDIR(st.st_mode):
        raise HomeError(f"{name}: is a folder: it must be a file")
    if not stat.S_ISREG(st.st_mode):
        raise HomeError(not_regular)
    try:
        return read_regular(name)[0]
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise HomeError(f"{name}: is a folder: it must be a file") from None
    except NotRegularFile:  # it became one since the stat
        raise HomeError(not_regular) from None
    except OSError as exc:
        raise HomeError(f"{name}: cannot be read: {exc.strerror or exc}") from exc


def clear_caches() -> None:
    """Forget every parsed file (for benchmarks and tests; correctness never needs it)."""
    _CACHE.clear()
    _VERDICTS.clear()


# scan_text is pure, so its verdicts are kept by text: after a memory write only
# the new entry is scanned, not the whole file again.
_VERDICTS = _LRU(_VERDICTS_BUDGET)


def verdict(text: str) -> tuple[str, ...]:
    reasons: tuple[str, ...] | None = _VERDICTS.get(text)
    if reasons is None:
        reasons = scan_text(text)
        _VERDICTS.put(text, reasons, _ENTRY_OVERHEAD + len(text))
    else:
        _VERDICTS.hit(text)
    return reasons
