"""How fast the memory scanner reads: MB/s of text, medians of interleaved runs.

Figures (no memo: every text is scanned afresh, as a new note is):

1. ordinary notes (tests/corpus/benign.jsonl), each alone: what compose reads of a
   note; and vetted (the rules, then the learned layer): the memory tool's write path;
2. attacks (tests/corpus/attacks.jsonl), each alone: what a refusal costs;
3. a whole memory file read together (the benign notes joined): compose's
   context pass;
4. adversarial texts built to make patterns backtrack (long runs of
   whitespace, clause starts, URL fragments): linear time, or it shows here;
5. composing a 300-entry home afresh (memos cleared) vs again (memos warm),
   in milliseconds: what a new session pays.

Run: `python bench/bench_scanner.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_compose import build_home  # noqa: E402

from toolnexus.agents import compose_soul  # noqa: E402
from toolnexus.home import _memo  # noqa: E402
from toolnexus.scanner._engine import planted, scan  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"


def load(name: str) -> list[str]:
    rows = [json.loads(line) for line in (CORPUS / name).read_text("utf-8").splitlines()]
    return [text for row in rows for text in row.get("entries", [row.get("text", "")])]


ADVERSARIAL = [
    "\n" * 200_000,
    " \t\n" * 70_000,
    ".\n" * 100_000,
    ", " * 100_000,
    "then " * 40_000,
    "send token " * 20_000,
    "https://a?" * 20_000,
    "a b " * 50_000,
    "ignore " * 30_000,
    "QUFB" * 50_000,
]


def timed(work: Callable[[], object], repeat: int) -> float:
    """The median seconds of `repeat` runs of `work`."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def scan_each(texts: list[str]) -> Callable[[], object]:
    def work() -> object:
        return [scan(t) for t in texts]

    return work


def vet_each(texts: list[str]) -> Callable[[], object]:
    """As `Scanner.vet`, unmemoised: the rules, and the learned layer where none spoke."""

    def work() -> object:
        return [scan(t) or planted(t) for t in texts]

    return work


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    benign, attacks = load("benign.jsonl"), load("attacks.jsonl")
    joined = "\n".join(benign)
    scan(joined)  # compile every rule first: the figures are for a warm process
    planted(benign[0])  # and read the learned layer's weights
    rows = [
        ("ordinary notes, each alone", benign, scan_each(benign)),
        ("ordinary notes, vetted", benign, vet_each(benign)),
        ("attacks, each alone", attacks, scan_each(attacks)),
        ("a memory file read together", [joined], lambda: scan(joined, every=True)),
        ("adversarial texts", ADVERSARIAL, scan_each(ADVERSARIAL)),
    ]
    print(f"{'what':34} {'texts':>6} {'MB':>7} {'median s':>9} {'MB/s':>7}")
    for name, texts, work in rows:
        size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
        seconds = timed(work, args.repeat)
        print(f"{name:34} {len(texts):6} {size:7.3f} {seconds:9.4f} {size / seconds:7.2f}")

    with tempfile.TemporaryDirectory() as tmp:
        home = build_home(Path(tmp), skills=20, entries=300)

        def cold() -> object:
            _memo.clear_memos()
            return compose_soul(home)

        cold_s = timed(cold, args.repeat)
        compose_soul(home)
        warm_s = timed(lambda: compose_soul(home), args.repeat * 10)
    print(
        f"\ncompose, 20 skills x 300 entries: {cold_s * 1e3:.1f} ms afresh (every entry "
        f"scanned), {warm_s * 1e3:.3f} ms again (memos warm)"
    )


if __name__ == "__main__":
    main()
