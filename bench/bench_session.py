"""Benchmark a new session on a realistic home, and what each memo of `_load` pays.

Run: `python bench/bench_session.py [--repeat N]`. Not a timed test: it prints
medians. The home has 50 skills and 300 memory entries (the realistic size of
`bench_compose.py`); each figure is `agent.session()` of a `from_dir` agent,
which composes the soul and builds the session's tools:

* unchanged   nothing changed since the last session (the common case)
* after write MEMORY.md got one more entry since the last session
* cold        both memos empty: every file parsed, every entry scanned

each with the memos as shipped, and with one or both memos emptied before every
session, so the saving of each is its own column.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_compose import build_home

from toolnexus.agents import _load, from_dir


def median_ms(step: Callable[[], object], *, before: Callable[[], None], repeat: int) -> float:
    """Median milliseconds of `step`, with `before` run (untimed) ahead of each call."""
    before()
    step()
    gc.collect()
    times = []
    for _ in range(repeat):
        before()
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()
    home = build_home(Path(tempfile.mkdtemp()), 50, 300)
    agent = from_dir(home)
    memory = home / "MEMORY.md"
    original = memory.read_text(encoding="utf-8")
    count = 0

    def nothing() -> None:
        pass

    def write() -> None:
        nonlocal count
        count += 1
        memory.write_text(original + f"- Extra note number {count}.\n", encoding="utf-8")

    def forget(parsed: bool, verdicts: bool, then: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            then()
            if parsed:
                _load._PARSED.clear()
            if verdicts:
                _load._VERDICTS.clear()

        return run

    print("new session, 50 skills x 300 entries: median ms (lower is better)\n")
    print(f"{'case':<12} {'memos':>8} {'no parse':>9} {'no verdict':>11} {'no memos':>9}")
    for name, change in (("unchanged", nothing), ("after write", write)):
        row = [
            median_ms(agent.session, before=forget(p, v, change), repeat=args.repeat)
            for p, v in ((False, False), (True, False), (False, True), (True, True))
        ]
        cells = zip(row, (8, 9, 11, 9), strict=True)
        print(f"{name:<12} " + " ".join(f"{ms:>{w}.2f}" for ms, w in cells))
    memory.write_text(original, encoding="utf-8")


if __name__ == "__main__":
    main()
