"""Memory history records as both stores keep them: the types, and the rules they share.

A record is `id, time, target, action, before, after, source`. For `add`,
`replace` and `remove` (and an `undo` of one) `before` / `after` are the
entry's text as the tool's `text` gives it; for `outside-edit`, `restore` (and
an `undo` of one) they are the whole file's text. Each record also keeps, out
of sight, the digest of the file's bytes right after it (`digest`), and each
distinct version is kept once by that digest, so `restore` can put any kept
version back exactly. What `forget` blanks (`forgotten_texts`, `holds`) and
what `compact` keeps (`compact_cutoff`) are decided here, once, for both.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal

from ..memory._document import nfc, parse_memory

__all__ = [
    "ACTIONS",
    "COLUMNS",
    "REDACTED",
    "Change",
    "Pending",
    "Row",
    "compact_cutoff",
    "digest",
    "file_text",
    "forgotten_texts",
    "holds",
    "now",
    "row_of",
]


Action = Literal["add", "replace", "remove", "outside-edit", "undo", "restore"]


ACTIONS: tuple[Action, ...] = ("add", "replace", "remove", "outside-edit", "undo", "restore")


Shape = Literal["entry", "merge", "file"]


#: What `forget` appends to a record's source.
REDACTED = "redacted"


@dataclass(frozen=True, slots=True)
class Change:
    """One recorded change to a memory file: what `memory log` shows, field for field."""

    id: int
    time: str
    target: str
    action: str
    before: str | None
    after: str | None
    source: str

    def to_json(self) -> str:
        """One line of `memory log --json`: exactly the record's fields."""
        return json.dumps(asdict(self), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Pending:
    """A change about to be recorded: what it did, and how an undo would invert it."""

    action: Action
    before: str | None
    after: str | None
    shape: Shape = "entry"


@dataclass(frozen=True, slots=True)
class Row:
    """A record with what undo and restore need besides its public fields."""

    change: Change
    shape: Shape
    digest: str
    redacted: bool


#: The last bytes digested and their digest: a write digests the file it leaves, and the
#: next write the same bytes as it finds them.
_last_digest: tuple[bytes, str] = (b"", hashlib.sha256(b"").hexdigest())


def digest(data: bytes | None) -> str:
    """The digest a record keeps of a file's bytes; '' for no file."""
    global _last_digest
    if data is None:
        return ""
    last = _last_digest
    if last[0] == data:
        return last[1]
    found = hashlib.sha256(data).hexdigest()
    _last_digest = (data, found)
    return found


def file_text(data: bytes | None) -> str | None:
    """A file's bytes as a record shows them (None: no file, or not UTF-8 text)."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


COLUMNS = "id, time, target, action, before, after, source, shape, digest, redacted"


def row_of(values: Sequence[object]) -> Row:
    id_, time, target, action, before, after, source, shape, dig, redacted = values
    change = Change(
        int(id_),  # type: ignore[call-overload]
        str(time),
        str(target),
        str(action),
        None if before is None else str(before),
        None if after is None else str(after),
        str(source),
    )
    return Row(change, shape, str(dig), bool(redacted))  # type: ignore[arg-type]


def forgotten_texts(row: Row) -> list[str]:
    """What `forget` blanks of a record: an entry change's texts, or the lines a
    whole-file change added or removed."""
    c = row.change
    if row.shape == "file":
        return _changed_lines(c.before or "", c.after or "")
    return [t for t in (c.before, c.after) if t]


def _changed_lines(before: str, after: str) -> list[str]:
    """The lines one whole-file change added or removed, without list markers or indent."""
    old, new = set(before.splitlines()), set(after.splitlines())
    out = []
    for line in sorted(old ^ new):
        text = line.strip()
        text = text[2:].strip() if text.startswith("- ") else text
        if text and text != "-":
            out.append(text)
    return out


def holds(text: str, texts: Sequence[str]) -> bool:
    """Whether `text` (a file version, or a record's text) holds one of `texts`: raw, or in
    one of its entries (whose continuation lines are indented in the file)."""
    if not texts or not text:
        return False
    if any(t in text for t in texts):
        return True
    entries = [nfc(e) for e in parse_memory(text).entries]
    return any(nfc(t) in e for t in texts for e in entries)


def now() -> str:
    """The current UTC time as the state database writes it (sortable text)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def compact_cutoff(keep_days: int) -> str:
    """The time before which `compact` drops records ('' when that is before the calendar
    starts: nothing is that old)."""
    try:
        then = datetime.now(timezone.utc) - timedelta(days=keep_days)
    except OverflowError:
        return ""
    return then.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
