"""Benchmark a new session on a realistic home, and what each memo of the loader pays.

Run: `python bench/bench_session.py [--repeat N]`. Not a timed test: it prints
medians. The home has 50 skills and 300 memory entries (the realistic size of
`bench_compose.py`); each figure is `agent.session()` of a `from_dir` agent,
which composes the soul and builds the session's tools, in two cases:

* unchanged    nothing changed since the last session (the common case)
* after write  MEMORY.md got one more entry since the last session

with every memo as shipped, and with one memo emptied before every session, so
each column shows what that memo saves:

* soul         the last soul, reused while every source hash is unchanged
* signatures   files known by their stat signature, not read again
* parses       parsed files by content hash (identity, skills, memory files)
* verdicts     safety verdicts by entry text
* none         all of them: everything read, parsed, scanned and rendered
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_compose import build_home

from toolnexus import soul as soul_module
from toolnexus.agents import from_dir
from toolnexus.home import _memo


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

    memos = {
        "soul": [soul_module._LAST],
        "signatures": [_memo._SEEN],
        "parses": [_memo._PARSED],
        "verdicts": [_memo._VERDICTS],
        "none": [soul_module._LAST, _memo._SEEN, _memo._PARSED, _memo._VERDICTS],
    }

    def forget(emptied: list[Any], then: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            then()
            for memo in emptied:
                memo.clear()

        return run

    # Let the files age past the racy window, as a home's files do between sessions.
    time.sleep(_memo.RACY_WINDOW_NS / 1e9 + 0.2)
    agent.session()
    columns = ["all memos", *(f"no {name}" if name != "none" else name for name in memos)]
    print("new session, 50 skills x 300 entries: median ms (lower is better)\n")
    print(f"{'case':<12}" + "".join(f"{c:>15}" for c in columns))
    for name, change in (("unchanged", nothing), ("after write", write)):
        row = [median_ms(agent.session, before=forget([], change), repeat=args.repeat)]
        row += [
            median_ms(agent.session, before=forget(emptied, change), repeat=args.repeat)
            for emptied in memos.values()
        ]
        print(f"{name:<12}" + "".join(f"{ms:>15.2f}" for ms in row))
    memory.write_text(original, encoding="utf-8")


if __name__ == "__main__":
    main()
