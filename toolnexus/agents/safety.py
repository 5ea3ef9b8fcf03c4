"""Check text before it goes into a system prompt: no hidden characters, no injections.

Memory entries load into every future system prompt, where a model reads them
with the authority of its instructions. So text written there must be plain
data: nothing invisible, and no phrasing that tries to take over the model,
leak its prompt, send data elsewhere, or carry a credential.

`scan_text` is a pure function; the memory tool runs it before writing, and
composing a soul runs it on what is already on disk (files change behind the
tool's back).

The rules, in one place (`RULES` below, plus the character checks):

| rule                 | blocks                                                        |
|----------------------|---------------------------------------------------------------|
| invisible-character  | Unicode format characters (category Cf: zero-width space and  |
|                      | joiners, bidi marks, overrides and isolates, a BOM inside     |
|                      | text, tag characters), line/paragraph separators, lone        |
|                      | surrogates, variation selectors 17-256, Hangul fillers        |
| control-character    | C0 and C1 control characters other than newline and tab       |
| instruction-override | "ignore / disregard / forget ... previous instructions"       |
| role-hijack          | "you are now a ...", "act as ...", "pretend to be ..."        |
| prompt-leak          | "reveal / print / repeat ... the system prompt"               |
| exfiltration         | "send / post / curl ... to http(s)://...", image beacons      |
| secret               | API keys (sk-..., AKIA..., ghp_..., xox..-, AIza...), private |
|                      | key blocks, JWTs, `password: ...` style assignments           |

Phrase rules run on the NFKC form of the text, case-insensitively, so
full-width or styled letters do not slip past. They aim at instructions
addressed to a model, not at words: "user prefers to ignore lint warnings on
generated code", "the deploy script curls the health endpoint" and "user said:
act on alerts within 5 minutes" all pass.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["RULES", "Rule", "scan_text"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One pattern that makes text unsafe, with the reason a model is shown."""

    id: str
    why: str
    pattern: re.Pattern[str]


def _phrase(source: str) -> re.Pattern[str]:
    return re.compile(source, re.IGNORECASE)


# Words that address a model's instructions, shared by several rules.
_INSTRUCTIONS = r"(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|context)"
# An imperative at the start of the text, a sentence or a clause.
_CLAUSE_START = r"(?:^|[.!?;:\n]\s*|\b(?:then|and|also|please|now|always)\s+)"
_SEND = r"(?:send|post|upload|forward|exfiltrate|transmit|curl|wget|copy|leak|submit|e-?mail|pipe)"

RULES: tuple[Rule, ...] = (
    Rule(
        id="instruction-override",
        why="tells the model to drop its instructions",
        pattern=_phrase(
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:\w+\s+){0,3}?"
            r"(?:previous|prior|above|earlier|preceding|former|original|system|all|your)\s+"
            r"(?:\w+\s+){0,2}?" + _INSTRUCTIONS + r"\b"
            r"|\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+"
            r"(?:above|before|previously|you\s+(?:were|have\s+been)\s+told)\b"
        ),
    ),
    Rule(
        id="role-hijack",
        why="tries to give the model a new role",
        pattern=_phrase(
            r"\byou\s+are\s+now\s+(?:a|an|the|my|called|named|known\s+as|in\s+\w+\s+mode|"
            r"free|unrestricted|unfiltered|jailbroken|dan)\b"
            r"|\byou\s+are\s+no\s+longer\b"
            r"|" + _CLAUSE_START + r"(?:act|behave|respond|roleplay|role-play)\s+as\b"
            r"|\bpretend\s+(?:to\s+be|you\s+are|that\s+you)\b"
            r"|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b"
            r"|<\|?(?:im_start|im_end|system|endoftext)\|?>|</?system>"
        ),
    ),
    Rule(
        id="prompt-leak",
        why="asks the model to disclose its prompt",
        pattern=_phrase(
            r"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|display|recite|echo)\s+"
            r"(?:\w+\s+){0,3}?(?:system\s+prompt|(?:initial|hidden|original|secret|system)\s+"
            + _INSTRUCTIONS
            + r"|your\s+"
            + _INSTRUCTIONS
            + r")\b"
        ),
    ),
    Rule(
        id="exfiltration",
        why="tells the model to send data to an outside address",
        pattern=_phrase(
            _CLAUSE_START + _SEND + r"\b[^\n]{0,120}?\b(?:to|into)\s+<?https?://"
            r"|\b" + _SEND + r"\w*\b[^\n]{0,80}?\b(?:secrets?|credentials?|passwords?|"
            r"api[\s_-]?keys?|tokens?|conversations?|chat\s+history|memory|system\s+prompt|"
            r"env(?:ironment)?\s+variables|\.env|ssh\s+keys?)\b[^\n]{0,80}?https?://"
            r"|!\[[^\]]*\]\(\s*https?://[^)\s]*[?&][^)\s]*="
        ),
    ),
    Rule(
        id="secret",
        why="looks like a credential, which must never sit in a prompt",
        pattern=re.compile(
            r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{20,}"
            r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
            r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
            r"|\bgithub_pat_[A-Za-z0-9_]{22,}"
            r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"
            r"|\bAIza[0-9A-Za-z_-]{35}"
            r"|-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"
            r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
            r"|(?i:\b(?:password|passwd|api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token)"
            r"\s*[:=]\s*['\"]?[^\s'\"<>]{8,})"
        ),
    ),
)

# Characters that render as nothing, or re-order or break the text a reader sees.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cs", "Zl", "Zp"})
_INVISIBLE_EXTRA = frozenset("\u034f\u115f\u1160\u3164\uffa0")  # CGJ, Hangul fillers
_VS_SUPPLEMENT = range(0xE0100, 0xE01F0)  # variation selectors 17-256: data smuggling
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _char_name(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '(unnamed)')}"


def _char_reasons(text: str) -> list[str]:
    reasons: list[str] = []
    control = _CONTROL.search(text)
    if control is not None:
        reasons.append(
            f"control-character: {_char_name(control.group())} at position {control.start()} "
            "(only newline and tab are allowed)"
        )
    if text.isascii():
        return reasons
    bad = {
        ch
        for ch in set(text)
        if unicodedata.category(ch) in _INVISIBLE_CATEGORIES
        or ch in _INVISIBLE_EXTRA
        or ord(ch) in _VS_SUPPLEMENT
    }
    if bad:
        first = min(bad, key=text.index)
        reasons.append(
            f"invisible-character: {_char_name(first)} at position {text.index(first)} "
            "(invisible and bidirectional characters can hide or reorder text)"
        )
    return reasons


def _snippet(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def scan_text(text: str) -> tuple[str, ...]:
    """Return why `text` is unsafe to put into a system prompt (empty: it is safe).

    Each reason starts with its rule id (`"secret: ..."`), so callers can both
    show it and react to it. Fast: precompiled patterns, one pass per rule.
    """
    reasons = _char_reasons(text)
    folded = unicodedata.normalize("NFKC", text) if not text.isascii() else text
    for rule in RULES:
        match = rule.pattern.search(folded)
        if match is not None:
            found = match.group().strip(" \t\n.!?;:")
            if rule.id == "secret":
                found = found[:8] + "..."  # never echo a credential back in full
            reasons.append(f"{rule.id}: {rule.why} ({_snippet(found)!r})")
    return tuple(reasons)
