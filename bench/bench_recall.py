"""Benchmark saved-conversation import and recall against a linear scan, from 10k messages up.

Targets (the issue): import ≥ 100,000 messages at ≥ 20,000 messages/s; a warm recall
query over them ≥ 50x faster than a linear scan in Python of the same JSONL files;
report database bytes per message and how query time grows from 10k to 1M messages.

What it does, with a seeded `random` so every run builds the same corpus:

1. Corpus: conversations of 10-60 messages in the OpenAI chat format (an optional
   system message, user / assistant turns, some assistant messages making tool
   calls answered by tool messages), their sentences drawn from a vocabulary of
   4,000 words with Zipf frequencies (plus identifiers, paths and numbers), one
   conversation per JSONL file. One message, in the middle of the first size,
   says "the staging cluster codename is quokkaberry": nothing else does.
2. Import: the files are imported into one fresh home (`IDENTITY.md` only) with
   `Conversations(home).import_files(paths)`, which is what
   `toolnexus sessions HOME import FILE...` does. The home grows size by size
   (10k, then 100k, then 1M messages when `--max 1000000`); each step's messages/s
   is printed, and the rate from empty to 100k is held against the target.
   Database bytes per message: state.db plus its -wal after a
   `PRAGMA wal_checkpoint(TRUNCATE)`, with the share of each table and index.
3. Recall at each size: the median of `--repeat` warm `Conversations.recall`
   calls (one untimed call first) for a few queries: the planted fact's words, a
   common word, a rare word, a prefix (`quokka*`) and a question whose words are
   not all in one message (so recall falls back to any of them). The baseline is
   a linear scan in Python of the same JSONL files, read again for every query
   (the page cache is warm): `json.loads` of each line, then a case-insensitive
   substring test of the query's words on the content and the tool-call
   arguments (all of them, else any, as recall does); the median of
   `--scan-repeat` runs. The planted fact must be in recall's first three hits.
4. Growth: each query's median per size and the ratio per 10x more messages
   (1.0 means the time does not grow; 10.0 means linear).

Run: `python bench/bench_recall.py [--max 1000000] [--repeat N] [--scan-repeat N]
[--dir FOLDER] [--profile] [--quick]`. The default (10k and 100k messages) takes
about a minute on two cores; `--max 1000000` adds the 1M row (about ten minutes in
all, ~2 GB of disk); `--quick` stops at 10k. `--profile` also imports the first
size into a scratch home under cProfile and prints where the time goes. FOLDER
decides which file system is measured; the default is the system's temp dir.
Everything written is removed at the end. The exit status is 1 when a target is
missed (each miss is named on the last line).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import itertools
import json
import os
import platform
import pstats
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus.conversations import Conversations, Hit  # noqa: E402
from toolnexus.conversations._query import parse_query  # noqa: E402
from toolnexus.store.folder._search import fts_query  # noqa: E402

T = TypeVar("T")

SIZES = (10_000, 100_000, 1_000_000)
IMPORT_TARGET = 20_000  # messages/s, importing 100,000 messages into a fresh home
IMPORT_TARGET_SIZE = 100_000
SPEEDUP_TARGET = 50.0  # warm recall vs a linear scan of the JSONL files
TOP_N = 3  # the planted fact must be among the first TOP_N hits

IDENTITY = "---\nname: Bench\n---\nYou are Bench.\n"
FACT = "the staging cluster codename is quokkaberry"
VOCABULARY_SIZE = 4_000
#: The most frequent words first: English function words, then the words of the trade.
HEAD_WORDS = (  # split into words by Corpus._vocabulary
    "the to and a of in is it that for we you this on with error be not are can "
    "deploy file test config server if i as at should run from check but so log "
    "there will an by was all have what build service now then which request "
    "change need also version when user one just let here data do or fix see "
    "update use time only more new branch command like value node output path "
    "cluster job memory disk network timeout retry queue release staging database "
    "token model cache query table index schema migration image container pod "
    "namespace secret volume port host proxy route handler client worker thread "
    "process signal socket buffer stream packet latency throughput metric alert "
    "dashboard trace span event message payload header body status code response "
    "failure warning debug info trigger pipeline artifact registry package module "
    "function method class object field record row column key lock transaction "
    "commit merge rebase tag review patch diff line character string number list "
    "map set array"
)
#: Never drawn from the vocabulary: only the planted message has them.
RESERVED = {"quokkaberry", "codename"}
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
TOOLS = ("read_file", "run_shell", "search_code", "http_get")


@dataclass(frozen=True)
class Query:
    label: str
    text: str
    finds_fact: bool = False


def make_queries(vocabulary: Sequence[str]) -> list[Query]:
    return [
        Query("fact", "staging cluster codename", finds_fact=True),
        Query("common", "error"),
        Query("rare", vocabulary[int(VOCABULARY_SIZE * 0.9)]),
        Query("prefix", "quokka*", finds_fact=True),
        Query("question", "what is the staging cluster codename", finds_fact=True),
    ]


# --- corpus -------------------------------------------------------------------


class Corpus:
    """A deterministic stream of conversations, written as JSONL files on demand."""

    def __init__(self, folder: Path, seed: int, plant_at: int) -> None:
        self.folder = folder
        self.rng = random.Random(seed)
        self.vocabulary = self._vocabulary()
        self.cum_weights = list(
            itertools.accumulate(1.0 / (rank + 1) for rank in range(len(self.vocabulary)))
        )
        self.plant_at = plant_at
        self.planted: tuple[Path, int] | None = None
        self.files: list[Path] = []
        self.messages = 0
        self.bytes = 0
        self.calls = 0

    def _vocabulary(self) -> list[str]:
        words = list(dict.fromkeys(HEAD_WORDS.split()))
        seen = set(words) | RESERVED
        while len(words) < VOCABULARY_SIZE:
            word = "".join(self.rng.choices(SYLLABLES, k=self.rng.choice((2, 2, 3, 3, 4))))
            if word not in seen:
                seen.add(word)
                words.append(word)
        return words

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocabulary, cum_weights=self.cum_weights, k=n)

    def identifier(self) -> str:
        rng = self.rng
        kind = rng.randrange(4)
        if kind == 0:
            return f"{rng.choice(('pod', 'job', 'req', 'build'))}-{rng.randrange(100_000)}"
        if kind == 1:
            a, b = self.words(2)
            return f"src/{a}/{b}.py:{rng.randrange(1, 900)}"
        if kind == 2:
            return f"v{rng.randrange(1, 5)}.{rng.randrange(20)}.{rng.randrange(40)}"
        return str(rng.randrange(10_000_000))

    def sentence(self) -> str:
        words = self.words(self.rng.randint(5, 18))
        if self.rng.random() < 0.25:
            words.insert(self.rng.randrange(len(words)), self.identifier())
        return " ".join(words).capitalize() + self.rng.choice((".", ".", ".", "?", "!", ":"))

    def text(self, low: int, high: int) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(low, high)))

    def tool_output(self) -> str:
        lines = []
        for _ in range(self.rng.randint(3, 24)):
            if self.rng.random() < 0.4:
                level = self.rng.choice(("INFO", "WARN", "ERROR", "DEBUG"))
                lines.append(f"{level} {self.identifier()} {' '.join(self.words(8))}")
            else:
                lines.append(self.sentence())
        return "\n".join(lines)

    def tool_call(self) -> dict[str, Any]:
        self.calls += 1
        name = self.rng.choice(TOOLS)
        if name == "read_file":
            a, b = self.words(2)
            arguments: dict[str, Any] = {"path": f"src/{a}/{b}.py"}
        elif name == "run_shell":
            arguments = {"command": "kubectl get " + " ".join(self.words(3))}
        elif name == "search_code":
            arguments = {"query": " ".join(self.words(4)), "limit": 20}
        else:
            arguments = {"url": f"https://{self.words(1)[0]}.internal/{self.identifier()}"}
        return {
            "id": f"call_{self.calls:08d}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }

    def conversation(self, length: int) -> list[dict[str, Any]]:
        rng = self.rng
        out: list[dict[str, Any]] = []
        if rng.random() < 0.2:
            out.append({"role": "system", "content": "You are a careful " + self.sentence()})
        out.append({"role": "user", "content": self.text(1, 4)})
        while len(out) < length:
            if rng.random() < 0.35:
                calls = [self.tool_call() for _ in range(rng.choice((1, 1, 1, 2)))]
                content = self.text(1, 1) if rng.random() < 0.5 else None
                out.append({"role": "assistant", "content": content, "tool_calls": calls})
                for call in calls:
                    out.append(
                        {"role": "tool", "tool_call_id": call["id"], "content": self.tool_output()}
                    )
            else:
                out.append({"role": "assistant", "content": self.text(1, 8)})
                out.append({"role": "user", "content": self.text(1, 4)})
        return out[:length]

    def grow(self, total: int) -> list[Path]:
        """Write conversations until the corpus holds `total` messages; the new files."""
        new = []
        while self.messages < total:
            length = min(self.rng.randint(10, 60), total - self.messages)
            messages = self.conversation(length)
            start = self.messages
            if self.planted is None and start + len(messages) > self.plant_at:
                users = [k for k, m in enumerate(messages) if m["role"] == "user"]
                k = min(users, key=lambda k: abs(start + k - self.plant_at))
                messages[k]["content"] += f" By the way, {FACT}, so use that name."
                self.planted = (self.folder / f"c{len(self.files):06d}.jsonl", k + 1)
            path = self.folder / f"c{len(self.files):06d}.jsonl"
            data = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
            path.write_text(data, encoding="utf-8")
            self.files.append(path)
            new.append(path)
            self.messages += len(messages)
            self.bytes += len(data.encode())
        return new


# --- the baseline: a linear scan of the JSONL files ----------------------------


def message_text(message: dict[str, Any]) -> str:
    """What the scan searches: the content and each tool call's arguments."""
    content = message.get("content")
    parts = [content] if isinstance(content, str) else []
    for call in message.get("tool_calls") or ():
        parts.append(call["function"]["arguments"])
    return "\n".join(parts)


