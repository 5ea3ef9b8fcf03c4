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
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Block",
    "MemoryDocument",
    "append_entry",
    "drop_empty",
    "format_entry",
    "nfc",
    "normalize_text",
    "parse_memory",
    "remove_entries",
    "replace_entries",
]

BOM = "\ufeff"
ENTRY_PREFIX = "- "
INDENT = "  "
_INDENT_CHARS = frozenset(" \t")  # a line starting with one continues the entry above


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


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryDocument:
    """A parsed memory file; immutable, so a snapshot never changes under a reader.

    Entries with identical text (compared in NFC) are one note, and an entry with
    no text (`- ` alone) is no note: `entries` and `chars` count each note once,
    as the soul shows it; `blocks` keep every line as written.
    """

    blocks: tuple[Block, ...] = ()
    #: True when the file starts with a UTF-8 byte order mark (kept on rewrite).
    bom: bool = False
    #: The file's newline style, used when it is written back.
    newline: Literal["\n", "\r\n"] = "\n"
    _entries: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _chars: int = field(init=False, repr=False, compare=False)
    _extra: tuple[Block, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        entries: list[str] = []
        extra: list[Block] = []
        chars = 0
        for b in self.blocks:
            if b.kind == "entry":
                key = nfc(b.text)
                if not key.strip() or key in seen:
                    extra.append(b)
                    continue
                seen.add(key)
                entries.append(b.text)
            chars += len(b.raw)
        object.__setattr__(self, "_entries", tuple(entries))
        object.__setattr__(self, "_chars", chars)
        object.__setattr__(self, "_extra", tuple(extra))

    @property
    def entries(self) -> tuple[str, ...]:
        """The text of every note, in file order: each distinct entry once, none empty."""
        return self._entries

    @property
    def chars(self) -> int:
        """Characters the file puts in a prompt: no BOM, each line break counts as one,
        each note once (an empty entry or an extra copy adds nothing)."""
        return self._chars

    @property
    def extra(self) -> tuple[Block, ...]:
        """Entry blocks that are not notes: empty ones and extra copies of a note."""
        return self._extra

    def is_note(self, block: Block) -> bool:
        """Whether `block` is shown: prose, or an entry that is the first copy of a note."""
        return block.kind == "prose" or not self._extra or block not in set(self._extra)

    def render(self) -> str:
        """Return the file text in its newline style (a one-style file comes back byte for byte)."""
        body = "".join(b.raw for b in self.blocks)
        if self.newline == "\r\n":
            body = body.replace("\n", "\r\n")
        return (BOM if self.bom else "") + body


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


def _entry_end(lines: list[str], j: int) -> int:
    """Return the index just past the continuation lines that start at `lines[j]`.

    Blank lines followed by an indented line belong to the entry, as in a
    Markdown list item: the tool writes an inner blank line as "  ", and an editor
    that trims trailing whitespace must not split the entry in two.
    """
    count = len(lines)
    while j < count:
        if lines[j][:1] in _INDENT_CHARS:
            j += 1
            continue
        k = j
        while k < count and lines[k] in ("\n", ""):
            k += 1
        if k in (j, count) or lines[k][:1] not in _INDENT_CHARS:
            break
        j = k
    return j


def parse_memory(text: str) -> MemoryDocument:
    """Parse memory-file text into entries and prose; never raises.

    Args:
        text: the file's text as decoded from UTF-8 (a BOM and any line endings allowed).
    """
    bom = text.startswith(BOM)
    body = text[1:] if bom else text
    first = body.find("\n")
    newline: Literal["\n", "\r\n"] = "\r\n" if first > 0 and body[first - 1] == "\r" else "\n"
    return _parse(normalize_text(body), bom=bom, newline=newline)


def _parse(body: str, *, bom: bool, newline: Literal["\n", "\r\n"]) -> MemoryDocument:
    """Parse LF-only text (the style to write back is given)."""
    parts = body.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    blocks: list[Block] = []
    i, count = 0, len(lines)
    while i < count:
        line, j = lines[i], i + 1
        if line.startswith(ENTRY_PREFIX):
            j = _entry_end(lines, j)
            if j == i + 1:  # the common case: a one-line entry
                raw, text = line, line.removesuffix("\n")[len(ENTRY_PREFIX) :]
            else:
                raw = "".join(lines[i:j])
                first = line.removesuffix("\n")[len(ENTRY_PREFIX) :]
                rest = [_dedent(more.removesuffix("\n")) for more in lines[i + 1 : j]]
                text = "\n".join([first, *rest])
            blocks.append(Block(kind="entry", raw=raw, text=text, line=i + 1))
        else:
            while j < count and not lines[j].startswith(ENTRY_PREFIX):
                j += 1
            raw = "".join(lines[i:j])
            blocks.append(Block(kind="prose", raw=raw, text=raw, line=i + 1))
        i = j
    return MemoryDocument(blocks=tuple(blocks), bom=bom, newline=newline)


def format_entry(text: str) -> str:
    """Return the raw lines of one entry holding `text` (LF line ends).

    Every line after the first is indented, so no text can start a second entry
    or a heading: multi-line text stays one entry.
    """
    first, *rest = text.split("\n")
    return "".join([ENTRY_PREFIX, first, "\n", *(INDENT + line + "\n" for line in rest)])


def _rebuild(doc: MemoryDocument, raws: Iterable[str]) -> MemoryDocument:
    """Parse the edited raw blocks again, so line numbers and blocks stay exact."""
    return _parse("".join(raws), bom=doc.bom, newline=doc.newline)


def append_entry(doc: MemoryDocument, text: str) -> MemoryDocument:
    """Add an entry right after the last entry (at the end when there is none).

    Keeping new entries next to the existing list keeps a person's footer prose
    at the bottom, where they put it.
    """
    raws = [b.raw for b in doc.blocks]
    entry_positions = [i for i, b in enumerate(doc.blocks) if b.kind == "entry"]
    at = entry_positions[-1] + 1 if entry_positions else len(raws)
    if at and not raws[at - 1].endswith("\n"):
        # Only the file's last line can lack a line end; give it one first.
        raws[at - 1] += "\n"
    raws.insert(at, format_entry(text))
    return _rebuild(doc, raws)


def _copies(doc: MemoryDocument, old: str) -> list[int]:
    """Indexes of the entry blocks holding the note `old` (every identical copy)."""
    key = nfc(old)
    return [i for i, b in enumerate(doc.blocks) if b.kind == "entry" and nfc(b.text) == key]


def replace_entries(doc: MemoryDocument, old: str, new: str) -> MemoryDocument:
    """Rewrite the note `old` to hold `new`: its first copy is rewritten, other copies go."""
    at = _copies(doc, old)
    first, rest = (at[0], set(at[1:])) if at else (-1, set())
    raws = [
        format_entry(new) if i == first else b.raw
        for i, b in enumerate(doc.blocks)
        if i not in rest
    ]
    return _rebuild(doc, raws)


def remove_entries(doc: MemoryDocument, old: str) -> MemoryDocument:
    """Drop every copy of the note `old`; prose stays as it was."""
    gone = set(_copies(doc, old))
    return _rebuild(doc, (b.raw for i, b in enumerate(doc.blocks) if i not in gone))


def drop_empty(doc: MemoryDocument) -> MemoryDocument:
    """Drop entries with no text (`- ` alone): they are no note, and a write cleans them up."""
    if not any(b.kind == "entry" and not b.text.strip() for b in doc.extra):
        return doc
    keep = (b.raw for b in doc.blocks if not (b.kind == "entry" and not b.text.strip()))
    return _rebuild(doc, keep)
