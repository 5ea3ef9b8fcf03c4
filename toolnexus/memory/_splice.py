"""Edits of a parsed memory file: splice the document's parts, check the seams.

The memory tool edits a document once per write. Parsing the whole file again
after each edit would cost a pass over every entry, so an edit replaces the
parts it changes and re-parses only the lines around them: they must come out
as the splice says, with nothing on either side reaching across it (an entry
taking the next lines as its continuation, prose meeting prose); else the whole
text is parsed again. Either way a document is always what a parse of its own
text gives. What the document derives (its notes, its size) is carried over
from the edit, not recomputed.
"""

from __future__ import annotations

import re
from typing import Any

from ._document import (
    BOM,
    MemoryDocument,
    Parts,
    format_entry,
    make,
    nfc,
    note_forms,
    parse_memory,
    parse_parts,
    positions,
)

__all__ = ["append_entry", "drop_empty", "remove_entries", "replace_entries"]

#: Text that would continue an entry right above it.
_CONTINUES = re.compile(r"\n*[ \t]")


def _reparsed(doc: MemoryDocument, raws: tuple[str, ...] | list[str]) -> MemoryDocument:
    """The slow, sure way: parse the edited lines again."""
    return _settled(doc, parse_parts("".join(raws)))


def _settled(doc: MemoryDocument, parts: Parts, **derived: Any) -> MemoryDocument:
    """The edited document, with the BOM and newline style a parse of its text would find.

    An edit keeps the file's style, unless what is left cannot carry it: text with
    no line break left reads as LF, and prose left starting with U+FEFF would read
    as a BOM (then the text is parsed whole).
    """
    raws = parts[1]
    newline = doc.newline if len(raws) > 1 or (raws and "\n" in raws[0]) else "\n"
    if not doc.bom and raws and raws[0].startswith(BOM):
        body = "".join(raws)
        return parse_memory(body.replace("\n", "\r\n") if newline == "\r\n" else body)
    return make(parts, doc.bom, newline, **derived)


def _splice(
    doc: MemoryDocument, start: int, stop: int, new: list[tuple[bool, str, str]], **derived: Any
) -> MemoryDocument:
    """`doc` with parts `start:stop` replaced by `new` (prose meeting prose merged), checked.

    The lines around the splice are parsed again and must come out as the
    splice says, with nothing on either side reaching across it; else the whole
    text is parsed again (and `derived` dropped), so a document is always what
    a parse of its text gives.
    """
    kinds, raws, texts = doc.parts
    mid = list(new)
    lo, hi = start, stop
    left = lo > 0 and not kinds[lo - 1]
    right = hi < len(kinds) and not kinds[hi]
    if mid:
        if left and not mid[0][0]:
            lo -= 1
            raw = raws[lo] + mid[0][1]
            mid[0] = (False, raw, raw)
        if right and not mid[-1][0]:
            raw = mid[-1][1] + raws[hi]
            mid[-1] = (False, raw, raw)
            hi += 1
    elif left and right:
        raw = raws[lo - 1] + raws[hi]
        mid = [(False, raw, raw)]
        lo, hi = lo - 1, hi + 1
    parts: Parts = (
        kinds[:lo] + tuple(m[0] for m in mid) + kinds[hi:],
        raws[:lo] + tuple(m[1] for m in mid) + raws[hi:],
        texts[:lo] + tuple(m[2] for m in mid) + texts[hi:],
    )
    if not _fits(parts, lo, lo + len(mid)):
        return _reparsed(doc, parts[1])
    return _settled(doc, parts, **derived)


def _fits(parts: Parts, lo: int, hi: int) -> bool:
    """Whether parts `lo:hi` (new) and their neighbours read back exactly as given."""
    kinds, raws, texts = parts
    a = max(lo - 1, 0)
    while a > 0 and not kinds[a] and not raws[a].strip("\n"):
        a -= 1  # blank lines alone: what comes before may reach across them
    b = min(hi + 1, len(kinds))
    while b < len(kinds) and not kinds[b - 1] and not raws[b - 1].strip("\n"):
        b += 1
    window = "".join(raws[a:b])
    if b < len(kinds) and not window.endswith("\n"):
        return False
    if parse_parts(window) != (kinds[a:b], raws[a:b], texts[a:b]):
        return False
    return not (a > 0 and _reaches(kinds[a - 1], kinds[a], window)) and not (
        b < len(kinds) and _reaches(kinds[b - 1], kinds[b], raws[b])
    )