def linear_scan(files: Sequence[Path], query: str, limit: int) -> list[tuple[Path, int]]:
    """Every message containing all the query's words (else any), read from the files."""
    words = [w.rstrip("*").lower() for w in query.split() if w.rstrip("*")]
    every: list[tuple[Path, int]] = []
    some: list[tuple[Path, int]] = []
    for path in files:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                text = message_text(json.loads(line)).lower()
                found = [w in text for w in words]
                if all(found):
                    every.append((path, n))
                elif any(found):
                    some.append((path, n))
    return (every or some)[:limit]


# --- measuring ----------------------------------------------------------------


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def median_of(action: Callable[[], T], repeat: int) -> tuple[float, T]:
    """Median seconds of `repeat` runs of `action` after one untimed (warming) run, and
    what that run returned."""
    result = action()
    gc.collect()
    return statistics.median(timed(action) for _ in range(repeat)), result


def make_home(base: Path, name: str) -> Path:
    home = base / name
    home.mkdir()
    (home / "IDENTITY.md").write_text(IDENTITY, encoding="utf-8")
    return home


def import_files(home: Path, files: Sequence[Path], ids: dict[Path, str]) -> None:
    """`import_files` the files, as `sessions import` does; `ids` gets each one's session id."""
    done = Conversations(home).import_files(files)
    for path, (id, new) in zip(files, done, strict=True):
        assert new, f"{path} was imported before"
        ids[path] = id


