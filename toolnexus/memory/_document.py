"""The memory file format: Markdown in which every `- ` list item is an entry.

One parser for MEMORY.md and USER.md, shared by the memory tool, the soul and
the command line. It never raises, because a person or an editor may save
anything; and an unmodified document renders back byte for byte, so prose a
person wrote survives every edit the tool makes.

The format is line-based on purpose (no Markdown library): the rules must be
simple enough for a person editing the file to predict.

* An entry starts with `- ` at column 0. The lines after it that start with a
  space or a tab are its continuation lines (indented two spaces when the tool
  writes them); empty lines followed by such a line belong to it too, as in a
  Markdown list item.
* Every other line (headings, paragraphs, blank lines, `*` bullets) is prose.
* Line endings are normalised before parsing (CRLF, a lone CR, a mix: all LF),
  so a file reads the same whoever reads it. A leading UTF-8 BOM and the file's
  newline style (CRLF when its first line ends so, else LF) are kept for
  writing back: a file in one style renders back byte for byte, and a file
  with old Mac (CR) or mixed line endings is written in LF.

A document is kept as parallel tuples (is it an entry, its raw lines, its
text), so that an edit (`memory/_splice.py`) can splice them instead of parsing the
whole file again; `Block` objects and the derived views are built only when
asked for.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import FrozenInstanceError, dataclass
from typing import Any, Literal

__all__ = [
    "Block",
    "MemoryDocument",
    "Parts",
    "format_entry",
    "make",
    "nfc",
    "normalize_text",
    "note_forms",
    "parse_memory",
    "parse_parts",
    "positions",
    "prose",
]

BOM = "\ufeff"
ENTRY_PREFIX = "- "
INDENT = "  "

#: One entry: a `- ` line, then its continuation lines (indented, or empty lines followed
#: by an indented one). Every line starting with `- ` starts one; everything between is prose.
_ENTRY = re.compile(r"^- [^\n]*(?:\n|\Z)(?:\n*[ \t][^\n]*(?:\n|\Z))*", re.MULTILINE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """A run of lines in a memory file: one entry, or prose between entries.

    `raw` is the source slice with LF line ends (newlines included), so rendering
    is lossless; `text` is what the entry says (no `- ` marker, no continuation
    indent) or, for prose, `raw` itself. `line` is the 1-based line it starts on.
    """

    kind: Literal["entry", "prose"]
    raw: str
    text: str
    line: int


Parts = tuple[tuple[bool, ...], tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Tally:
    """What a document counts of its notes, carried over by an edit that splices it
    (`_splice`) instead of being counted again: characters as the soul shows them,
    extra copies, empty entries, and its prose (None: not joined yet)."""

    chars: int
    dups: int
    empties: int
    prose: str | None


class MemoryDocument:
    """A parsed memory file; immutable, so a snapshot never changes under a reader.

    Entries with identical text (compared in NFC) are one note, and an entry with
    no text (`- ` alone) is no note: `entries` and `chars` count each note once,
    as the soul shows it; `blocks` keep every line as written.
    """

    __slots__ = (
        "_blocks",
        "_chars",
        "_dups",
        "_empties",
        "_entries",
        "_extra",
        "_forms",
        "_kinds",
        "_prose",
        "_raws",
        "_text",
        "_texts",
        "bom",
        "newline",
    )

    #: True when the file starts with a UTF-8 byte order mark (kept on rewrite).
    bom: bool
    #: The file's newline style, used when it is written back.
    newline: Literal["\n", "\r\n"]
    _kinds: tuple[bool, ...]
    _raws: tuple[str, ...]
    _texts: tuple[str, ...]
    # Built when first asked for (or handed over by an edit).
    _blocks: tuple[Block, ...] | None
    _forms: dict[str, str] | None
    _entries: tuple[str, ...] | None
    _extra: tuple[Block, ...] | None
    _chars: int
    _dups: int
    _empties: int
    _prose: str | None
    _text: str | None

    def __init__(
        self,
        *,
        blocks: tuple[Block, ...] = (),
        bom: bool = False,
        newline: Literal["\n", "\r\n"] = "\n",
    ) -> None:
        blocks = tuple(blocks)
        parts = (
            tuple(b.kind == "entry" for b in blocks),
            tuple(b.raw for b in blocks),
            tuple(b.text for b in blocks),
        )
        _init(self, parts, bom, newline)
        _set(self, "_blocks", blocks)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryDocument):
            return NotImplemented
        return (self._kinds, self._raws, self._texts, self.bom, self.newline) == (
            other._kinds,
            other._raws,
            other._texts,
            other.bom,
            other.newline,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Copy and pickle as the parts (the derived views are built again on demand)."""
        return make, ((self._kinds, self._raws, self._texts), self.bom, self.newline)

    def __hash__(self) -> int:
        return hash((self._kinds, self._raws, self._texts, self.bom, self.newline))

    def __repr__(self) -> str:
        return f"MemoryDocument(blocks={self.blocks!r}, bom={self.bom!r}, newline={self.newline!r})"

    @property
    def parts(self) -> Parts:
        """The blocks as three columns: whether each is an entry, its raw lines, its text."""
        return self._kinds, self._raws, self._texts

    @property
    def tally(self) -> Tally:
        """What the document counts of its notes (counted once, then kept)."""
        note_forms(self)
        return Tally(chars=self._chars, dups=self._dups, empties=self._empties, prose=self._prose)

    @property
    def blocks(self) -> tuple[Block, ...]:
        """Every run of lines, in file order, with the line each starts on."""
        blocks = self._blocks
        if blocks is None:
            out: list[Block] = []
            line = 1
            for is_entry, raw, text in zip(self._kinds, self._raws, self._texts, strict=True):
                out.append(
                    Block(kind="entry" if is_entry else "prose", raw=raw, text=text, line=line)
                )
                line += raw.count("\n")
            blocks = tuple(out)
            _set(self, "_blocks", blocks)
        return blocks

    @property
    def entries(self) -> tuple[str, ...]:
        """The text of every note, in file order: each distinct entry once, none empty."""
        entries = self._entries
        if entries is None:
            entries = tuple(note_forms(self).values())
            _set(self, "_entries", entries)
        return entries

    @property
    def chars(self) -> int:
        """Characters the file puts in a prompt: no BOM, each line break counts as one,
        each note once (an empty entry or an extra copy adds nothing)."""
        note_forms(self)
        return self._chars

    @property
    def extra(self) -> tuple[Block, ...]:
        """Entry blocks that are not notes: empty ones and extra copies of a note."""
        extra = self._extra
        if extra is None:
            extra = ()
            note_forms(self)
            if self._dups or self._empties:
                seen: set[str] = set()
                found: list[Block] = []
                for b in self.blocks:
                    if b.kind == "entry":
                        key = nfc(b.text)
                        if not key.strip() or key in seen:
                            found.append(b)
                        seen.add(key)
                extra = tuple(found)
            _set(self, "_extra", extra)
        return extra

    @property
    def empties(self) -> int:
        """How many entries have no text (`- ` alone): no note, and a write drops them."""
        note_forms(self)
        return self._empties

    def is_note(self, block: Block) -> bool:
        """Whether `block` is shown: prose, or an entry that is the first copy of a note."""
        return block.kind == "prose" or not self.extra or block not in set(self.extra)

    def note(self, text: str) -> str | None:
        """The note that `text` is (compared in NFC), as the file holds it; None if none."""
        return note_forms(self).get(nfc(text))

    def copies(self, text: str) -> int:
        """How many entries hold the note `text` (compared in NFC): 0, 1, or more."""
        key = nfc(text)
        if key not in note_forms(self):
            return 0
        if not self._dups:
            return 1
        return len(positions(self, key))

    def render(self) -> str:
        """Return the file text in its newline style (a one-style file comes back byte for byte)."""
        text = self._text
        if text is None:
            body = "".join(self._raws)
            if self.newline == "\r\n":
                body = body.replace("\n", "\r\n")
            text = (BOM if self.bom else "") + body
            _set(self, "_text", text)
        return text