def _reaches(entry_before: bool, entry_after: bool, after: str) -> bool:
    """Whether what is before a seam would take in what is after it: an entry its
    continuation lines, prose the next prose."""
    if entry_before:
        return _CONTINUES.match(after) is not None
    return not entry_after


def _last_entry(doc: MemoryDocument) -> int:
    """The index of the last entry, or -1."""
    kinds = doc.parts[0]
    return len(kinds) - 1 - kinds[::-1].index(True) if True in kinds else -1


def append_entry(doc: MemoryDocument, text: str) -> MemoryDocument:
    """Add an entry right after the last entry (at the end when there is none).

    Keeping new entries next to the existing list keeps a person's footer prose
    at the bottom, where they put it.
    """
    raws = doc.parts[1]
    at = _last_entry(doc) + 1 or len(raws)
    raw = format_entry(text)
    if at and not raws[at - 1].endswith("\n"):
        # Only the file's last line can lack a line end; give it one first.
        return _reparsed(doc, [*raws[: at - 1], raws[at - 1] + "\n", raw, *raws[at:]])
    forms = dict(note_forms(doc))
    key = nfc(text)
    tally = doc.tally
    derived: dict[str, Any] = {"chars": tally.chars, "dups": tally.dups, "empties": tally.empties}
    if not key.strip():
        derived["empties"] += 1
    elif key in forms:
        derived["dups"] += 1
    else:
        forms[key] = text
        derived["chars"] += len(raw)
    return _splice(doc, at, at, [(True, raw, text)], forms=forms, prose=tally.prose, **derived)


def _only_copy(doc: MemoryDocument, key: str) -> int | None:
    """The index of the one entry holding the note `key`; None when not exactly one."""
    forms = note_forms(doc)
    if key not in forms or doc.tally.dups:
        return None
    kinds, texts, stored = doc.parts[0], doc.parts[2], forms[key]
    at: int = texts.index(stored)
    while not kinds[at]:  # prose with the same text as the entry: look further
        at = texts.index(stored, at + 1)
    return at


def replace_entries(doc: MemoryDocument, old: str, new: str) -> MemoryDocument:
    """Rewrite the note `old` to hold `new`: its first copy is rewritten, other copies go."""
    key, now = nfc(old), nfc(new)
    at = _only_copy(doc, key)
    forms = note_forms(doc)
    if at is None or not now.strip() or (now != key and now in forms):
        gone = positions(doc, key)
        first, rest = (gone[0], set(gone[1:])) if gone else (-1, set())
        raws = [format_entry(new) if i == first else r for i, r in enumerate(doc.parts[1])]
        return _reparsed(doc, [r for i, r in enumerate(raws) if i not in rest])
    raw = format_entry(new)
    if now == key:
        changed = dict(forms)
        changed[key] = new
    else:  # the note keeps its place in the order
        changed = {(now if k == key else k): (new if k == key else v) for k, v in forms.items()}
    tally = doc.tally
    return _splice(
        doc,
        at,
        at + 1,
        [(True, raw, new)],
        forms=changed,
        chars=tally.chars + len(raw) - len(doc.parts[1][at]),
        dups=0,
        empties=tally.empties,
        prose=tally.prose,
    )


def remove_entries(doc: MemoryDocument, old: str) -> MemoryDocument:
    """Drop every copy of the note `old`; prose stays as it was."""
    key = nfc(old)
    at = _only_copy(doc, key)
    if at is None:
        gone = set(positions(doc, key))
        return _reparsed(doc, [r for i, r in enumerate(doc.parts[1]) if i not in gone])
    forms = dict(note_forms(doc))
    del forms[key]
    tally = doc.tally
    return _splice(
        doc,
        at,
        at + 1,
        [],
        forms=forms,
        chars=tally.chars - len(doc.parts[1][at]),
        dups=0,
        empties=tally.empties,
        prose=tally.prose,
    )


def drop_empty(doc: MemoryDocument) -> MemoryDocument:
    """Drop entries with no text (`- ` alone): they are no note, and a write cleans them up."""
    if not doc.empties:
        return doc
    keep = [
        r for is_entry, r, t in zip(*doc.parts, strict=True) if not (is_entry and not t.strip())
    ]
    return _reparsed(doc, keep)
