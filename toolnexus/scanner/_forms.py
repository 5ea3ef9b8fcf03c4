"""The forms of a text the memory scanner reads, each mapped back to the text as written.

An attacker hides an instruction from a scanner that reads the text as written:
invisible characters inside words, letters from other scripts that look Latin,
fullwidth or small-capital letters, letters spaced or dotted apart, digits for
letters, words cut by an HTML comment, or a whole sentence in Unicode tag
characters that render as nothing. Each form below undoes some of that:

* `visible`: every default-ignorable code point removed (format characters,
  variation selectors, the whole tag block, Hangul and braille blank fillers).
* `written`: `visible`, NFKC, one character at a time (fullwidth and
  mathematical letters become ASCII; case kept: credentials are read here).
* `skeleton`: `visible` folded for phrase rules: NFKD with the marks dropped
  ("précédentes" reads "precedentes"), look-alikes mapped to Latin (Cyrillic,
  Greek, small capitals), lowercased; `-`/`_` between letters read as a space,
  except inside a web or e-mail address ("mail-drop.example" stays one host);
  four or more single letters with one separator between them glued
  ("i g n o r e" reads "ignore"), and then shorter runs too ("c u r l  | s h"
  reads "curl | sh"); every whitespace run one space, or one line break if it
  holds one.
* `plain`: `written` lowercased with whitespace collapsed, for scripts the
  look-alike map would garble (Cyrillic, Greek, CJK, Arabic...).
* `leet`, `uncommented` and `nospace`: the skeleton with digits read as
  letters inside words ("1gn0r3"), with comments and markup that cut words cut
  out ("ig<!-- -->nore", "sys<span></span>tem", "**ig**no**re**", "cu''rl"),
  and with everything but letters removed (for letters
  spaced out evenly, "i g n o r e a l l"); each built only for a text that
  needs it.

Each form is built without its map (fast); `Form.span` rebuilds it with the
map, only when a rule matched, to name the span in the text as written.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = ["Form", "Hidden", "forms", "hidden_tag_text", "is_ignorable", "skeleton", "written"]

#: A map from each character of a form to the index of the character of the text as
#: written it came from (one more item at the end: the text's length).
Offsets = list[int]
_Step = Callable[[str, Offsets | None], tuple[str, Offsets | None]]

# -- what is invisible -------------------------------------------------------------------

# Default-ignorable code points that are not format characters (category Cf), and
# blank characters that draw nothing although they are not default-ignorable.
_IGNORABLE_EXTRA = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0\u2800"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
)


def is_ignorable(ch: str) -> bool:
    """Whether `ch` draws nothing: a default-ignorable code point or a blank filler."""
    code = ord(ch)
    if code < 0xAD:
        return False
    return (
        unicodedata.category(ch) == "Cf"
        or ch in _IGNORABLE_EXTRA
        or 0xE0000 <= code <= 0xE0FFF
        or 0x1BCA0 <= code <= 0x1BCA3
    )


_IGNORABLE_RUN = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+"
)
#: Format characters outside `_IGNORABLE_RUN` (rare: Arabic and Syriac marks, ...).
_OTHER_FORMAT = re.compile("[\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd]")

# -- look-alikes -------------------------------------------------------------------------

# Letters an attacker swaps in for Latin ones: Cyrillic, Greek, small capitals and
# modifier letters, and a few Latin letters that NFKD leaves alone.
_LOOKALIKES = str.maketrans(
    "абсдеһіјӏорԛѕԝхуьАВСЕНІЈКМОРЅТХУԁɡıαβεηικνοτυχρςΑΒΕΗΙΚΜΝΟΡΤΥΧΖ"
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢłđøħŧƀɨʉ",
    "abcdehijlopqswxybABCEHIJKMOPSTXYdgiabenikvotuxpsABEHIKMNOPTYXZ"
    "abcdefghijklmnopqrstuvwyzldohtbiu",
)


class _Fold(dict[int, str]):
    """`str.translate` table that fills itself: each character folded once per process."""

    def __init__(self, fold: Callable[[str], str]) -> None:
        super().__init__()
        self._fold = fold

    def __missing__(self, code: int) -> str:
        folded = self[code] = self._fold(chr(code))
        return folded


def _skeleton_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFKD", ch)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me"))
    return kept.translate(_LOOKALIKES).lower()


def _written_char(ch: str) -> str:
    return unicodedata.normalize("NFKC", ch)


_SKELETON_TABLE = _Fold(_skeleton_char)
_WRITTEN_TABLE = _Fold(_written_char)

# -- the steps ---------------------------------------------------------------------------


def _translate(table: _Fold, text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    out = text.translate(table)
    if offsets is None:
        return out, None
    if len(out) == len(text):
        return out, offsets
    mapped: Offsets = []
    for i, ch in enumerate(text):
        mapped.extend([offsets[i]] * len(table[ord(ch)]))
    mapped.append(offsets[-1])
    return out, mapped


def _sub(
    pattern: re.Pattern[str],
    repl: Callable[[re.Match[str]], str],
    text: str,
    offsets: Offsets | None,
    *,
    stride: int = 0,
) -> tuple[str, Offsets | None]:
    """`pattern.sub(repl, text)`, the map kept: a replacement of the same length maps
    character for character, any other to where its match began; with `stride`, a
    replacement keeps every `stride`-th character of its match and maps to those."""
    if offsets is None:
        return pattern.sub(repl, text), None
    parts: list[str] = []
    mapped: Offsets = []
    last = 0
    for m in pattern.finditer(text):
        parts.append(text[last : m.start()])
        mapped.extend(offsets[last : m.start()])
        new = repl(m)
        parts.append(new)
        if stride:
            mapped.extend(offsets[m.start() : m.end() : stride])
        elif new and len(new) == m.end() - m.start():
            mapped.extend(offsets[m.start() : m.end()])
        else:
            mapped.extend([offsets[m.start()]] * len(new))
        last = m.end()
    parts.append(text[last:])
    mapped.extend(offsets[last:])
    return "".join(parts), mapped


def _drop(_: re.Match[str]) -> str:
    return ""


def _one_space(match: re.Match[str]) -> str:
    return "\n" if "\n" in match.group() else " "


def _glue(match: re.Match[str]) -> str:
    return match.group()[::2]


# `-`/`_` between letters, except inside a web or e-mail address (a host name stays one
# token: "mail-drop.example" must still read as an address).
_WORD_JOINER = re.compile(
    r"\b(?:https?|s?ftp|s3|gs|wss?)://\S+|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}"
    r"|(?<=[^\W_])[-_](?=[^\W_])"
)
_WHITESPACE = re.compile(r"\s+")
# Four or more single letters, one separator between each ("i g n o r e", "i.g.n.o.r.e").
_SPACED = re.compile(r"(?<![^\W\d_])[^\W\d_](?:[ .·•*_/|~+:,-][^\W\d_]){3,}(?![^\W\d_])")
# In a text spelled out that way, shorter words too ("s h" after "c u r l").
_SPACED_SHORT = re.compile(r"(?<![^\W\d_])[^\W\d_](?:[ .·•*_/|~+:,-][^\W\d_])+(?![^\W\d_])")
# Comments, and markup that can cut a word: tags, emphasis, code marks, empty quotes
# ("ig<!-- -->nore", "sys<span></span>tem", "**ig**no**re**", "cu''rl").
_COMMENT = re.compile(
    r"<!--.*?(?:-->|$)|\[//\]: ?# ?[(\"'][^\n]*"
    r"|</?[a-z][a-z0-9]{0,15}(?:\s[^<>\n]{0,200})?/?>|(?<=[^\W_])(?:''|\"\")(?=[^\W_])|[*`]{1,3}",
    re.DOTALL,
)
_CUT_WORD = re.compile(
    r"[^\W_](?:[*`]{1,3}|''|\"\"|</?[a-z][a-z0-9]{0,15}(?:\s[^<>\n]{0,200})?/?>)+[^\W_]"
)
_NOT_LETTERS = re.compile(r"[\W_]+")
# A word that reads as leetspeak: a look-alike digit between two letters ("pr0mpt",
# "1gn0re"), not a version or a size ("v3", "ipv4", "sha256", "x86_64").
_LEET_TOKEN = re.compile(r"[a-z][0134578@$][a-z]")
_LEET = str.maketrans("0134578@$|!", "oieastbasii")
_LEET_WORD = re.compile(r"[\w@$|!]*[0-9@$|!][\w@$|!]*")


def _visible(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    text, offsets = _sub(_IGNORABLE_RUN, _drop, text, offsets)
    if _OTHER_FORMAT.search(text):
        text, offsets = _sub(_OTHER_FORMAT, _drop, text, offsets)
    return text, offsets


def _folded(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    if text.isascii():
        return text.lower(), offsets
    return _translate(_SKELETON_TABLE, text, offsets)


def _written(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    if text.isascii():
        return text, offsets
    return _translate(_WRITTEN_TABLE, text, offsets)


def _joiner(match: re.Match[str]) -> str:
    found = match.group()
    return found if len(found) > 1 else " "


def _joined(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    return _sub(_WORD_JOINER, _joiner, text, offsets)


def _glued(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    spaced = _SPACED_SHORT if _SPACED.search(text) else _SPACED
    return _sub(spaced, _glue, text, offsets, stride=2)


def _collapsed(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    return _sub(_WHITESPACE, _one_space, text, offsets)


def _uncommented(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    return _sub(_COMMENT, _drop, text, offsets)


def _leet_word(match: re.Match[str]) -> str:
    word = match.group()
    return word.translate(_LEET) if re.search(r"[a-z]", word) else word


def _leet(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    return _sub(_LEET_WORD, _leet_word, text, offsets)


def _squeezed(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    return _sub(_NOT_LETTERS, _drop, text, offsets)


def _lowered(text: str, offsets: Offsets | None) -> tuple[str, Offsets | None]:
    low = text.lower()
    if len(low) == len(text) or offsets is None:
        return low, offsets if len(low) == len(text) else None
    mapped: Offsets = []
    for i, ch in enumerate(text):
        mapped.extend([offsets[i]] * len(ch.lower()))
    mapped.append(offsets[-1])
    return low, mapped


_SKELETON_STEPS: tuple[_Step, ...] = (_visible, _folded, _joined, _glued, _collapsed)
_WRITTEN_STEPS: tuple[_Step, ...] = (_visible, _written)
_PLAIN_STEPS: tuple[_Step, ...] = (_visible, _written, _lowered, _collapsed)
_UNCOMMENTED_STEPS: tuple[_Step, ...] = (
    _visible,
    _folded,
    _uncommented,
    _joined,
    _glued,
    _collapsed,
)
_LEET_STEPS: tuple[_Step, ...] = (*_SKELETON_STEPS, _leet)
_NOSPACE_STEPS: tuple[_Step, ...] = (*_SKELETON_STEPS, _squeezed)


def _run(steps: tuple[_Step, ...], text: str, track: bool) -> tuple[str, Offsets | None]:
    offsets: Offsets | None = list(range(len(text) + 1)) if track else None
    for step in steps:
        text, offsets = step(text, offsets)
    return text, offsets


@dataclass(frozen=True, slots=True)
class Form:
    """One form of a text (`name`), built by `steps`; maps its spans back to the text."""

    name: str
    text: str
    source: str
    steps: tuple[_Step, ...]
    _offsets: list[Offsets] = field(default_factory=list, repr=False, compare=False)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text as written that the form's `[start, end)` came from."""
        if not self._offsets:
            built, offsets = _run(self.steps, self.source, track=True)
            assert offsets is not None, self.name
            assert built == self.text, (self.name, built, self.text)
            self._offsets.append(offsets)
        offsets = self._offsets[0]
        first = offsets[start]
        last = offsets[max(end - 1, start)] + 1
        return first, max(last, first)