_set = object.__setattr__


def _init(doc: MemoryDocument, parts: Parts, bom: bool, newline: str) -> None:
    _set(doc, "_kinds", parts[0])
    _set(doc, "_raws", parts[1])
    _set(doc, "_texts", parts[2])
    _set(doc, "bom", bom)
    _set(doc, "newline", newline)
    for name in ("_blocks", "_chars", "_dups", "_empties", "_entries", "_extra", "_forms"):
        _set(doc, name, None)
    _set(doc, "_prose", None)
    _set(doc, "_text", None)


def make(parts: Parts, bom: bool, newline: str, **derived: Any) -> MemoryDocument:
    """A document from its parts, with any derived values an edit already knows."""
    doc = MemoryDocument.__new__(MemoryDocument)
    _init(doc, parts, bom, newline)
    for name, value in derived.items():
        _set(doc, f"_{name}", value)
    return doc


def note_forms(doc: MemoryDocument) -> dict[str, str]:
    """Each note's NFC form -> its first copy's text, in file order (and the counts)."""
    forms: dict[str, str] | None = doc._forms
    if forms is None:
        forms = {}
        chars = dups = empties = 0
        for is_entry, raw, text in zip(doc._kinds, doc._raws, doc._texts, strict=True):
            if is_entry:
                key = nfc(text)
                if not key.strip():
                    empties += 1
                    continue
                if key in forms:
                    dups += 1
                    continue
                forms[key] = text
            chars += len(raw)
        _set(doc, "_chars", chars)
        _set(doc, "_dups", dups)
        _set(doc, "_empties", empties)
        _set(doc, "_forms", forms)
    return forms


