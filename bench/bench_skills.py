"""Benchmark the skills a persona writes: what a `skill_manage` change costs.

Median latency (fsync on) of `SkillStore.create`, `patch` (SKILL.md),
`write_file` (a new file beside it) and `remove`, each with its history record,
next to `MemoryStore.add` on the same disk and the write floor (a bare loop that
writes the same bytes to a temp file, fsyncs it, renames it and fsyncs the
folder). Runs are interleaved, so a noisy disk weighs on every column alike.

Run: `python bench/bench_skills.py [--dir FOLDER] [--repeat N]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from toolnexus.agents import SkillStore  # noqa: E402
from toolnexus.memory import MemoryStore  # noqa: E402

BODY = "\n".join(
    f"{k}. A step of the procedure, with a command to run: `tool --step {k}`." for k in range(40)
)


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def floor(folder: Path, data: bytes) -> None:
    tmp = folder / ".floor.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, folder / "floor.md")
    dfd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where to write (a real disk)")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(dir=args.dir, prefix="bench-skills-"))
    try:
        home = base / "home"
        home.mkdir()
        (home / "IDENTITY.md").write_text("---\nname: Bench\n---\nA bench.\n", encoding="utf-8")
        skills = SkillStore(home)
        memory = MemoryStore(home, "self", limit=10_000_000)
        samples: dict[str, list[float]] = {
            k: [] for k in ("floor", "memory add", "create", "patch", "write_file", "remove")
        }
        data = BODY.encode()
        for k in range(args.repeat):
            name = f"skill-{k}"
            runs: dict[str, Callable[[], object]] = {
                "floor": partial(floor, base, data),
                "memory add": partial(memory.add, f"note {k}"),
                "create": partial(skills.create, name, "A procedure.", BODY),
                "patch": partial(skills.patch, name, "`tool --step 7`", "`tool --step 7 -n`"),
                "write_file": partial(skills.write_file, name, "references/notes.md", BODY),
                "remove": partial(skills.remove, name),
            }
            for label, run in runs.items():
                samples[label].append(timed(run))
        floor_ms = statistics.median(samples["floor"]) * 1000
        memory_ms = statistics.median(samples["memory add"]) * 1000
        print(f"skill_manage latency, fsync on: medians of {args.repeat} interleaved runs")
        print(f"{'action':>12} {'median':>10} {'/floor':>8} {'/memory add':>12}")
        for action, values in samples.items():
            med = statistics.median(values) * 1000
            print(f"{action:>12} {med:>8.2f}ms {med / floor_ms:>7.2f}x {med / memory_ms:>11.2f}x")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
