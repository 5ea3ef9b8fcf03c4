"""Benchmark the memory history: what recording adds to a write, and the bytes it keeps.

1. Latency of `MemoryStore.add` / `replace` / `remove` (fsync on) at 10 / 100 / 300
   entries, with the history recording as shipped and with recording switched off
   (the history functions replaced by no-ops, in this process only), next to the
   write floor: a bare loop that writes the same bytes to a temp file, fsyncs it,
   renames it over the file and fsyncs the folder. Medians of interleaved runs.
2. Bytes per change: the growth of `.toolnexus/` over many changes to a small
   file and to a full 8,000-character MEMORY.md, and after `compact`.
3. `memory log` of a long history (1,000 changes): median time.

Run: `python bench/bench_history.py [--dir FOLDER] [--repeat N]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus.agents import Home  # noqa: E402
from toolnexus.memory import MemoryStore  # noqa: E402
from toolnexus.memory import _tool as memory_module  # noqa: E402
from toolnexus.store.folder import _changes as _history  # noqa: E402

SIZES = (10, 100, 300)


@contextmanager
def recording_off() -> Iterator[None]:
    """The same write path with the history's work replaced by no-ops."""
    saved = (_history.sync, _history.record, memory_module.open_state)
    _history.sync = lambda *a, **k: None  # type: ignore[assignment]
    _history.record = lambda *a, **k: []  # type: ignore[assignment]
    memory_module.open_state = lambda *a, **k: object()  # type: ignore[assignment]
    try:
        yield
    finally:
        _history.sync, _history.record, memory_module.open_state = saved


def seed(folder: Path, entries: int) -> None:
    lines = [
        f"- Note {k}: a fact worth keeping about the work, {k * 7} units\n" for k in range(entries)
    ]
    (folder / "MEMORY.md").write_text("# Memory\n\n" + "".join(lines), encoding="utf-8")


def floor_write(folder: Path) -> Callable[[], None]:
    """The floor: write the file's bytes (plus one line) to a temp, fsync, rename, fsync folder."""
    path = folder / "floor.md"
    data = (folder / "MEMORY.md").read_bytes() + b"- Note added\n"

    def write() -> None:
        tmp = folder / ".floor.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    return write


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def latency(base: Path, entries: int, repeat: int) -> dict[str, list[float]]:
    """Interleaved runs: floor, add/replace/remove with recording, and without."""
    out: dict[str, list[float]] = {}
    folders = {}
    for mode in ("on", "off"):
        folder = base / f"{mode}-{entries}"
        folder.mkdir()
        seed(folder, entries)
        folders[mode] = folder
    floor_dir = base / f"floor-{entries}"
    floor_dir.mkdir()
    seed(floor_dir, entries)
    floor = floor_write(floor_dir)
    for k in range(repeat):
        out.setdefault("floor", []).append(timed(floor))
        for mode, folder in folders.items():
            store = MemoryStore(folder, "self", limit=10_000_000)

            def run(store: MemoryStore = store, k: int = k) -> dict[str, float]:
                times = {}
                times["add"] = timed(lambda: store.add(f"Fresh note {k}"))
                times["replace"] = timed(
                    lambda: store.replace(f"Fresh note {k}", f"Fresh fact {k}")
                )
                times["remove"] = timed(lambda: store.remove(f"Fresh fact {k}"))
                return times

            if mode == "off":
                with recording_off():
                    times = run()
            else:
                times = run()
            for action, t in times.items():
                out.setdefault(f"{action}-{mode}", []).append(t)
    return out


def growth(base: Path, entries: int, changes: int) -> tuple[float, float, int]:
    """Bytes of `.toolnexus/` per change over `changes` replaces of a file of `entries`."""
    folder = base / f"growth-{entries}"
    folder.mkdir()
    seed(folder, entries)
    store = MemoryStore(folder, "self", limit=10_000_000, fsync=False)
    store.add("Counter is at 0")
    Home(folder).compact(keep_days=0)
    start = _size(folder)
    for k in range(changes):
        store.replace(f"Counter is at {k}", f"Counter is at {k + 1}")
    size = (_size(folder) - start) / changes
    file_size = (folder / "MEMORY.md").stat().st_size
    return size, float(file_size), _size(folder)


def _size(folder: Path) -> int:
    """The database's size once its log is checkpointed (the log is reused, up to 1 MiB)."""
    state = folder / ".toolnexus"
    if not state.exists():
        return 0
    with sqlite3.connect(state / "state.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return (state / "state.db").stat().st_size


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where to write (a real disk)")
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-history-"))
    try:
        print("1. Memory actions with fsync: medians, and ratios to the write floor")
        print(
            f"{'entries':>8} {'floor':>9} {'action':>8} {'recorded':>10} {'off':>9} "
            f"{'added':>9} {'/floor':>7}"
        )
        for entries in SIZES:
            out = latency(base, entries, args.repeat)
            floor = statistics.median(out["floor"])
            for action in ("add", "replace", "remove"):
                on = statistics.median(out[f"{action}-on"])
                off = statistics.median(out[f"{action}-off"])
                print(
                    f"{entries:>8} {ms(floor):>9} {action:>8} {ms(on):>10} {ms(off):>9} "
                    f"{ms(on - off):>9} {on / floor:>6.2f}x"
                )
        print()
        print("2. History size per change (each change a replace; the file's new version kept)")
        for entries in (3, 130):
            per, file_size, total = growth(base, entries, 300)
            print(
                f"  file of {entries:>3} entries ({file_size / 1024:.1f} KB): "
                f"{per:,.0f} bytes per change ({total / 1024:.0f} KB after 300 changes)"
            )
        folder = base / "growth-130"
        Home(folder).compact(keep_days=0)
        print(f"  after compact --keep-days 0: {_size(folder) / 1024:.0f} KB")
        print()
        print("3. memory log of 1,000 changes")
        folder = base / "log"
        folder.mkdir()
        store = MemoryStore(folder, "self", limit=10_000_000, fsync=False)
        for k in range(1000):
            store.add(f"note {k}")
        times = [timed(lambda: Home(folder).history()) for _ in range(10)]
        grep = [timed(lambda: Home(folder).history(grep="note 99")) for _ in range(10)]
        print(f"  log: {ms(statistics.median(times))}; log --grep: {ms(statistics.median(grep))}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
