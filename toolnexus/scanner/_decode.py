"""Text hidden in an encoding inside a note: base64, hex, URL or HTML escapes, ROT13, reversal.

The scanner reads each payload decoded, as well as the note as written, so an
instruction cannot pass by being encoded. Only payloads that decode to
readable text count: a git hash, a digest or an SSH public key decodes to
bytes that are not text, and is left alone. Pure functions, linear in the
length of the text.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote_plus

__all__ = ["Decoded", "decoded"]


@dataclass(frozen=True, slots=True)
class Decoded:
    """A payload found in a text, decoded: its text, its span in the text, and the encoding."""

    text: str
    span: tuple[int, int]
    via: str


_BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{16,}={0,2}(?![\w+/=-])")
_HEX = re.compile(
    r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])"
    r"|(?:\\x[0-9A-Fa-f]{2}){4,}"
    r"|(?<![0-9A-Fa-f])[0-9A-Fa-f]{2}(?:[ :][0-9A-Fa-f]{2}){7,}(?![0-9A-Fa-f])"
)
_PERCENT = re.compile(r"\S*%[0-9A-Fa-f]{2}\S*")
_ENTITY = re.compile(r"(?:&#\d{1,7};|&#x[0-9A-Fa-f]{1,6};|&[A-Za-z]{2,8};)")
_ENTITY_RUN = re.compile(r"\S*(?:&#\d{1,7};|&#x[0-9A-Fa-f]{1,6};)\S*")
_ROT13_HINT = re.compile(r"rot-?13|caesar", re.IGNORECASE)
_REVERSED_HINT = re.compile(r"revers|backwards|right\sto\sleft", re.IGNORECASE)


def _readable(data: bytes) -> str | None:
    """`data` as text when it is UTF-8 and reads like words; else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or sum(ch.isprintable() or ch in "\n\t" for ch in text) < 0.95 * len(text):
        return None
    letters = sum(ch.isalpha() for ch in text)
    if letters < 4 or letters < 0.5 * len(text.replace(" ", "")):
        return None
    return text


def _base64(token: str) -> str | None:
    if token.isalpha() and (token.islower() or token.isupper()):
        return None  # a plain word, not a payload
    raw = token.rstrip("=")
    padded = raw + "=" * (-len(raw) % 4)
    alphabet = b"-_" if ("-" in raw or "_" in raw) else None
    try:
        data = base64.b64decode(padded, altchars=alphabet, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(data)


def _hex(token: str) -> str | None:
    digits = re.sub(r"\\x|[ :]", "", token)
    try:
        return _readable(bytes.fromhex(digits))
    except ValueError:
        return None


def decoded(text: str) -> Iterator[Decoded]:
    """Each payload in `text` that decodes to readable text, with its span and encoding."""
    for m in _BASE64.finditer(text):
        found = _base64(m.group())
        if found is not None:
            yield Decoded(found, m.span(), "base64")
    for m in _HEX.finditer(text):
        found = _hex(m.group())
        if found is not None:
            yield Decoded(found, m.span(), "hex")
    if text.count("%") >= 2:
        for m in _PERCENT.finditer(text):
            token = m.group()
            if len(re.findall(r"%[0-9A-Fa-f]{2}", token)) >= 2:
                plain = unquote_plus(token)
                if plain != token:
                    yield Decoded(plain, m.span(), "URL encoding")
    if "&" in text and len(_ENTITY.findall(text)) >= 3:
        for m in _ENTITY_RUN.finditer(text):
            plain = html.unescape(m.group())
            if plain != m.group():
                yield Decoded(plain, m.span(), "HTML character references")
        whole = html.unescape(text)
        if whole != text:
            yield Decoded(whole, (0, len(text)), "HTML character references")
    if _ROT13_HINT.search(text):
        yield Decoded(codecs.decode(text, "rot13"), (0, len(text)), "ROT13")
    if _REVERSED_HINT.search(text):
        yield Decoded(text[::-1], (0, len(text)), "reversed text")
