"""Memos of pure functions over home files, keyed by content, and how a file is known.

A file's parse is kept under the SHA-256 of its bytes, and safety verdicts
under the text scanned (an entry, a prose run or a unit of one), so after a
memory write only the new entry is scanned.
A file is known by its hash without being read again only while its stat
signature is the one it had when read and it had been quiet for
`RACY_WINDOW_NS` by then (`fingerprint`), so nothing a person does to it can
serve old content. The memos are bounded by bytes and add no parameter to any
API; `_load` is their only user.
"""

from __future__ import annotations

import hashlib
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..errors import HomeError
from ._door import FILE_CAP, Door, decode, read_capped, signature, too_large
from ._frontmatter import normalize_newlines

__all__ = ["RACY_WINDOW_NS", "clear_memos", "fingerprint", "memo", "parsed", "remembered"]

T = TypeVar("T")


#: Budgets of the parse memo and the safety-verdict memo, in (estimated) bytes kept.
_PARSED_BUDGET = 32 * 2**20
_VERDICTS_BUDGET = 8 * 2**20
#: What one memoised value costs beyond its text (the objects, the key).
_ENTRY_OVERHEAD = 512


class _LRU:
    """A mapping that forgets its least recently used items past a budget of bytes."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self._items: OrderedDict[Any, tuple[Any, int]] = OrderedDict()

    def get(self, key: Any) -> Any:
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key: Any, value: Any, cost: int) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.used -= old[1]
        self._items[key] = (value, cost)
        self.used += cost
        while self.used > self.budget and len(self._items) > 1:
            _, (_, dropped) = self._items.popitem(last=False)
            self.used -= dropped

    def clear(self) -> None:
        self._items.clear()
        self.used = 0


_PARSED = _LRU(_PARSED_BUDGET)
_VERDICTS = _LRU(_VERDICTS_BUDGET)
_MEMO_LOCK = threading.Lock()
#: Files as last read, by path: a few hundred bytes each, forgotten all at once when full.
_SEEN: dict[str, _Seen] = {}
_SEEN_MAX = 4096


def clear_memos() -> None:
    """Forget every memoised parse, verdict and signature (benchmarks; nothing else needs it)."""
    _PARSED.clear()
    _VERDICTS.clear()
    _SEEN.clear()


#: A file changed less than this long before it was read may hide a same-size rewrite
#: inside one timestamp tick (2 s covers FAT and modest clock skew), so its stat
#: signature alone is not trusted: it is read and hashed again (git's racy-clean rule).
RACY_WINDOW_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class _Seen:
    """A file as last read: its stat signature, its bytes' hash, and when it was read."""

    signature: tuple[int, ...]
    sha: str
    read_ns: int


def fingerprint(door: Door, path: str, *, cap: int) -> tuple[str, bytes | None] | None:
    """Return a home file's SHA-256, with its bytes when they had to be read; None if absent.

    The file is looked at through `door` (a link may only point inside the home)
    and must hold at most `cap` bytes. A regular file whose stat signature (inode,
    device, size, mtime, ctime) is the one it had when last read, and which had
    not changed for `RACY_WINDOW_NS` by then, is not read again: a rewrite moves
    ctime (or the inode, for a rename or a re-pointed link) unless it lands in the
    same tick as the read, which the window rules out.

    Raises:
        HomeFileError: as `Door.read` does.
    """
    found = door.resolve(path)
    if found is None:
        _SEEN.pop(path, None)
        return None
    target, st = found
    regular = stat.S_ISREG(st.st_mode)
    if regular:
        if st.st_size > cap:
            raise too_large(path, st.st_size, cap)
        known = signature(st)
        seen = _SEEN.get(path)
        if seen is not None and seen.signature == known:
            quiet_since = seen.read_ns - RACY_WINDOW_NS
            if st.st_mtime_ns < quiet_since and st.st_ctime_ns < quiet_since:
                return seen.sha, None
    read_ns = time.time_ns()
    data = read_capped(target, cap=cap, shown=path)
    if data is None:
        _SEEN.pop(path, None)
        return None
    sha = hashlib.sha256(data).hexdigest()
    if regular:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        _SEEN[path] = _Seen(known, sha, read_ns)
    return sha, data


def memo(
    door: Door,
    kind: str,
    path: str,
    parse: Callable[[str, Path], T],
    *,
    cap: int = FILE_CAP,
    cost: Callable[[Any], int] | None = None,
) -> tuple[str, T | HomeError] | None:
    """Return a file's SHA-256 and `parse(text, path)`, memoised by kind, path and content.

    None when the file is absent. `parse` gets the text with BOM and line endings
    normalised, and must be pure (its result may depend on `path`, so the path is
    part of the key). A `HomeError` it raises, or text that is not UTF-8, is the
    result instead.

    Raises:
        HomeFileError: when the door refuses the file (a link out, a FIFO, over
            `cap`, no permission).
    """
    found = fingerprint(door, path, cap=cap)
    if found is None:
        return None
    sha, data = found
    with _MEMO_LOCK:
        value = _PARSED.get((kind, path, sha))
    if value is None:
        if data is None:  # known by its signature, but its parse was forgotten
            data = door.read(path, cap=cap)
            if data is None:
                return None
            sha = hashlib.sha256(data).hexdigest()
        try:
            value = parse(normalize_newlines(decode(data, path)), Path(path))
        except HomeError as exc:
            value = exc
        weight = len(data) if cost is None or isinstance(value, HomeError) else cost(value)
        with _MEMO_LOCK:
            _PARSED.put((kind, path, sha), value, _ENTRY_OVERHEAD + weight)
    return sha, value


def parsed(
    door: Door, kind: str, path: str, parse: Callable[[str, Path], T], *, cap: int = FILE_CAP
) -> tuple[str, T] | None:
    """`memo`, raising the problem instead of returning it."""
    found = memo(door, kind, path, parse, cap=cap)
    if found is None:
        return None
    sha, value = found
    if isinstance(value, HomeError):
        raise value.with_traceback(None)
    return sha, value


def remembered(key: Any, size: int, compute: Callable[[], T], *, view: bool = False) -> T:
    """`compute()`, memoised under `key`: a scanner's verdict on a text of `size`
    characters, or (`view`) what a soul shows of a file of `size` characters, kept
    with the parses (it holds about three copies of the file's text).

    Safe from several threads (memory writes run in worker threads): the memo is
    locked, `compute` runs outside the lock."""
    memo, cost = (_PARSED, 3 * size) if view else (_VERDICTS, size)
    with _MEMO_LOCK:
        value: T | None = memo.get(key)
    if value is None:
        value = compute()
        with _MEMO_LOCK:
            memo.put(key, value, _ENTRY_OVERHEAD + cost)
    return value
