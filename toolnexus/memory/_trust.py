"""Trust marks: memory entries a person vouched for, kept in the soul whatever the scanner says.

A rule scanner has false positives. A person (never the model: the memory
tool cannot write here) overrides one with `toolnexus memory HOME add --trust
TEXT`, which writes the entry and records its text in
`.toolnexus/trusted-MEMORY.md.json` (or `trusted-USER.md.json`), as JSON:
`{"entries": ["<entry text, NFC>", ...]}`. Composing reads the file (through
the door, memoised by content) and shows those entries as they are; an edit
to an entry changes its text, so the mark no longer applies and the new text
is scanned. A mark whose entry is gone is dropped at the next trusted write.
An unreadable or malformed file trusts nothing: composing says so in a
warning, and a trusted write is refused until a person fixes or deletes it.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from ..errors import HomeError, HomeFileError
from ..home._door import MEMORY_FILES, STATE_DIR, Door
from ..home._identity import Target
from ..home._memo import memo
from ._document import nfc

__all__ = ["TRUST_CAP", "read_trust", "trust_path", "write_trust"]

#: The largest trust file read (bytes): far more than any memory file's entries.
TRUST_CAP = 16 * 2**20


def trust_path(home: Path, target: Target) -> Path:
    """Where `home` keeps the trust marks of one memory file (it may not exist)."""
    return home / STATE_DIR / f"trusted-{MEMORY_FILES[target]}.json"


def _parse(text: str, path: Path) -> frozenset[str]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise HomeError(f"{path}: not JSON: {exc}") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise HomeError(f'{path}: expected {{"entries": ["<entry text>", ...]}}')
    return frozenset(nfc(e) for e in entries)


def read_trust(home: Path, target: Target) -> tuple[str | None, frozenset[str], str | None]:
    """The trust file's SHA-256 (None: absent), the entry texts (NFC) it trusts, and
    what is wrong with it (None: nothing). A file that cannot be read trusts nothing."""
    path = trust_path(home, target)
    try:
        found = memo(Door(home), "trust", os.fspath(path), _parse, cap=TRUST_CAP)
    except HomeFileError as exc:
        return "unreadable", frozenset(), str(exc)
    if found is None:
        return None, frozenset(), None
    sha, value = found
    if isinstance(value, HomeError):
        return sha, frozenset(), str(value)
    return sha, value, None


def write_trust(home: Path, target: Target, entries: Iterable[str], *, fsync: bool = True) -> None:
    """Replace the trust marks of one memory file, atomically (`.toolnexus/` must exist).

    Call it under the memory file's lock, so two trusted writes never lose a mark.
    The temp file has a fresh random name, is created exclusively and never
    followed, and is removed if anything fails.
    """
    path = trust_path(home, target)
    body = json.dumps({"entries": sorted(set(map(nfc, entries)))}, ensure_ascii=False, indent=1)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            os.write(fd, (body + "\n").encode("utf-8"))
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        dirfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