def skeleton(text: str) -> str:
    """The form phrase rules read (see the module docstring)."""
    return _run(_SKELETON_STEPS, text, track=False)[0]


def written(text: str) -> str:
    """The form credentials are read in: invisibles removed, NFKC, case kept."""
    return _run(_WRITTEN_STEPS, text, track=False)[0]


def forms(text: str) -> Iterator[Form]:
    """The forms of `text` worth reading, the skeleton first; `leet` and `uncommented`
    only when the text has what they undo."""
    skel = skeleton(text)
    yield Form("skeleton", skel, text, _SKELETON_STEPS)
    written = _run(_WRITTEN_STEPS, text, track=False)[0]
    yield Form("written", written, text, _WRITTEN_STEPS)
    if not text.isascii():
        yield Form("plain", _run(_PLAIN_STEPS, text, track=False)[0], text, _PLAIN_STEPS)
    if "<!--" in skel or "[//]:" in skel or _CUT_WORD.search(skel):
        uncommented = _run(_UNCOMMENTED_STEPS, text, track=False)[0]
        yield Form("uncommented", uncommented, text, _UNCOMMENTED_STEPS)
    if _LEET_TOKEN.search(skel):
        yield Form("leet", _leet(skel, None)[0], text, _LEET_STEPS)
    if _SPACED.search(_folded(_visible(text, None)[0], None)[0]):
        yield Form("nospace", _squeezed(skel, None)[0], text, _NOSPACE_STEPS)