def checkpoint(home: Path) -> None:
    with sqlite3.connect(home / ".toolnexus" / "state.db") as conn:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    conn.close()
    assert not busy, "the checkpoint could not finish"


def db_bytes(home: Path) -> int:
    state = home / ".toolnexus"
    return sum(
        (state / name).stat().st_size
        for name in ("state.db", "state.db-wal")
        if (state / name).exists()
    )


def table_bytes(home: Path) -> dict[str, int]:
    """Bytes of each table and index (dbstat), the FTS shadow tables grouped as one."""
    conn = sqlite3.connect(home / ".toolnexus" / "state.db")
    try:
        rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    finally:
        conn.close()
    out: dict[str, int] = {}
    for name, size in rows:
        if name.startswith("messages_fts"):
            name = "messages_fts (all shadow tables)"
        elif name.startswith("sqlite_autoindex_messages"):
            name = "messages (session, seq) index"
        elif name.startswith(("sessions", "sqlite_autoindex_sessions")):
            name = "sessions (table and indexes)"
        elif name != "messages":
            name = "other (schema, memory history)"
        out[name] = out.get(name, 0) + int(size)
    return out


def hit_rank(hits: Sequence[Hit], session: str) -> tuple[int | None, bool]:
    """1-based position of the planted message among the hits (None: absent), and
    whether its snippet shows the answer (`quokkaberry`)."""
    for n, hit in enumerate(hits, start=1):
        if hit.session == session and hit.role == "user" and hit.kind == "conversation":
            return n, "quokkaberry" in hit.snippet
    return None, False


