"""What a soul shows of a memory file: each note once, unsafe text withheld by the smallest unit.

A pure function of a parsed file, a scanner and the trusted entries (`_load`
passes the home's `Scanner`, whose verdicts are memoised, so a write scans
only new text). The rules:

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
* Then the whole file is read once more, every shown unit in file order
  (entries and prose units alike) with its neighbours (`Reader.together`):
  a match spanning several units, none of them flagged alone, withholds
  exactly the units it spans (an instruction split over two entries). A
  withheld or trusted unit breaks the reading: a pair is withheld together
  only when neither unit is flagged alone.
* An entry a person trusted (`toolnexus memory add --trust`, by its text) is
  shown whatever the scanner says.
* Blank lines stay as they are, except that a unit left out behind a gap (a
  blank line, or the start of the file) takes the blank lines after it along:
  one gap stays one gap, so the text still reads naturally.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ._document import Block, MemoryDocument, nfc

__all__ = ["Reader", "Skipped", "Unit", "View", "around", "view"]

#: An ATX heading: up to three spaces, one to six `#`, then a space or the line's end.
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")


class Reader(Protocol):
    """The scanner as `view` uses it (`scanner.Scanner` is one)."""

    def reasons(self, text: str) -> tuple[str, ...]:
        """Why `text` must not enter a system prompt (empty: it may)."""
        ...

    def together(self, texts: Sequence[str]) -> Sequence[_Joint]:
        """Findings on neighbouring texts read together, each with the indexes it spans."""
        ...


class _Joint(Protocol):
    @property
    def indexes(self) -> tuple[int, ...]: ...

    @property
    def finding(self) -> object: ...


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


@dataclass(slots=True)
class _Piece:
    """A run of the file: a unit (entry, prose unit), blank lines, or an entry left out."""

    raw: str
    kind: Literal["entry", "prose", "blank", "skipped"]
    text: str = ""
    line: int = 0
    reasons: tuple[str, ...] = ()
    trusted: bool = False


def view(doc: MemoryDocument, *, scan: Reader, trusted: frozenset[str] = frozenset()) -> View:
    """Return what the soul shows of `doc`, what it withholds and which entries are no note.

    `trusted` holds the texts (NFC) of entries a person vouched for: shown as they are.
    """
    pieces: list[_Piece] = []
    skipped: list[Skipped] = []
    extra = set(doc.extra)
    first: dict[str, int] = {}  # a note's text (NFC) -> the line of its first copy
    for block in doc.blocks:
        if block.kind == "prose":
            pieces.extend(_prose(block, scan))
            continue
        key = nfc(block.text)
        if block in extra:
            skipped.append(Skipped(line=block.line, copy_of=first.get(key)))
            pieces.append(_Piece(block.raw, "skipped"))
            continue
        first[key] = block.line
        if key in trusted:
            pieces.append(_Piece(block.raw, "entry", block.text, block.line, trusted=True))
        else:
            reasons = scan.reasons(block.text)
            pieces.append(_Piece(block.raw, "entry", block.text, block.line, reasons))
    _read_together(pieces, scan)
    return _render(pieces, skipped)


def around(doc: MemoryDocument, entry: str) -> tuple[str | None, str | None]:
    """The units just before and after the (last) entry `entry` in `doc`, as `view` cuts
    them: an entry, or a prose unit (a heading line, a paragraph); None at either end."""
    key = nfc(entry)
    blocks = doc.blocks
    at = max(
        (i for i, b in enumerate(blocks) if b.kind != "prose" and nfc(b.text) == key), default=-1
    )
    if at < 0:
        return None, None
    return _unit_next_to(blocks, at, -1), _unit_next_to(blocks, at, 1)


def _unit_next_to(blocks: Sequence[Block], at: int, step: int) -> str | None:
    i = at + step
    while 0 <= i < len(blocks):
        block = blocks[i]
        if block.kind != "prose":
            if block.text.strip():
                return block.text
        else:
            lines = _lines(block.raw)
            units = _units(lines)
            if units:
                a, b = units[-1] if step < 0 else units[0]
                return "".join(lines[a:b]).removesuffix("\n")
        i += step
    return None


def _read_together(pieces: list[_Piece], scan: Reader) -> None:
    """Withhold the units a match spans when only read with their neighbours (SPEC §3)."""
    run: list[_Piece] = []

    def read(run: list[_Piece]) -> None:
        for joint in scan.together([p.text for p in run]):
            why = (str(joint.finding),)
            for i in joint.indexes:
                run[i].reasons = _merge(run[i].reasons, why)

    for piece in pieces:
        if piece.kind in ("blank", "skipped"):
            continue
        # A unit flagged alone (withheld, or kept because trusted) ends the run: a pair
        # goes only when neither unit is flagged alone. A trusted unit that is safe
        # alone is read with its neighbours like any other.
        if piece.reasons or (piece.trusted and scan.reasons(piece.text)):
            read(run)
            run = []
        else:
            run.append(piece)
    read(run)


def _render(pieces: list[_Piece], skipped: list[Skipped]) -> View:
    shown = _Shown()
    entries: list[str] = []
    withheld: list[Unit] = []
    for piece in pieces:
        if piece.kind == "blank":
            shown.keep(piece.raw)
        elif piece.kind == "skipped":
            shown.leave_out()
        elif piece.reasons and not piece.trusted:
            withheld.append(
                Unit(kind=piece.kind, text=piece.text, line=piece.line, reasons=piece.reasons)
            )
            shown.leave_out()
        else:
            if piece.kind == "entry":
                entries.append(piece.text)
            shown.keep(piece.raw)
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


def _prose(block: Block, scan: Reader) -> list[_Piece]:
    """A prose run as units and blank lines, each unit with why it is withheld (if it is)."""
    # 1. Cut the run into units.
    lines = _lines(block.raw)
    units = _units(lines)
    reasons: list[tuple[str, ...]] = [()] * len(units)
    if scan.reasons(block.text):
        # 2. Each unit alone; then each pair of neighbours neither of which is flagged alone.
        alone = [scan.reasons("".join(lines[a:b])) for a, b in units]
        reasons = list(alone)
        for n in range(len(units) - 1):
            if not alone[n] and not alone[n + 1]:
                pair = scan.reasons("".join(lines[units[n][0] : units[n + 1][1]]))
                if pair:
                    reasons[n] = _merge(reasons[n], pair)
                    reasons[n + 1] = _merge(reasons[n + 1], pair)
        # 3. What stays must pass as a whole; if not (a wider spread), the rest goes too.
        out = {k for (a, b), why in zip(units, reasons, strict=True) if why for k in range(a, b)}
        rest = scan.reasons("".join(line for k, line in enumerate(lines) if k not in out))
        if rest:  # a heading that is safe alone always stays (SPEC §3)
            heads = [bool(_HEADING.match(lines[a])) for a, _ in units]
            reasons = [
                why or (() if head else rest) for why, head in zip(reasons, heads, strict=True)
            ]
    # 4. The units and the blank lines between them, in file order.
    starts = {a: (b, why) for (a, b), why in zip(units, reasons, strict=True)}
    pieces: list[_Piece] = []
    i = 0
    while i < len(lines):
        if i not in starts:  # a blank line
            pieces.append(_Piece(lines[i], "blank"))
            i += 1
            continue
        end, why = starts[i]
        raw = "".join(lines[i:end])
        pieces.append(_Piece(raw, "prose", raw.removesuffix("\n"), block.line + i, why))
        i = end
    return pieces


def _units(lines: list[str]) -> list[tuple[int, int]]:
    """A prose run's units, as (first line, end line) indexes into `lines`: a heading
    line is one, a paragraph (lines up to a blank line or a heading) another."""
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
    return units


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