# -- text hidden in tag characters --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hidden:
    """Text spelled in Unicode tag characters (which render as nothing), and where."""

    text: str
    span: tuple[int, int]


_TAG_RUN = re.compile("[\U000e0020-\U000e007e]{2,}")
# A subdivision flag: black flag, two tag letters, one to four tag letters or digits,
# cancel tag (England is black flag, g b e n g, cancel).
_FLAG = re.compile(
    "\U0001f3f4[\U000e0061-\U000e007a]{2}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,4}"
    "\U000e007f"
)


def flags(text: str) -> Iterator[tuple[int, int]]:
    """The spans of well-formed subdivision flags in `text` (their tags are allowed)."""
    for m in _FLAG.finditer(text):
        yield m.start(), m.end()


def hidden_tag_text(text: str) -> list[Hidden]:
    """Runs of tag characters outside a well-formed flag, read as the ASCII they encode."""
    if not any(0xE0000 <= ord(ch) <= 0xE007F for ch in text):
        return []
    allowed = [range(a, b) for a, b in flags(text)]
    found: list[Hidden] = []
    for m in _TAG_RUN.finditer(text):
        if any(m.start() in r for r in allowed):
            continue
        found.append(Hidden("".join(chr(ord(c) - 0xE0000) for c in m.group()), m.span()))
    return found
