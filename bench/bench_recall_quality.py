"""Judge recall's ranking on real long conversations: LoCoMo, its questions asked word for word.

The data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational
Memory of LLM Agents", ACL 2024; github.com/snap-research/LoCoMo,
`data/locomo10.json`), licensed CC BY-NC 4.0 (bench/data/LICENSE-locomo.txt):
10 conversations between two people, 19-32 sessions and 369-689 turns each,
and 1,986 questions, each labelled with the turns (`D<session>:<turn>`) that
hold its answer. A gzipped copy is in bench/data/; pass `--data FILE` to use
another copy of the same file (or its JSON uncompressed).

Each conversation becomes a home: one saved conversation per session, imported
from a JSONL file of OpenAI chat-format messages as `toolnexus sessions HOME
import` takes them (the first speaker `user`, the second `assistant`, each
message with its speaker's `name` and a `timestamp`: the session's date and
time, a second per turn; a shared photo's caption follows the text as
`[image: …]`). Every question with at least one valid evidence id is asked
word for word (5 malformed ids are repaired, e.g. `D30:05`; 4 questions have
no evidence and are left out), and a question counts as found at k when one of
the first k hits is an evidence turn (`turn`), or when an evidence turn is in
one of their windows (`window`: the hit's message and the turns around it).

Three rankings side by side:
  plain bm25   SQLite FTS5 (porter unicode61) over the turns, the question's
               words OR-ed, ordered by bm25: the plainest query.
  previous     the ranking recall had before this benchmark: every word (minus
               a short stop list) first, any of them only when no message has
               them all.
  recall       `Conversations.recall`, as the tool and `toolnexus recall` run it.

The questions are split in two halves by conversation (a stable hash of the
conversation's id): `tune`, on which the ranking's weights were chosen, and
`held-out`, never looked at while tuning. Both are printed; only the held-out
half is a result.

Run: `python bench/bench_recall_quality.py [--data FILE] [--split tune|held-out|all]
[--by-category]`.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus.agents import Conversations  # noqa: E402

DATA = ROOT / "bench" / "data" / "locomo10.json.gz"
#: sha256 of the uncompressed file this benchmark was written against.
DATA_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
KS = (5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass
class Turn:
    dia: str
    speaker: str
    text: str


@dataclass
class Session:
    number: int
    when: datetime
    turns: list[Turn]


@dataclass
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass
class Conversation:
    id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question] = field(default_factory=list)

    @property
    def half(self) -> str:
        """`tune` or `held-out`: a stable hash of the id, never the data's order."""
        return "tune" if hashlib.sha256(self.id.encode()).digest()[0] % 2 == 0 else "held-out"


_WHEN = re.compile(r"(\d+):(\d+) (am|pm) on (\d+) (\w+), (\d{4})")
_DIA = re.compile(r"D:?(\d+):0*(\d+)")


def parse_when(text: str) -> datetime:
    """`1:56 pm on 8 May, 2023` as a UTC time."""
    m = _WHEN.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"unknown date format: {text!r}")
    hour, minute, half, day, month, year = m.groups()
    hour_24 = int(hour) % 12 + (12 if half == "pm" else 0)
    stamp = datetime.strptime(f"{day} {month} {year}", "%d %B %Y")
    return stamp.replace(hour=hour_24, minute=int(minute), tzinfo=timezone.utc)


def load(path: Path) -> list[Conversation]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if hashlib.sha256(raw).hexdigest() != DATA_SHA256:
        print(f"note: {path} is not the file this benchmark was written against", file=sys.stderr)
    conversations = []
    for sample in json.loads(raw):
        conv = sample["conversation"]
        sessions = []
        numbers = sorted(
            int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]
        )
        for n in numbers:
            turns = []
            for t in conv[f"session_{n}"]:
                text = t["text"]
                if t.get("blip_caption"):
                    text = f"{text} [image: {t['blip_caption']}]"
                turns.append(Turn(t["dia_id"], t["speaker"], text))
            sessions.append(Session(n, parse_when(conv[f"session_{n}_date_time"]), turns))
        c = Conversation(sample["sample_id"], (conv["speaker_a"], conv["speaker_b"]), sessions)
        known = {t.dia for s in sessions for t in s.turns}
        for qa in sample["qa"]:
            ids = set()
            for item in qa.get("evidence", []):
                for m in _DIA.finditer(item):
                    ids.add(f"D{int(m.group(1))}:{int(m.group(2))}")
            ids &= known
            if ids:
                c.questions.append(Question(qa["question"], frozenset(ids), int(qa["category"])))
        conversations.append(c)
    return conversations


