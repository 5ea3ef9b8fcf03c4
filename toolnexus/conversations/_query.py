"""What a recall query asks for, read from the words a person or a model typed (pure).

A query is never search syntax. It becomes *groups* of words: each group is one
thing to find (a word, with the other forms of an irregular word, such as
`chose` for `choose`; a prefix `deploy*`; or a quoted phrase), and a message
matches a group when it holds any of its forms. Stop words and question words
("what", "did", "when") are not searched when the query has other words. A
date or time phrase ("on 8 May 2023", "in May", "2023-05-07", "last week",
"yesterday") becomes a span of time (`When`) that the ranking favours; its
words are still searched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

__all__ = ["MAX_GROUPS", "STOP_WORDS", "Group", "RecallQuery", "When", "parse_query", "when_of"]

#: At most this many groups are searched (the rest of a very long query is ignored).
MAX_GROUPS = 16

#: Words that tell little about what to find: function words, question words, and the
#: verbs and nouns every question leans on ("did", "kind", "thing").
STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during each
    either else ever few for from further get gets got had has have having he her here hers
    herself him himself his how however i if in into is it its itself just let lets like
    likely many may me might mine more most much must my myself no nor not now of off on
    once one only or other others our ours ourselves out over own per quite rather really
    same shall she should since so some something such than that the their theirs them
    themselves then there these they thing things this those though through thus to too
    under until up upon us very via was we were what whatever when whenever where whether
    which while who whom whose why will with within without would yet you your yours
    yourself yourselves kind sort way ones anything everything""".split()  # noqa: SIM905
)

#: Irregular forms that stemming does not join: a query for one finds the others.
_IRREGULAR = """arise arose arisen|awake awoke awoken|bear bore born borne|beat beaten|
become became|begin began begun|bend bent|bind bound|bite bit bitten|bleed bled|blow blew
blown|break broke broken|breed bred|bring brought|build built|burn burnt|buy bought|catch
caught|choose chose chosen|cling clung|come came|creep crept|deal dealt|dig dug|draw drew
drawn|dream dreamt|drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|feed
fed|feel felt|fight fought|find found|flee fled|fly flew flown|forbid forbade forbidden|forget
forgot forgotten|forgive forgave forgiven|freeze froze frozen|give gave given|go goes went
gone|grind ground|grow grew grown|hang hung|hear heard|hide hid hidden|hold held|keep
kept|kneel knelt|know knew known|lay laid|lead led|lean leant|leap leapt|learn learnt|leave
left|lend lent|lie lay lain|light lit|lose lost|make made|mean meant|meet met|pay paid|prove
proven|ride rode ridden|ring rang rung|rise rose risen|run ran|say said|see saw seen|seek
sought|sell sold|send sent|shake shook shaken|shine shone|shoot shot|show shown|shrink shrank
shrunk|sing sang sung|sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|speed
sped|spend spent|spin spun|spring sprang sprung|stand stood|steal stole stolen|stick
stuck|sting stung|stink stank stunk|strike struck|swear swore sworn|sweep swept|swim swam
swum|swing swung|take took taken|teach taught|tear tore torn|tell told|think thought|throw
threw thrown|understand understood|wake woke woken|wear wore worn|weep wept|win won|write
wrote written|child children|person people|man men|woman women|mouse mice|foot feet|tooth
teeth"""
_FORMS: dict[str, tuple[str, ...]] = {}
for _line in _IRREGULAR.replace("\n", " ").split("|"):
    _group = tuple(_line.split())
    for _form in _group:
        _FORMS[_form] = _group

_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
#: A word: letters and digits. U+FFFD (what a NUL or a broken character is saved as) joins
#: its neighbours, as the stores' own tokenizers keep them: they find it as one.
_WORD = re.compile(r"(?:[^\W_]|\ufffd)+")


@dataclass(frozen=True, slots=True)
class Group:
    """One thing to find: a message matches when it holds any of `forms` (each a word, a
    `prefix*`, or a phrase of words in order)."""

    forms: tuple[str, ...]
    #: A phrase the person quoted: honoured as one, weighed up.
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class When:
    """A span of time the query names: `[start, end)`, UTC, as ISO text; or, for a month
    named without a year ("in May"), that month of any year (`month`)."""

    start: str | None = None
    end: str | None = None
    month: int | None = None
    phrase: str = ""

    def holds(self, time: str) -> bool:
        """Whether a message at `time` (ISO 8601 text) falls in the span."""
        if self.month is not None:
            return len(time) >= 7 and time[5:7].isdigit() and int(time[5:7]) == self.month
        assert self.start is not None
        assert self.end is not None
        return self.start <= time < self.end


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """A query as recall searches it: the groups, the words of each (for snippets), and the
    span of time it names."""

    groups: tuple[Group, ...]
    words: tuple[str, ...]
    when: When | None
    text: str


