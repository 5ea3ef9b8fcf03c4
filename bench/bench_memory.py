"""Benchmark the memory store: action latency vs file size, with and without fsync,
and the throughput of several writer processes with a zero-lost-entries check.

Run: `python bench/bench_memory.py [--dir FOLDER] [--repeat N]`. FOLDER decides
which filesystem is measured (fsync on tmpfs costs nothing); the default is a
temp folder in the system's temp dir.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus.agents import Home  # noqa: E402
from toolnexus.memory import MemoryStore, parse_memory  # noqa: E402

SIZES = (10, 100, 1000)
WRITERS = (1, 2, 4, 8)
ADDS_PER_WRITER = 50

WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from toolnexus.memory._tool import MemoryStore, memory_tool

    folder, prefix, count, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    print("ready", flush=True)
    sys.stdin.readline()
    if path == "store":  # MemoryStore: a blocking wait for the lock
        store = MemoryStore(Path(folder), "self", limit=10_000_000)
        for k in range(count):
            store.add(f"{prefix} wrote note number {k}")
    else:  # the memory tool, as a model calls it: a cancellable (polling) wait
        tool = memory_tool(folder, limits={"self": 10_000_000})

        async def run():
            for k in range(count):
                text = f"{prefix} wrote note number {k}"
                result = await tool.execute({"action": "add", "text": text})
                assert not result.is_error, result.output

        asyncio.run(run())
    """
)


def seed_file(folder: Path, entries: int) -> None:
    """Write a memory file of `entries` realistic-length notes, plus a little prose."""
    lines = ["# Memory\n", "\n"]
    lines += [
        f"- note {k}: the user prefers short, factual status updates\n" for k in range(entries)
    ]
    (folder / "MEMORY.md").write_text("".join(lines), encoding="utf-8")


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def latency(base: Path, *, repeat: int) -> dict[tuple[int, bool], dict[str, float]]:
    """Median seconds per action for each (entries, fsync) cell; files stay at size.

    Samples are taken round-robin over the cells, so background load on the
    machine spreads over all of them instead of skewing one.
    """
    cells = [(entries, fsync) for entries in SIZES for fsync in (True, False)]
    stores: dict[tuple[int, bool], MemoryStore] = {}
    for entries, fsync in cells:
        folder = Path(tempfile.mkdtemp(dir=base))
        seed_file(folder, entries)
        stores[entries, fsync] = MemoryStore(folder, "self", limit=10_000_000, fsync=fsync)
    samples: dict[tuple[int, bool], dict[str, list[float]]] = {
        cell: {"add": [], "replace": [], "remove": []} for cell in cells
    }
    for i in range(repeat):
        for cell in cells:
            store, got = stores[cell], samples[cell]
            text = f"bench entry {i}"
            got["add"].append(timed(partial(store.add, text)))
            got["remove"].append(timed(partial(store.remove, text)))
            target = f"note {cell[0] // 2}: the user"
            old, new = ("prefers", "likes") if i % 2 == 0 else ("likes", "prefers")
            got["replace"].append(
                timed(partial(store.replace, f"{target} {old}", f"{target} {new}"))
            )
    for (entries, _), store in stores.items():
        assert len(Home(store.dir).memory().entries) == entries
    return {
        cell: {action: statistics.median(values) for action, values in got.items()}
        for cell, got in samples.items()
    }


def throughput(folder: Path, writers: int, path: str) -> tuple[float, int]:
    """Total adds per second of `writers` processes; and how many entries were lost."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder), f"w{i}", str(ADDS_PER_WRITER), path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(writers)
    ]
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
    start = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    for proc in procs:
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
        assert proc.returncode == 0, f"writer failed with {proc.returncode}"
    elapsed = time.perf_counter() - start
    found = set(parse_memory((folder / "MEMORY.md").read_text(encoding="utf-8")).entries)
    expected = {
        f"w{i} wrote note number {k}" for i in range(writers) for k in range(ADDS_PER_WRITER)
    }
    return writers * ADDS_PER_WRITER / elapsed, len(expected - found)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=None, help="folder to benchmark in")
    parser.add_argument("--repeat", type=int, default=40, help="samples per cell (default 40)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-memory-", dir=args.dir))
    print(f"python {sys.version.split()[0]} on {sys.platform}; files in {base}")
    print(f"median latency per action, ms ({args.repeat} samples per cell)\n")
    print(f"{'entries':>7} {'action':>8} {'fsync':>8} {'no fsync':>8} {'ratio':>6}")
    medians = latency(base, repeat=args.repeat)
    for entries in SIZES:
        with_sync, no_sync = medians[entries, True], medians[entries, False]
        for action in ("add", "replace", "remove"):
            ratio = with_sync[action] / no_sync[action]
            print(
                f"{entries:>7} {action:>8} {ms(with_sync[action])} {ms(no_sync[action])} "
                f"{ratio:6.1f}"
            )
    print(f"\nconcurrent writers (fsync on, {ADDS_PER_WRITER} adds each, one shared MEMORY.md)\n")
    print(f"{'writers':>7} {'store adds/s':>12} {'tool adds/s':>12} {'lost':>5}")
    lost_total = 0
    for writers in WRITERS:
        rates = []
        for path in ("store", "tool"):
            rate, lost = throughput(Path(tempfile.mkdtemp(dir=base)), writers, path)
            rates.append(rate)
            lost_total += lost
        print(f"{writers:>7} {rates[0]:12.1f} {rates[1]:12.1f} {lost_total:>5}")
    shutil.rmtree(base)
    if lost_total:
        print(f"\nFAIL: {lost_total} entries lost")
        return 1
    print("\nzero entries lost")
    return 0


if __name__ == "__main__":
    sys.exit(main())
