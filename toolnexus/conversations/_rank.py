"""Recall's one ranking: every message that holds any of a query's words, ranked together.

A message is scored with its neighbours, as a window: BM25 over the query's
groups (`_query`), where a group found in the message counts whole, one found
a turn away counts half, two turns away a quarter, three a tenth, so an answer
split across a question and its reply, or told over a few turns, ranks as one.
Rarer groups weigh more (the inverse document frequency); a longer window
weighs each match less (length normalisation, by characters). Then two signals
from outside the text: a speaker the query names (a chat file's `name`), and a
message said within a span of time the query names. Ties go to the newer.

The weights were chosen on one half of a public benchmark of long conversations
and judged on the other (`bench/bench_recall_quality.py`). Pure: the stores
answer the questions (`Talk.matching`, `Talk.lines`), this module decides.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..store._sessions import Found, Line, Match
from ._query import RecallQuery

__all__ = [
    "CANDIDATES",
    "MATCH_CAP",
    "WINDOW",
    "Ranked",
    "rank_history",
    "rank_messages",
    "snippet_of",
    "weights",
]

#: How much a group found at distance 0, 1, 2, 3 turns from a message counts for it.
WINDOW = (1.0, 0.5, 0.25, 0.1)
#: BM25's saturation (how fast repeats stop adding) and length normalisation.
K1 = 1.2
B = 0.5
#: A message by a speaker the query names, and one said in the span of time it names.
SPEAKER_BOOST = 1.2
WHEN_BOOST = 1.6
#: A phrase the person quoted weighs this much more than one word.
QUOTED_BOOST = 1.5
#: At most this many of the newest messages holding one group are scored: a word in
#: every other message would otherwise cost a score for each (seconds at a million).
MATCH_CAP = 300
#: The best this many by the text are looked at again with the speaker and the time.
CANDIDATES = 60
#: Windows are scored around this many messages, those whose own text scores best.
SEEDS = 60
#: Each turn of a window: its distance from the message, and how much it counts.
_OFFSETS = tuple(
    (sign * distance, w)
    for distance, w in enumerate(WINDOW)
    for sign in ((1,) if distance == 0 else (-1, 1))
)


@dataclass(frozen=True, slots=True)
class Ranked:
    """A message (`key`: session, seq) or a memory change (`change`) and its score."""

    score: float
    time: str
    key: tuple[str, int] | None = None
    change: Found | None = None


def _idf(count: int, total: int) -> float:
    """BM25's inverse document frequency, never below a trace (a word in every message
    still tells a little)."""
    return max(1e-3, math.log((total - count + 0.5) / (count + 0.5) + 1.0))


def _bm25(counts: Mapping[int, float], idf: Sequence[float], relative_length: float) -> float:
    """BM25 of a text holding each group g `counts[g]` times (weighted), whose length is
    `relative_length` times the mean."""
    norm = K1 * (1 - B + B * relative_length)
    return sum(idf[g] * c * (K1 + 1) / (c + norm) for g, c in counts.items())


def weights(query: RecallQuery, counts: Sequence[int], total: int) -> list[float]:
    """Each group's weight: its inverse document frequency among `total` texts (messages
    and memory changes alike, so a word weighs the same in both), a quoted phrase more."""
    total = max(total, 1)
    return [
        (QUOTED_BOOST if group.quoted else 1.0) * _idf(count, total)
        for group, count in zip(query.groups, counts, strict=True)
    ]


def rank_messages(
    query: RecallQuery,
    found: Sequence[tuple[int, Sequence[Match]]],
    *,
    idf: Sequence[float],
    mean_chars: float,
    lines: Callable[[Sequence[tuple[str, int]]], Mapping[tuple[str, int], Line]],
) -> list[Ranked]:
    """Rank the messages near any match; `found[g]` is group g's count and matches,
    `lines` fetches the messages the second look needs. Best first.

    Windows are scored around the `SEEDS` messages whose own text scores best (and the
    turns next to them): enough to keep every strong window, few enough that a home of
    a million messages ranks in milliseconds.
    """
    own: dict[tuple[str, int], list[int]] = {}  # a matched message: the groups it holds
    chars: dict[tuple[str, int], int] = {}
    alone: dict[tuple[str, int], float] = {}  # its own text's score, to pick the seeds
    for g, (_, matches) in enumerate(found):
        for m in matches:
            key = (m.session, m.seq)
            groups = own.get(key)
            if groups is None:
                own[key] = [g]
                chars[key] = m.chars
                alone[key] = idf[g]
            else:
                groups.append(g)
                alone[key] += idf[g]
    if not own:
        return []
    seeds = heapq.nlargest(SEEDS, alone, key=alone.__getitem__)
    candidates = {(s, q + d) for s, q in seeds for d in (-1, 0, 1) if q + d >= 1}
    mean = max(mean_chars, 1.0)
    mean_window = mean * sum(w for _, w in _OFFSETS)
    scored: list[tuple[float, tuple[str, int]]] = []
    get_own, get_chars = own.get, chars.get
    for session, seq in candidates:
        counts: dict[int, float] = {}
        length = 0.0
        for offset, w in _OFFSETS:
            at = (session, seq + offset)
            length += w * get_chars(at, mean)
            groups = get_own(at)
            if groups:
                for g in groups:
                    counts[g] = counts.get(g, 0.0) + w
        score = _bm25(counts, idf, length / mean_window)
        scored.append((score, (session, seq)))
    scored.sort(key=lambda s: s[0], reverse=True)
    top = scored[:CANDIDATES]
    shown = lines([key for _, key in top])
    named: dict[str, bool] = {}
    out = []
    for score, key in top:
        line = shown.get(key)
        if line is None or not line.text.strip():  # past the end, or nothing said (system)
            continue
        if line.name:
            if line.name not in named:
                pattern = r"(?<!\w)" + re.escape(line.name.casefold()) + r"(?!\w)"
                named[line.name] = re.search(pattern, query.text.casefold()) is not None
            if named[line.name]:
                score *= SPEAKER_BOOST
        if query.when is not None and query.when.holds(line.time):
            score *= WHEN_BOOST
        out.append(Ranked(score, line.time, key=key))
    out.sort(key=lambda r: (r.score, r.time), reverse=True)
    return out


def rank_history(
    query: RecallQuery, found: Sequence[tuple[int, Sequence[Found]]], *, idf: Sequence[float]
) -> list[Ranked]:
    """Rank memory changes by the same measure, each on its own text (no neighbours)."""
    counts: dict[int, dict[int, float]] = {}
    changes: dict[int, Found] = {}
    for g, (_, matches) in enumerate(found):
        for change in matches:
            changes[change.ref] = change
            counts.setdefault(change.ref, {})[g] = 1.0
    if not changes:
        return []
    mean = sum(len(c.text) for c in changes.values()) / len(changes)
    out = []
    for ref, groups in counts.items():
        change = changes[ref]
        score = _bm25(groups, idf, len(change.text) / max(mean, 1.0))
        if query.when is not None and query.when.holds(change.time):
            score *= WHEN_BOOST
        out.append(Ranked(score, change.time, change=change))
    out.sort(key=lambda r: (r.score, r.time), reverse=True)
    return out


_TOKEN = re.compile(r"\S+")
#: Words of context a snippet shows.
SNIPPET_WORDS = 32


def snippet_of(text: str, words: Sequence[str]) -> str:
    """The part of `text` (up to 32 words) that holds the most of the query's `words`,
    matched by their start (so `paint` finds `painted`); the whole text when short."""
    tokens = _TOKEN.findall(text)
    if len(tokens) <= SNIPPET_WORDS:
        return " ".join(tokens)
    stems = [w[: max(4, len(w) - 2)] for w in words if w]
    hit = [any(t.lower().strip("\"'.,;:!?()[]").startswith(s) for s in stems) for t in tokens]
    best, at = -1, 0
    window = sum(hit[:SNIPPET_WORDS])
    for start in range(0, len(tokens) - SNIPPET_WORDS + 1):
        if start:
            window += hit[start + SNIPPET_WORDS - 1] - hit[start - 1]
        if window > best:
            best, at = window, start
    shown = " ".join(tokens[at : at + SNIPPET_WORDS])
    return ("… " if at else "") + shown + (" …" if at + SNIPPET_WORDS < len(tokens) else "")