def fts_matches(home: Path, query: str) -> int:
    """How many messages hold any of the words recall looks for in `query`."""
    asked = parse_query(query)
    forms = [form for group in asked.groups for form in group.forms]
    found = fts_query(forms)
    if found is None:
        return 0
    conn = sqlite3.connect(home / ".toolnexus" / "state.db")
    try:
        sql = "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?"
        return int(conn.execute(sql, (found,)).fetchone()[0])
    finally:
        conn.close()


@dataclass
class Row:
    size: int
    jsonl_bytes: int
    import_seconds: float
    db_bytes: int
    tables: dict[str, int]
    recall: dict[str, float] = field(default_factory=dict)
    scan: dict[str, float] = field(default_factory=dict)
    matches: dict[str, int] = field(default_factory=dict)
    ranks: dict[str, int | None] = field(default_factory=dict)
    shown: dict[str, bool] = field(default_factory=dict)


def profile_import(base: Path, files: Sequence[Path], size: int, top: int = 25) -> None:
    """Import `files` into a scratch home under cProfile; print the costliest functions."""
    home = make_home(base, "profiled")
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.runcall(import_files, home, files, {})
    elapsed = time.perf_counter() - start
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    print(f"\nprofile: import of {size:,} messages under cProfile: {elapsed:.1f} s (inflated)")
    print(f"top {top} functions by own time:")
    lines = out.getvalue().splitlines()
    start_at = next(k for k, line in enumerate(lines) if line.lstrip().startswith("ncalls"))
    for line in lines[start_at:]:
        if line.strip():
            print("  " + line.rstrip()[:150])
    shutil.rmtree(home)


# --- reporting ----------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            names = [line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return (
        f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, "
        f"{os.cpu_count()} cpus ({cpu}), {platform.system()} {platform.release()}"
    )


