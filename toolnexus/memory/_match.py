"""Which entry a change means, and how results quote entries back (pure functions).

`match` picks the one note a replace / remove means (a whole-text match wins,
else a unique substring; a miss or several notes is a loud error), `restate`
is SPEC §3's replace rule, and `shown` quotes an entry only when the soul
would show it: a result never hands the model text the scanner withholds.
"""

from __future__ import annotations

import json

from ..errors import MemoryEditError
from ..scanner._scanner import DEFAULT, Scanner
from ._document import MemoryDocument, nfc, note_forms

__all__ = ["NOTHING", "clip", "match", "quote", "restate", "shown"]

#: The end of every refusal: nothing reached the disk.
NOTHING = "Nothing written."


def clip(text: str, limit: int = 200) -> str:
    """The model's text as an error quotes it: whole up to `limit` characters, else cut with `…`."""
    return text if len(text) <= limit else text[:limit] + "\u2026"


def quote(text: str, limit: int = 200) -> str:
    """Show text to a model unambiguously (JSON string), shortened when long."""
    return json.dumps(clip(text, limit), ensure_ascii=False)


def shown(entry: str, limit: int = 200, scanner: Scanner = DEFAULT) -> str:
    """An existing entry as a result may quote it: never text the soul withholds.

    An entry that fails the safety check is withheld from every system prompt;
    quoting it back in a tool result would hand it to the model anyway. Both the
    built-in scanner and the home's (with your classifier) decide, whatever a home
    switches off: never quote too much.
    """
    reasons = DEFAULT.reasons(entry) or scanner.reasons(entry)
    if reasons:
        rules = ", ".join(dict.fromkeys(r.split(":", 1)[0] for r in reasons))
        return f"(an entry withheld from the soul: it breaks a safety rule: {rules})"
    return quote(entry, limit)


def restate(entry: str, query: str, with_: str) -> str:
    """The entry after `query` in it is replaced by `with_` (SPEC §3's rule).

    Keep the text before and after the match around `with_`, except what `with_`
    already restates: the text before is dropped when `with_` begins with it, the
    text after when `with_` ends with it. When the match starts the entry and
    `with_` begins with the matched text, or the match is the whole entry,
    `with_` is the whole new entry.
    """
    if nfc(entry) in (nfc(query), nfc(query.strip())):
        return with_
    at = entry.find(query)
    if at < 0:  # matched only in NFC: edit the NFC form of the entry
        entry, query = nfc(entry), nfc(query)
        at = entry.find(query)
    before, after = entry[:at], entry[at + len(query) :]
    if at == 0 and with_.startswith(query):
        return with_
    if before and with_.startswith(before):
        before = ""
    if after and with_.endswith(after):
        after = ""
    return before + with_ + after


def match(
    doc: MemoryDocument, text: str, query: str, scanner: Scanner = DEFAULT
) -> tuple[str, int]:
    """Pick the note `query` means and count its identical copies in the file.

    A whole-text match wins, else a unique substring. Text is compared in NFC;
    the entry is returned as stored (its first copy).
    """
    old: str | None = None
    for whole in (query, query.strip()):
        old = doc.note(whole)
        if old is not None:
            break
    else:
        needle = nfc(query)
        hits = [e for key, e in note_forms(doc).items() if needle in key]
        if not hits:
            raise MemoryEditError(f"not found: {clip(text)}", kind="not_found")
        if len(hits) > 1:
            listed = "; ".join(shown(e, 80, scanner) for e in hits[:5])
            more = f"; and {len(hits) - 5} more" if len(hits) > 5 else ""
            raise MemoryEditError(
                f"ambiguous: {len(hits)} entries match {quote(text)}: {listed}{more}. Quote "
                f"more of the entry you mean (its whole text always works). {NOTHING}",
                kind="ambiguous",
            )
        old = hits[0]
    return old, doc.copies(old)