def positions(doc: MemoryDocument, key: str) -> list[int]:
    """Indexes of the entries holding the note `key` (an NFC form)."""
    kinds, texts = doc._kinds, doc._texts
    return [i for i in range(len(kinds)) if kinds[i] and nfc(texts[i]) == key]


def prose(doc: MemoryDocument) -> str:
    """Every prose line of `doc`, in order (what no edit of the tool may change)."""
    found = doc._prose
    if found is None:
        found = "".join([r for k, r in zip(doc._kinds, doc._raws, strict=True) if not k])
        _set(doc, "_prose", found)
    return found


def nfc(text: str) -> str:
    """The form entry text is compared in: NFD "cafe\u0301" is the same note as NFC "caf\u00e9"."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def normalize_text(text: str) -> str:
    """Turn CRLF and lone CR into LF: the one line-ending normaliser of home files and tool text."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _dedent(line: str) -> str:
    """Strip the continuation indent: two spaces, or else one space or tab."""
    if line.startswith(INDENT):
        return line[len(INDENT) :]
    return line[1:]


def _entry_text(raw: str) -> str:
    """What an entry's raw lines say: no marker, no continuation indent, no final line end."""
    end = raw.find("\n")
    if end < 0 or end == len(raw) - 1:  # the common case: one line
        return raw[len(ENTRY_PREFIX) : end if end >= 0 else None]
    first, *rest = raw.removesuffix("\n").split("\n")
    return "\n".join([first[len(ENTRY_PREFIX) :], *map(_dedent, rest)])


def parse_memory(text: str) -> MemoryDocument:
    """Parse memory-file text into entries and prose; never raises.

    Args:
        text: the file's text as decoded from UTF-8 (a BOM and any line endings allowed).
    """
    bom = text.startswith(BOM)
    body = text[1:] if bom else text
    first = body.find("\n")
    newline: Literal["\n", "\r\n"] = "\r\n" if first > 0 and body[first - 1] == "\r" else "\n"
    return make(parse_parts(normalize_text(body)), bom, newline)


def parse_parts(body: str) -> Parts:
    """Split LF-only text into its entries and the prose between them."""
    kinds: list[bool] = []
    raws: list[str] = []
    texts: list[str] = []
    at = 0
    for found in _ENTRY.finditer(body):
        start, end = found.span()
        if start > at:
            gap = body[at:start]
            kinds.append(False)
            raws.append(gap)
            texts.append(gap)
        raw = found.group()
        kinds.append(True)
        raws.append(raw)
        texts.append(_entry_text(raw))
        at = end
    if at < len(body):
        kinds.append(False)
        raws.append(body[at:])
        texts.append(body[at:])
    return tuple(kinds), tuple(raws), tuple(texts)


def format_entry(text: str) -> str:
    """Return the raw lines of one entry holding `text` (LF line ends).

    Every line after the first is indented, so no text can start a second entry
    or a heading: multi-line text stays one entry.
    """
    first, *rest = text.split("\n")
    return "".join([ENTRY_PREFIX, first, "\n", *(INDENT + line + "\n" for line in rest)])