def parse_query(text: str, *, now: datetime | None = None) -> RecallQuery:
    """Read `text` as recall does: groups to find, and a span of time (relative phrases are
    read against `now`, default the current time)."""
    groups: list[Group] = []
    common: list[Group] = []
    seen: set[tuple[str, ...]] = set()
    for m in _TOKEN.finditer(text.replace("\x00", "\ufffd")):
        if m.group(1) is not None:  # a quoted phrase
            words = [w.lower() for w in _WORD.findall(m.group(1))]
            if not words:
                continue
            if len(words) == 1:
                _add(groups, common, seen, words[0])
                continue
            phrase = " ".join(words)
            if (phrase,) not in seen:
                seen.add((phrase,))
                groups.append(Group((phrase,), quoted=True))
            continue
        chunk = m.group(2)
        prefix = chunk.endswith("*")
        words = [w.lower() for w in _WORD.findall(chunk)]
        for k, word in enumerate(words):
            last = k == len(words) - 1
            if prefix and last and len(word) >= 2:
                form = (word + "*",)
                if form not in seen:
                    seen.add(form)
                    groups.append(Group(form))
            else:
                _add(groups, common, seen, word)
    chosen = groups or common  # only stop words: search them rather than nothing
    chosen = chosen[:MAX_GROUPS]
    shown = tuple(dict.fromkeys(w.rstrip("*") for g in chosen for f in g.forms for w in f.split()))
    try:
        when = when_of(text, now=now)
    except (KeyError, ValueError, OverflowError):  # a phrase no calendar holds: no span
        when = None
    return RecallQuery(tuple(chosen), shown, when, text)


def _add(groups: list[Group], common: list[Group], seen: set[tuple[str, ...]], word: str) -> None:
    forms = _FORMS.get(word, (word,))
    if forms in seen:
        return
    seen.add(forms)
    if word in STOP_WORDS or (len(word) == 1 and not word.isdigit()):
        common.append(Group(forms))
    else:
        groups.append(Group(forms))


# -- time phrases -----------------------------------------------------------------------------

_MONTHS = {
    name: n
    for n, full in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
    for name in (full, full[:3], "sept" if full == "september" else full[:3])
}
_MON = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DATES = [
    re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b", re.I | re.A),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.I | re.A),
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<mon>\d\d)-(?P<day>\d\d)\b"),
    re.compile(rf"\b{_MON},?\s+{_YEAR}\b", re.I | re.A),
    # A month alone only after a word that makes it a time ("this may be" is no date).
    re.compile(rf"\b(?:in|during|since|until|last)\s+{_MON}\b", re.I | re.A),
    re.compile(r"\b(?:in|during|since)\s+(?P<year>(?:19|20)\d\d)\b", re.I | re.A),
]
_RELATIVE = {
    "today": (0, 1),
    "yesterday": (1, 1),
    "last week": (7, 7),
    "this week": (7, 8),
    "last month": (31, 31),
    "this month": (31, 32),
    "recently": (14, 15),
    "last year": (366, 366),
}
_RELATIVE_RE = re.compile(r"\b(" + "|".join(_RELATIVE) + r")\b", re.I | re.A)
_AGO = re.compile(
    r"\b(\d{1,3}|a|an|one|two|three|four|five|six)\s+(day|week|month)s?\s+ago\b", re.I | re.A
)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def when_of(text: str, *, now: datetime | None = None) -> When | None:
    """The span of time `text` names, if any (the first phrase found)."""
    for pattern in _DATES:
        m = pattern.search(text)
        if m is None:
            continue
        parts = m.groupdict()
        mon_text = parts.get("mon")
        month = None
        if mon_text is not None:
            month = int(mon_text) if mon_text.isdigit() else _MONTHS[mon_text.lower().rstrip(".")]
        year = int(parts["year"]) if parts.get("year") else None
        day = int(parts["day"]) if parts.get("day") else None
        try:
            if year is None and month is not None:
                return When(month=month, phrase=m.group(0))
            if year is not None and month is None:
                start = datetime(year, 1, 1, tzinfo=timezone.utc)
                end = datetime(year + 1, 1, 1, tzinfo=timezone.utc)
            elif day is None:
                assert year is not None
                assert month is not None
                start = datetime(year, month, 1, tzinfo=timezone.utc)
                end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
            else:
                assert year is not None
                assert month is not None
                # The day itself, and a day either side: "on the 8th" is often said late.
                start = datetime(year, month, day, tzinfo=timezone.utc) - timedelta(days=1)
                end = start + timedelta(days=3)
        except ValueError:  # 31 February: no date
            continue
        return When(_iso(start), _iso(end), phrase=m.group(0))
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    m = _RELATIVE_RE.search(text)
    if m is not None:
        back, length = _RELATIVE[m.group(1).lower()]
        midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        start = midnight - timedelta(days=back)
        return When(_iso(start), _iso(start + timedelta(days=length)), phrase=m.group(0))
    m = _AGO.search(text)
    if m is not None:
        count = _NUMBERS.get(m.group(1).lower()) or int(m.group(1))
        days = count * {"day": 1, "week": 7, "month": 30}[m.group(2).lower()]
        slack = max(1, days // 4)
        centre = moment - timedelta(days=days)
        return When(
            _iso(centre - timedelta(days=slack)),
            _iso(centre + timedelta(days=slack)),
            phrase=m.group(0),
        )
    return None