def grow_and_measure(
    size: int,
    corpus: Corpus,
    home: Path,
    ids: dict[Path, str],
    queries: Sequence[Query],
    rows: Sequence[Row],
    args: argparse.Namespace,
) -> Row:
    """Grow the corpus and the home to `size` messages; time the import and the queries."""
    start = time.perf_counter()
    new = corpus.grow(size)
    made = time.perf_counter() - start
    print(
        f"== {size:,} messages: wrote {len(new):,} more files "
        f"({corpus.bytes / corpus.messages:,.0f} JSONL bytes per message) in {made:.1f} s"
    )
    seconds = timed(partial(import_files, home, new, ids))
    added = size - (rows[-1].size if rows else 0)
    print(f"  import of {added:,} more messages: {seconds:.2f} s, {added / seconds:,.0f}/s")
    checkpoint(home)
    row = Row(
        size,
        corpus.bytes,
        seconds + (rows[-1].import_seconds if rows else 0.0),
        db_bytes(home),
        table_bytes(home),
    )
    listed = sum(s.messages for s in Conversations(home).list())
    assert listed == size, f"{listed} messages saved, {size} expected"
    print(f"  database {row.db_bytes / 2**20:,.1f} MiB: {row.db_bytes / size:,.0f} bytes/message")
    assert corpus.planted is not None
    planted = ids[corpus.planted[0]]
    conversations = Conversations(home)
    for query in queries:
        row.matches[query.label] = fts_matches(home, query.text)
        recall = partial(conversations.recall, query.text, limit=5)
        row.recall[query.label], hits = median_of(recall, args.repeat)
        rank, shown = hit_rank(hits, planted)
        row.ranks[query.label], row.shown[query.label] = rank, shown
        scan = partial(linear_scan, corpus.files, query.text, 5)
        row.scan[query.label], scanned = median_of(scan, args.scan_repeat)
        assert scanned, f"the scan found nothing for {query.text!r}"
        found = ""
        if query.finds_fact:
            cut = "" if shown else " (answer cut from snippet)"
            found = f", fact at hit {rank}{cut}"
        print(
            f"  {query.label:>8} {query.text!r:40} recall {ms(row.recall[query.label]):>10}"
            f"  scan {ms(row.scan[query.label]):>11}  "
            f"{row.matches[query.label]:>7,} matches{found}"
        )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=None, help="where to write (a real disk)")
    parser.add_argument(
        "--max",
        type=int,
        default=IMPORT_TARGET_SIZE,
        choices=SIZES,
        help="largest corpus in messages (default 100000; 1000000 adds the 1M row)",
    )
    parser.add_argument("--quick", action="store_true", help="stop at 10,000 messages")
    parser.add_argument("--repeat", type=int, default=30, help="warm recall samples per query")
    parser.add_argument("--scan-repeat", type=int, default=3, help="linear scans per query")
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument(
        "--profile", action="store_true", help="also profile the import of the first size"
    )
    args = parser.parse_args()
    sizes = [s for s in SIZES if s <= (SIZES[0] if args.quick else args.max)]

    base = Path(tempfile.mkdtemp(prefix="bench-recall-", dir=args.dir))
    print(machine())
    print(f"files in {base}\n")
    try:
        corpus_dir = base / "corpus"
        corpus_dir.mkdir()
        corpus = Corpus(corpus_dir, args.seed, plant_at=sizes[0] // 2)
        queries = make_queries(corpus.vocabulary)
        home = make_home(base, "home")
        ids: dict[Path, str] = {}
        rows: list[Row] = []
        for size in sizes:
            rows.append(grow_and_measure(size, corpus, home, ids, queries, rows, args))
            print()

        if args.profile:
            files, total = [], 0
            for path in corpus.files:
                if total >= sizes[0]:
                    break
                files.append(path)
                with open(path, encoding="utf-8") as fh:
                    total += sum(1 for _ in fh)
            profile_import(base, files, total)
            print()

        missed = report(rows, queries, corpus)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if missed:
        print("\nMISSED: " + "; ".join(missed))
        return 1
    print("\nall targets met")
    return 0


def report(rows: Sequence[Row], queries: Sequence[Query], corpus: Corpus) -> list[str]:
    """Print the summary tables; the targets missed."""
    missed: list[str] = []
    print("== summary")
    print(
        f"corpus: {corpus.messages:,} messages in {len(corpus.files):,} files, "
        f"{corpus.bytes / corpus.messages:,.0f} JSONL bytes per message"
    )
    assert corpus.planted is not None
    print(f"planted fact: {corpus.planted[0].name} line {corpus.planted[1]}: {FACT!r}\n")

    print("1. import, messages/s (cumulative from an empty home)")
    for row in rows:
        rate = row.size / row.import_seconds
        line = f"  {row.size:>9,} messages {row.import_seconds:8.2f} s {rate:>9,.0f}/s"
        if row.size == IMPORT_TARGET_SIZE:
            line += f"   target ≥ {IMPORT_TARGET:,}/s: {verdict(rate >= IMPORT_TARGET)}"
            if rate < IMPORT_TARGET:
                missed.append(f"import {rate:,.0f}/s < {IMPORT_TARGET:,}/s")
        print(line)
    if rows[-1].size < IMPORT_TARGET_SIZE:
        print(f"  (the target is for {IMPORT_TARGET_SIZE:,} messages: run without --quick)")

    print("\n2. database bytes per message (state.db + -wal, checkpointed)")
    for row in rows:
        ratio = row.db_bytes / row.jsonl_bytes
        print(
            f"  {row.size:>9,} messages {row.db_bytes / 2**20:9.1f} MiB "
            f"{row.db_bytes / row.size:7,.0f} bytes/message ({ratio:.2f}x the JSONL)"
        )
        for name, size in sorted(row.tables.items(), key=lambda kv: -kv[1]):
            print(f"  {'':>9}   {name:34} {size / row.size:7,.0f} bytes/message")

    print(f"\n3. warm recall vs linear scan, medians (target ≥ {SPEEDUP_TARGET:.0f}x)")
    print(
        f"  {'messages':>9} {'query':>9} {'recall':>10} {'scan':>11} {'speedup':>9} "
        f"{'target':>7} {'top ' + str(TOP_N):>6} {'answer shown':>13}"
    )
    for row in rows:
        for query in queries:
            speedup = row.scan[query.label] / row.recall[query.label]
            # The target is for a recall over the imported 100,000 (and more); the
            # smaller size is shown for the growth, where a scan is still quick.
            held = row.size >= IMPORT_TARGET_SIZE
            good = speedup >= SPEEDUP_TARGET
            if held and not good:
                missed.append(f"{query.label} recall at {row.size:,}: {speedup:,.0f}x")
            top = shown = ""
            if query.finds_fact:
                rank = row.ranks[query.label]
                top = "yes" if rank is not None and rank <= TOP_N else "NO"
                shown = "yes" if row.shown[query.label] else "no"
                if top == "NO":
                    missed.append(f"{query.label} at {row.size:,}: fact not in the first {TOP_N}")
            print(
                f"  {row.size:>9,} {query.label:>9} {ms(row.recall[query.label]):>10} "
                f"{ms(row.scan[query.label]):>11} {speedup:8,.0f}x "
                f"{verdict(good) if held else '-':>7} "
                f"{top:>6} {shown:>13}"
            )

    print("\n4. growth of the recall median per 10x messages (1.0 flat, 10.0 linear)")
    print(f"  {'query':>9} " + " ".join(f"{row.size:>10,}" for row in rows) + "   per 10x")
    for query in queries:
        times = [row.recall[query.label] for row in rows]
        ratios = [b / a for a, b in itertools.pairwise(times)]
        print(
            f"  {query.label:>9} "
            + " ".join(f"{ms(t):>10}" for t in times)
            + "   "
            + (", ".join(f"{r:.1f}x" for r in ratios) or "-")
        )
    scans = [statistics.median(row.scan.values()) for row in rows]
    ratios = [b / a for a, b in itertools.pairwise(scans)]
    print(
        f"  {'scan':>9} "
        + " ".join(f"{ms(t):>10}" for t in scans)
        + "   "
        + (", ".join(f"{r:.1f}x" for r in ratios) or "-")
        + "  (median over the queries)"
    )
    return missed


if __name__ == "__main__":
    raise SystemExit(main())