# -- a conversation as a home ---------------------------------------------------------------


def chat_lines(c: Conversation, s: Session) -> list[dict[str, object]]:
    first = c.speakers[0]
    out: list[dict[str, object]] = []
    for k, t in enumerate(s.turns):
        when = s.when + timedelta(seconds=k)
        out.append(
            {
                "role": "user" if t.speaker == first else "assistant",
                "name": t.speaker,
                "content": t.text,
                "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
    return out


def make_home(base: Path, c: Conversation) -> tuple[Path, dict[tuple[str, int], str]]:
    """A home holding `c`, and each saved message's (session id, seq) to its turn id."""
    home = base / c.id
    (home / "chats").mkdir(parents=True)
    (home / "IDENTITY.md").write_text(
        "---\nname: Bench\n---\nA benchmark home.\n", encoding="utf-8"
    )
    paths = []
    for s in c.sessions:
        path = home / "chats" / f"session-{s.number:02d}.jsonl"
        lines = chat_lines(c, s)
        path.write_text("".join(json.dumps(m) + "\n" for m in lines), encoding="utf-8")
        paths.append(path)
    ids = Conversations(home).import_files(paths)
    turns: dict[tuple[str, int], str] = {}
    for (session, _), s in zip(ids, c.sessions, strict=True):
        for seq, t in enumerate(s.turns, start=1):
            turns[(session, seq)] = t.dia
    return home, turns


# -- the two baselines, on an index of their own ---------------------------------------------------

_WORDS = re.compile(r"\w+")
#: The stop list recall had before (what `previous` drops when the query has other words).
_OLD_STOP = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


class TurnIndex:
    """One conversation's turns in an in-memory FTS5 table (porter unicode61)."""

    def __init__(self, c: Conversation) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE t USING fts5(text, dia UNINDEXED, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        self.db.executemany(
            "INSERT INTO t (text, dia) VALUES (?, ?)",
            [(t.text, t.dia) for s in c.sessions for t in s.turns],
        )

    def ranked(self, query: str, limit: int) -> list[str]:
        if not query:
            return []
        rows = self.db.execute(
            "SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (query, limit)
        ).fetchall()
        return [str(r[0]) for r in rows]


def _quoted(words: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(f'"{w}"' for w in words))


def plain_bm25(index: TurnIndex, question: str, limit: int) -> list[Hit]:
    terms = _quoted(w.lower() for w in _WORDS.findall(question))
    return [([d], []) for d in index.ranked(" OR ".join(terms), limit)]


def previous(index: TurnIndex, question: str, limit: int) -> list[Hit]:
    words = [w.lower() for w in _WORDS.findall(question)]
    telling = [w for w in words if w not in _OLD_STOP and len(w) > 1] or words
    terms = _quoted(telling)
    found = index.ranked(" ".join(terms), limit) or index.ranked(" OR ".join(terms), limit)
    return [([d], []) for d in found]


# -- measuring -----------------------------------------------------------------------------


Hit = tuple[list[str], list[str]]
"""A hit as the turns it holds: those the ranking found (one, or neighbours merged into one
hit), and the turns around them that it shows."""
Ranker = Callable[[str, int], list[Hit]]
"""A ranking: the question and a limit to the hits, best first."""


def found_at(hits: Sequence[Hit], evidence: frozenset[str], k: int, window: bool) -> bool:
    for found, around in hits[:k]:
        if evidence.intersection(found) or (window and evidence.intersection(around)):
            return True
    return False


@dataclass
class Tally:
    asked: int = 0
    found: dict[tuple[int, bool], int] = field(default_factory=dict)

    def add(self, hits: Sequence[Hit], evidence: frozenset[str]) -> None:
        self.asked += 1
        for k in KS:
            for window in (False, True):
                if found_at(hits, evidence, k, window):
                    self.found[(k, window)] = self.found.get((k, window), 0) + 1

    def rate(self, k: int, window: bool = False) -> float:
        return self.found.get((k, window), 0) / self.asked if self.asked else 0.0


def unmerged_ranker(home: Path, turns: dict[tuple[str, int], str]) -> Ranker:
    """Recall's ranking of single messages, before neighbouring hits are merged: what the
    ranking alone is worth, one turn a hit."""
    from toolnexus.conversations._query import parse_query
    from toolnexus.conversations._rank import MATCH_CAP, rank_messages, weights

    talk = Conversations(home)._talk()
    assert talk is not None

    def rank(question: str, limit: int) -> list[Hit]:
        asked = parse_query(question)
        total, mean = talk.corpus()
        found = [talk.matching(g.forms, cap=MATCH_CAP) for g in asked.groups]
        idf = weights(asked, [count for count, _ in found], total)
        ranked = rank_messages(asked, found, idf=idf, mean_chars=mean, lines=talk.lines)
        return [([turns[r.key]], []) for r in ranked[:limit] if r.key in turns]

    return rank


def recall_ranker(home: Path, turns: dict[tuple[str, int], str], *, best_only: bool) -> Ranker:
    conversations = Conversations(home)

    def rank(question: str, limit: int) -> list[Hit]:
        out = []
        for hit in conversations.recall(question, limit=limit):
            if hit.session is None or hit.seq is None:
                continue
            # The hit's own turns first (neighbours merged into it are hits too), then
            # the turns around them.
            found = [turns.get((hit.session, hit.seq))] if best_only else []
            found += [
                turns.get((hit.session, t.seq)) for t in hit.window if t.hit and not best_only
            ]
            around = [turns.get((hit.session, t.seq)) for t in hit.window if not t.hit]
            out.append(([t for t in found if t], [t for t in around if t]))
        return out

    return rank


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", choices=["tune", "held-out", "all"], default="all")
    parser.add_argument("--by-category", action="store_true")
    args = parser.parse_args()
    conversations = load(args.data)
    halves = ["tune", "held-out"] if args.split == "all" else [args.split]
    names = ("plain bm25", "previous", "recall", "recall, unmerged")
    tallies = {(h, n): Tally() for h in halves for n in names}
    by_cat = {(h, n, c): Tally() for h in halves for n in names for c in CATEGORIES}
    base = Path(tempfile.mkdtemp(prefix="bench-recall-quality-"))
    try:
        for c in conversations:
            if c.half not in halves:
                continue
            index = TurnIndex(c)
            home, turns = make_home(base, c)
            rankers: dict[str, Ranker] = {
                "plain bm25": lambda q, n, index=index: plain_bm25(index, q, n),
                "previous": lambda q, n, index=index: previous(index, q, n),
                "recall": recall_ranker(home, turns, best_only=False),
                "recall, unmerged": unmerged_ranker(home, turns),
            }
            for q in c.questions:
                for name, rank in rankers.items():
                    hits = rank(q.text, max(KS))
                    tallies[(c.half, name)].add(hits, q.evidence)
                    by_cat[(c.half, name, q.category)].add(hits, q.evidence)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    for half in halves:
        asked = tallies[(half, "recall")].asked
        ids = sorted(c.id for c in conversations if c.half == half)
        print(f"{half}: {asked} questions from {', '.join(ids)}")
        print(f"  {'ranking':<17} {'turn@5':>7} {'turn@10':>8} {'window@5':>9} {'window@10':>10}")
        for name in names:
            t = tallies[(half, name)]
            print(
                f"  {name:<17} {t.rate(5):>7.3f} {t.rate(10):>8.3f} "
                f"{t.rate(5, True):>9.3f} {t.rate(10, True):>10.3f}"
            )
        if args.by_category:
            for cat, label in CATEGORIES.items():
                row = "  ".join(f"{name} {by_cat[(half, name, cat)].rate(5):.3f}" for name in names)
                print(f"    {label:<12} ({by_cat[(half, 'recall', cat)].asked:>3}) @5: {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
