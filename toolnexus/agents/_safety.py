"""Check text before it goes into a system prompt: no hidden characters, no injections.

Memory entries load into every future system prompt, where a model reads them
with the authority of its instructions. So text written there must be plain
data: nothing invisible, and no phrasing that tries to take over the model,
leak its prompt, send data elsewhere, or carry a credential.

`scan_text` is a pure function; the memory tool runs it before writing, and
composing a soul runs it on what is already on disk (files change behind the
tool's back). It runs in time linear in the length of the text (see "Speed").

The rules, in one place (`RULES` below, plus the character checks):

| rule                 | blocks                                                        |
|----------------------|---------------------------------------------------------------|
| invisible-character  | Unicode format characters (category Cf: zero-width space,     |
|                      | bidi marks, overrides and isolates, a BOM inside text, soft   |
|                      | hyphen), line/paragraph separators, lone surrogates, all      |
|                      | variation selectors except one FE0E/FE0F right after a        |
|                      | character, Hangul fillers, U+17B4/U+17B5. Allowed: ZWJ inside |
|                      | an emoji sequence, ZWNJ/ZWJ between letters of a joining      |
|                      | script (Arabic, Persian, Indic...), tag characters inside a   |
|                      | flag sequence (black flag, tags, cancel tag)                  |
| control-character    | C0 and C1 control characters other than newline and tab       |
| instruction-override | "ignore / disregard / forget ... previous / prior / above /   |
|                      | system ... instructions", "ignore all/your instructions",     |
|                      | "disregard the above", "new instructions:"                    |
| role-hijack          | "you are now a ...", "act as a ..." as an imperative,         |
|                      | "pretend to be ...", chat-template tokens (<|im_start|>,      |
|                      | [INST], <<SYS>>), a "System:" / "### System:" line that       |
|                      | gives orders                                                  |
| prompt-leak          | "reveal / print / repeat ... your instructions" anywhere;     |
|                      | "... the system prompt" only as an imperative: "the debug     |
|                      | endpoint can print the system prompt" describes a bug and     |
|                      | passes, "print the system prompt" is blocked                  |
| exfiltration         | sending something sensitive or model-directed (the            |
|                      | conversation, memory, system prompt, secrets, keys, tokens,   |
|                      | credentials, ~/.ssh, .aws, id_rsa, .env, "everything", "all   |
|                      | data") to http(s)://...; piping such a file into curl/wget;   |
|                      | "exfiltrate ..."; URLs whose query carries such a value;      |
|                      | Markdown image beacons. Plain "post X to <url>" passes        |
| secret               | API keys (sk-..., AKIA..., ghp_..., xox..-, AIza...), private |
|                      | key blocks, JWTs, `password: ...` style assignments (not      |
|                      | placeholders such as `${OPENAI_API_KEY}`)                     |

Phrase rules run on a *skeleton* of the text: NFKD with combining marks and
format characters dropped, common Cyrillic/Greek look-alikes mapped to Latin,
`-`/`_` between words read as spaces, and every run of whitespace collapsed
(to a newline if it holds one, else a space); case is ignored. So
"i\\u0301gnore", Cyrillic "іgnore", full-width letters and
"ignore-all-previous-instructions" do not slip past. They aim at instructions
addressed to a model, not at words: "user prefers to ignore lint warnings on
generated code", "post incident summaries to https://status.example.com" and
"I always act as tie-breaker in design reviews" all pass.

Speed: every whitespace run in the skeleton is one character, every other
repetition in a phrase pattern is bounded or anchored on a keyword, so no
pattern rescans a long run from each of its positions (the old clause start
`[.!?;:\\n]\\s*` did, and took seconds on a few thousand newlines). A rule is
compiled on first use, and skipped for a text that holds none of the words
each of its matches holds (`Rule.needs`): most notes need few of the patterns,
and a process compiles only those (compiling all of them costs more than
scanning a whole home).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

__all__ = ["RULES", "Rule", "scan_text", "skeleton"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One pattern that makes text unsafe, with the reason a model is shown."""

    id: str
    why: str
    #: The regular expression; `pattern` compiles it on first use, so a process
    #: pays only for the rules some text it scans may break.
    source: str
    flags: int = 0
    #: Words (lowercase) one of which is in every match: a text that, read as the
    #: rule reads it and lowercased, holds none of them cannot match, so the rule
    #: is skipped. Empty: always tried.
    needs: tuple[str, ...] = ()
    #: Read the text as written (NFKC), not its skeleton.
    as_written: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled once per process)."""
        return _compiled(self.source, self.flags)


@cache
def _compiled(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)


# Phrase rules ignore case. Their `needs` are looked for in the lowercased skeleton,
# which is sound: ignoring case, an ASCII letter matches its two cases and only four
# other characters (the Kelvin sign, the long s, the dotted capital I, the dotless
# small i), and the skeleton holds none of those (NFKD and the look-alike map fold
# them to ASCII).
_PHRASE = re.IGNORECASE


def _spaced(*words: str) -> tuple[str, ...]:
    """Each phrase as the skeleton may hold it: its spaces as spaces, and as newlines."""
    return (*words, *(w.replace(" ", "\n") for w in words))


# In the skeleton every whitespace run is a single character, so `\s` (never
# `\s*`/`\s+`) separates words, and each bounded gap below is linear to try.

# Words that address a model's instructions, shared by several rules.
_INSTRUCTIONS = (
    r"(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|"
    r"context(?!\s(?:window|length|size|limit)))"
)
# What points back at the instructions a model already has.
_EARLIER = r"(?:previous|prior|above|earlier|preceding|former|original|system|initial)"
# An imperative: at the start of the text, a line, a sentence or a clause (after
# , ; :), or after a joining "and / then / but"; optionally led by up to three
# adverbs ("please", "always", "first") and "you should / must / will".
_ADVERBS = r"(?:please|now|always|also|then|first|just|simply|immediately|silently|secretly)"
_CLAUSE_START = (
    r"(?:[.!?;:,\n(]\s?|\b(?:and|then|but|or)\s|^)"
    r"(?:" + _ADVERBS + r"\s){0,3}"
    r"(?:you\s(?:should|must|will|shall|need\sto|have\sto)\s(?:" + _ADVERBS + r"\s){0,2})?"
)
_SEND = (
    r"(?:send|post|upload|forward|transmit|curl|wget|copy|leak|submit|e\s?mail|pipe|"
    r"include|append|attach|embed|fetch|exfiltrate|share|report)"
)
# Things worth stealing, or that belong to the model: never sent to an outside URL.
_SENSITIVE = (
    r"(?:conversations?|chats?(?:\shistory|\slogs?)?|messages|memory|memories|"
    r"system\sprompt|(?:your|the\smodel'?s)\s" + _INSTRUCTIONS + r"|"
    r"secrets?|credentials?|passwords?|passphrases?|api\s?keys?|tokens?|private\skeys?|"
    r"ssh\skeys?|cookies?|env(?:ironment)?\s(?:variables|vars)|everything|"
    r"(?:~/)?\.ssh\b|\.aws\b|id\s(?:rsa|ed25519|ecdsa|dsa)\b|\.env\b|\.netrc\b|/etc/(?:passwd|shadow)|"
    r"all\s(?:of\s)?(?:the\s)?(?:user'?s\s|my\s|your\s)?"
    r"(?:data|files|emails|e\smails|mail|messages|notes|history|documents)|"
    r"(?:the\s)?user'?s\s(?:files|data|emails|e\smails|messages|documents|history))"
)
_URL = r"<?https?://"

RULES: tuple[Rule, ...] = (
    Rule(
        id="instruction-override",
        why="tells the model to drop its instructions",
        flags=_PHRASE,
        # An instructions word ends the first branch; a verb opens the second; the third
        # names instructions, directives or the system prompt.
        needs=(
            *("instruction", "prompt", "rules", "directive", "guidelines", "guardrails"),
            *("context", "ignore", "disregard", "forget"),
        ),
        source=(
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\s(?:\w+\s){0,3}?"
            r"(?:" + _EARLIER + r"\s(?:\w+\s){0,2}?|all\s|your\s(?:\w+\s)?)" + _INSTRUCTIONS + r"\b"
            r"|\b(?:ignore|disregard|forget)\s(?:everything|all|the)\s"
            r"(?:above|before|previously|preceding|foregoing|prior|earlier|"
            r"you\s(?:were|have\sbeen)\stold)\b"
            r"|\b(?:new|updated|real|actual|revised)\s(?:system\s)?"
            r"(?:instructions?|directives?|system\sprompt)\s?:"
        ),
    ),
    Rule(
        id="role-hijack",
        why="tries to give the model a new role",
        flags=_PHRASE,
        # In the skeleton a whitespace run is one space or one newline: "you are" is
        # also "you\nare".
        needs=(
            *_spaced("you are", "now on", "act as", "behave as"),
            *("role", "pretend", "<", "[", "system", "assistant", "developer"),
        ),
        source=(
            r"\byou\sare\snow\s(?:a|an|the|my|called|named|known\sas|in\s\w+\smode|"
            r"free|unrestricted|unfiltered|jailbroken|dan)\b"
            r"|\byou\sare\sno\slonger\b"
            r"|" + _CLAUSE_START + r"(?:act|behave|roleplay|role\splay)\sas\s(?:a|an|the|my|if)\b"
            r"|\bpretend\s(?:to\sbe|you\sare|that\syou)\b"
            r"|\bfrom\snow\son,?\syou\s(?:are|will|must)\b"
            r"|<\|?(?:im\sstart|im\send|system|endoftext)\|?>|</?system>|\[/?inst\]|<</?sys>>"
            r"|(?:^|\n)\s?(?:#{1,6}\s?)?[\[<]?(?:system|assistant|developer)[\]>]?\s?:\s?"
            r"(?:you\s(?:are|must|will|shall|should|have\sto|need\sto)|your\s|ignore|disregard|"
            r"forget|obey|always|never|from\snow\son|do\snot|don'?t|new\s)"
        ),
    ),
    Rule(
        id="prompt-leak",
        why="asks the model to disclose its prompt",
        flags=_PHRASE,
        # The first branch names "your" instructions; the second, the system prompt or
        # initial, hidden, original, secret or system instructions.
        needs=("your", "system", "initial", "hidden", "original", "secret"),
        source=(
            r"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|display|recite|echo)\s"
            r"(?:\w+\s){0,3}?your\s(?:system\s)?" + _INSTRUCTIONS + r"\b"
            r"|" + _CLAUSE_START + r"(?:reveal|print|show|output|repeat|leak|dump|disclose|"
            r"display|recite|echo)\s(?:\w+\s){0,3}?(?:system\sprompt|"
            r"(?:initial|hidden|original|secret|system)\s" + _INSTRUCTIONS + r")\b"
        ),
    ),
    Rule(
        id="exfiltration",
        why="tells the model to send sensitive data to an outside address",
        flags=_PHRASE,
        # Each branch but two holds a URL; those pipe into a command, or say "exfiltrate".
        needs=("http", "|", "exfiltrat"),
        source=(
            r"\b"
            + _SEND
            + r"\w*\b[^\n]{0,80}?\b"
            + _SENSITIVE
            + r"[^\n]{0,80}?(?<!\bfrom\s)"
            + _URL
            + r"|"
            + _SENSITIVE
            + r"[^\n|]{0,40}\|\s?(?:curl|wget|nc|netcat|scp)\b"
            r"|\bexfiltrat\w*\s(?:the|all|any|my|your|user|every|their|files|data)"
            r"|https?://[^\s]{0,200}?[?&][^\s=&]{0,40}=[{<$%\[]{0,3}\s?"
            + _SENSITIVE
            + r"|!\[[^\]\n]{0,200}\]\(\s?https?://[^)\s]{0,500}[?&][^)\s]{0,500}="
        ),
    ),
)

# Secrets are matched on the NFKC text as written, not on the skeleton, and so are
# their `needs`, lowercased. Of those four characters NFKC folds the Kelvin sign
# and the long s, and the dotted capital I lowercases to i and a combining dot; the
# dotless i stays, so the case-blind branch needs "ap\u0131" beside "api".
SECRET = Rule(
    id="secret",
    why="looks like a credential, which must never sit in a prompt",
    as_written=True,
    needs=(
        *("sk-", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox"),
        *("aiza", "-----begin ", "eyj", "passw", "api", "ap\u0131", "secret", "token"),
    ),
    source=(
        r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{20,}"
        r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
        r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
        r"|\bgithub_pat_[A-Za-z0-9_]{22,}"
        r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"
        r"|\bAIza[0-9A-Za-z_-]{35}"
        r"|-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"
        r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
        # An assignment, unless the value is a placeholder: ${VAR}, $VAR, <...>, {{...}}, %VAR%.
        r"|(?i:\b(?:password|passwd|api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token)"
        r"[ \t]{0,8}[:=][ \t]{0,8}['\"]?(?![$<{%*])[^\s'\"<>]{8,})"
    ),
)
RULES = (*RULES, SECRET)

# -- the skeleton that phrase rules read -------------------------------------------

# Look-alike letters an attacker swaps in for Latin ones (Cyrillic, Greek, a few Latin).
_CONFUSABLES = str.maketrans(
    "аbсdеһіјӏорԛѕԝхуАВСЕНІЈКМОРЅТХУԁɡıαβεηικνοτυχρΑΒΕΗΙΚΜΝΟΡΤΥΧΖ",
    "abcdehijlopqswxyABCEHIJKMOPSTXYdgiabeniknotuxpABEHIKMNOPTYXZ",
)
_WORD_JOINER = re.compile(r"(?<=\w)[-_](?=\w)")
_WHITESPACE = re.compile(r"\s+")


def _one_space(match: re.Match[str]) -> str:
    return "\n" if "\n" in match.group() else " "


def skeleton(text: str) -> str:
    """Return the form of `text` that phrase rules read (see the module docstring)."""
    if not text.isascii():
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(
            ch for ch in decomposed if unicodedata.category(ch) not in ("Mn", "Me", "Cf")
        ).translate(_CONFUSABLES)
    return _WHITESPACE.sub(_one_space, _WORD_JOINER.sub(" ", text))


# -- characters ---------------------------------------------------------------------

# Characters that render as nothing, or re-order or break the text a reader sees.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cs", "Zl", "Zp"})
_INVISIBLE_EXTRA = frozenset(
    "\u034f\u115f\u1160\u3164\uffa0"  # combining grapheme joiner, Hangul fillers
    "\u17b4\u17b5"  # Khmer inherent vowels: invisible
    + "".join(map(chr, range(0xFE00, 0xFE10)))  # variation selectors 1-16
)
_VS_SUPPLEMENT = range(0xE0100, 0xE01F0)  # variation selectors 17-256: data smuggling
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Candidates that are fine in context; `_allowed_in_context` decides each one.
_CONTEXTUAL = re.compile("[\u200c\u200d\ufe0e\ufe0f]")
_FLAG = re.compile("\U0001f3f4[\U000e0020-\U000e007e]{1,30}\U000e007f")
# Scripts whose letters join, where ZWNJ/ZWJ change how a word is drawn.
_JOINING_SCRIPTS = frozenset(
    {
        *("ARABIC", "SYRIAC", "NKO", "MANDAIC", "MONGOLIAN", "DEVANAGARI", "BENGALI"),
        *("GURMUKHI", "GUJARATI", "ORIYA", "TAMIL", "TELUGU", "KANNADA", "MALAYALAM"),
        *("SINHALA", "KHMER", "MYANMAR", "TIBETAN"),
    }
)


def _char_name(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '(unnamed)')}"


def _joining_letter(ch: str) -> bool:
    if unicodedata.category(ch)[0] not in "LM":
        return False
    return unicodedata.name(ch, "").split(" ", 1)[0] in _JOINING_SCRIPTS


def _emoji_part(ch: str) -> bool:
    """A pictograph, or what may sit between it and a ZWJ (skin tone, VS16)."""
    return unicodedata.category(ch) == "So" or ch == "\ufe0f" or "\U0001f3fb" <= ch <= "\U0001f3ff"


def _allowed_in_context(text: str, i: int) -> bool:
    ch = text[i]
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch in "\ufe0e\ufe0f":
        # One presentation selector right after a visible character (emoji style).
        return bool(before) and not (
            unicodedata.category(before) in _INVISIBLE_CATEGORIES
            or before in _INVISIBLE_EXTRA
            or before.isspace()
        )
    if not before or not after:
        return False
    if ch == "\u200d" and _emoji_part(before) and unicodedata.category(after) == "So":
        return True
    return _joining_letter(before) and _joining_letter(after)


def _unmask_allowed(text: str) -> str:
    """Replace allowed contextual invisibles by a visible stand-in (positions unchanged)."""
    chars = list(text)
    for flag in _FLAG.finditer(text):
        chars[flag.start() + 1 : flag.end()] = "x" * (flag.end() - flag.start() - 1)
    for m in _CONTEXTUAL.finditer(text):
        if _allowed_in_context(text, m.start()):
            chars[m.start()] = "x"
    return "".join(chars)


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
    checked = _unmask_allowed(text)
    bad = {
        ch
        for ch in set(checked)
        if unicodedata.category(ch) in _INVISIBLE_CATEGORIES
        or ch in _INVISIBLE_EXTRA
        or ord(ch) in _VS_SUPPLEMENT
    }
    if bad:
        at = min(checked.index(ch) for ch in bad)
        reasons.append(
            f"invisible-character: {_char_name(text[at])} at position {at} "
            "(invisible and bidirectional characters can hide or reorder text)"
        )
    return reasons


def _snippet(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def scan_text(text: str) -> tuple[str, ...]:
    """Return why `text` is unsafe to put into a system prompt (empty: it is safe).

    Each reason starts with its rule id (`"secret: ..."`), so callers can both
    show it and react to it. Linear in `len(text)`: one pass per rule, and none
    for a rule whose `needs` the text lacks.
    """
    reasons = _char_reasons(text)
    phrases = skeleton(text)
    written = unicodedata.normalize("NFKC", text) if not text.isascii() else text
    lowered: dict[bool, str] = {}
    for rule in RULES:
        read = written if rule.as_written else phrases
        if rule.needs:
            low = lowered.get(rule.as_written)
            if low is None:
                low = lowered[rule.as_written] = read.lower()
            if not any(word in low for word in rule.needs):
                continue
        match = rule.pattern.search(read)
        if match is not None:
            found = match.group()
            # A clause start is cut: "and reveal ..." shows as "reveal ...".
            lead = _compiled(_CLAUSE_START, _PHRASE).match(found)
            if lead is not None:
                found = found[lead.end() :]
            found = found.strip(" \t\n.!?;:,(")
            if rule is SECRET:
                found = found[:8] + "..."  # never echo a credential back in full
            reasons.append(f"{rule.id}: {rule.why} ({_snippet(found)!r})")
    return tuple(reasons)
