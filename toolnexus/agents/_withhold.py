"""What a soul shows of a memory file: each note once, unsafe text withheld by the smallest unit.

A pure function of a parsed file and a scanner (`_load` passes the memoised
`verdict`, so a write scans only new text). The rules:

* Entries with identical text (NFC) are one note: the first copy is shown, the
  extra copies are left out, and so is an entry with no text (`- ` alone).
* An entry the scanner flags is withheld. Prose is cut into units: a heading
  line is one, a paragraph (lines up to a blank line or a heading) another.
  A unit the scanner flags alone is withheld alone. Two neighbouring units of
  one prose run are also scanned together, as they stand in the file (so an
  injection split across a paragraph break, or between a heading and its
  paragraph, is caught): a flagged pair with neither unit flagged alone is
  withheld together. A prose run is cut only when the scanner flags it whole,
  and what stays of a run is scanned once more: should it still be flagged
  (an injection spread over three units, say), the rest of the run's
  paragraphs go too (a heading that is safe alone always stays).
* Blank lines stay as they are, except that a unit left out behind a gap (a
  blank line, or the start of the file) takes the blank lines after it along:
  one gap stays one gap, so the text still reads naturally.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ._memfile import Block, MemoryDocument, nfc

__all__ = ["Skipped", "Unit", "View", "view"]

#: The safety check: why a text must not enter a system prompt (empty = safe).
Scan = Callable[[str], tuple[str, ...]]

#: An ATX heading: up to three spaces, one to six `#`, then a space or the line's end.
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Unit:
    """A part of a memory file kept out of the soul because the scanner flags it."""

    kind: Literal["entry", "prose"]
    #: The entry's text, or the prose unit's lines (no final line break).
    text: str
    #: The 1-based line of the file the unit starts on.
    line: int
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """An entry that is no note: empty (`copy_of` None), or a copy of the note at line `copy_of`."""

    line: int
    copy_of: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class View:
    """A memory file as the soul shows it."""

    #: The shown text, without blank lines at either end.
    text: str
    #: Each shown note once, in file order.
    entries: tuple[str, ...]
    withheld: tuple[Unit, ...]
    skipped: tuple[Skipped, ...]


def view(doc: MemoryDocument, *, scan: Scan) -> View:
    """Return what the soul shows of `doc`, what it withholds and which entries are no note."""
    shown = _Shown()
    entries: list[str] = []
    withheld: list[Unit] = []
    skipped: list[Skipped] = []
    extra = set(doc.extra)
    first: dict[str, int] = {}  # a note's text (NFC) -> the line of its first copy
    for block in doc.blocks:
        if block.kind == "prose":
            if scan(block.text):
                _prose(block, shown, withheld, scan)
            else:
                shown.keep(block.raw)
            continue
        key = nfc(block.text)
        if block in extra:
            skipped.append(Skipped(line=block.line, copy_of=first.get(key)))
            shown.leave_out()
            continue
        first[key] = block.line
        reasons = scan(block.text)
        if reasons:
            withheld.append(Unit(kind="entry", text=block.text, line=block.line, reasons=reasons))
            shown.leave_out()
        else:
            entries.append(block.text)
            shown.keep(block.raw)
    return View(
        text="".join(shown.pieces).strip("\n"),
        entries=tuple(entries),
        withheld=tuple(withheld),
        skipped=tuple(skipped),
    )


class _Shown:
    """The pieces of text shown so far, and whether blank lines that follow are dropped."""

    __slots__ = ("pieces", "skip_blank")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.skip_blank = False

    def keep(self, raw: str) -> None:
        if self.skip_blank:
            raw = _without_leading_blank_lines(raw)
            if not raw:
                return
            self.skip_blank = False
        self.pieces.append(raw)

    def leave_out(self) -> None:
        # Behind a gap, the blank lines after the unit go with it: one gap stays one.
        self.skip_blank = not self.pieces or _ends_blank(self.pieces[-1])


def _prose(block: Block, shown: _Shown, withheld: list[Unit], scan: Scan) -> None:
    """Show a flagged prose run unit by unit, withholding the smallest units that carry it."""
    # 1. Cut the run into units: (first line, end line) indexes into `lines`.
    lines = _lines(block.raw)
    units: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if _blank(lines[i]):
            i += 1
            continue
        j = i + 1
        if not _HEADING.match(lines[i]):
            while j < len(lines) and not _blank(lines[j]) and not _HEADING.match(lines[j]):
                j += 1
        units.append((i, j))
        i = j
    # 2. Each unit alone; then each pair of neighbours neither of which is flagged alone.
    alone = [scan("".join(lines[a:b])) for a, b in units]
    reasons = list(alone)
    for n in range(len(units) - 1):
        if not alone[n] and not alone[n + 1]:
            pair = scan("".join(lines[units[n][0] : units[n + 1][1]]))
            if pair:
                reasons[n] = _merge(reasons[n], pair)
                reasons[n + 1] = _merge(reasons[n + 1], pair)
    # 3. What stays must pass as a whole; if not (a wider spread), the rest goes too.
    out = {line for (a, b), why in zip(units, reasons, strict=True) if why for line in range(a, b)}
    rest = scan("".join(line for k, line in enumerate(lines) if k not in out))
    if rest:  # a heading that is safe alone always stays (SPEC §3)
        heads = [bool(_HEADING.match(lines[a])) for a, _ in units]
        reasons = [why or (() if head else rest) for why, head in zip(reasons, heads, strict=True)]
    # 4. Show the kept units and the blank lines between them, in file order.
    starts = {a: (b, why) for (a, b), why in zip(units, reasons, strict=True)}
    i = 0
    while i < len(lines):
        if i not in starts:  # a blank line
            shown.keep(lines[i])
            i += 1
            continue
        end, why = starts[i]
        text = "".join(lines[i:end])
        if why:
            text = text.removesuffix("\n")
            withheld.append(Unit(kind="prose", text=text, line=block.line + i, reasons=why))
            shown.leave_out()
        else:
            shown.keep(text)
        i = end


def _lines(raw: str) -> list[str]:
    """The lines of `raw`, line ends kept; cut at LF only (`splitlines` also cuts at U+2028)."""
    lines = [line + "\n" for line in raw.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _blank(line: str) -> bool:
    """Whether `line` holds nothing but spaces and tabs (other whitespace is text to scan)."""
    return not line.strip(" \t\n")


def _merge(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    return old + tuple(r for r in new if r not in old)


def _ends_blank(piece: str) -> bool:
    """Whether the last line of `piece` is blank (whitespace only)."""
    body = piece.removesuffix("\n")
    return _blank(body[body.rfind("\n") + 1 :])


def _without_leading_blank_lines(raw: str) -> str:
    start = 0
    while start < len(raw):
        end = raw.find("\n", start)
        end = len(raw) if end < 0 else end + 1
        if not _blank(raw[start:end]):
            break
        start = end
    return raw[start:]
