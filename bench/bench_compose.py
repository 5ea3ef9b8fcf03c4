"""Benchmark compose_soul against home size (skills x memory entries).

Run: `python bench/bench_compose.py [--repeat N]`. Not a timed test: it prints
median times per size, for the situations a long-lived process meets:

* warm     the home is unchanged since the last compose (the common case: a new
           session, a staleness check): every file is stat-ed and known by its
           signature, and the previous soul is reused.
* write    MEMORY.md just got one more entry (the memory tool's write): that
           file is read and parsed again (only the new entry is safety-scanned)
           and the soul rendered; the other files come from the memos.
* cold     nothing memoised: read, parse, scan and render everything.
* floor    the system calls alone (list skills/, stat every source file): what
           no memo can avoid, to tell our overhead from the file system's.

and the time per unit of home size (one unit = one skill or one memory entry),
so growth faster than linear shows up as a rising ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolnexus import soul as soul_module
from toolnexus.home import _memo
from toolnexus.soul import compose_soul

SIZES = ((1, 10), (50, 300), (500, 3000))
TARGET_MS = 0.5  # median for (50 x 300), warm


def build_home(root: Path, skills: int, entries: int) -> Path:
    """Write a home with `skills` skills and `entries` entries (2/3 MEMORY.md, 1/3 USER.md)."""
    home = root / f"home-{skills}x{entries}"
    home.mkdir()
    (home / "IDENTITY.md").write_text(
        "---\nname: Bench\ndescription: A benchmark persona.\n"
        "memory_limits: {self: 10000000, user: 10000000}\n---\n\n"
        + "You are a benchmark persona. You answer briefly.\n"
        * 20,
        encoding="utf-8",
    )
    for i in range(skills):
        folder = home / "skills" / f"skill-{i:04d}"
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Does task number {i} well. Use it when "
            f"the user asks about topic {i} or anything near it.\nlicense: MIT\n---\n\n"
            + f"# Skill {i}\n\nStep one.\nStep two.\n"
            * 10,
            encoding="utf-8",
        )
        (folder / "references" / "guide.md").write_text("A guide.\n", encoding="utf-8")
    user = entries // 3
    (home / "USER.md").write_text(
        "# About the user\n\n"
        + "".join(f"- User fact number {i}: prefers option {i % 7}.\n" for i in range(user)),
        encoding="utf-8",
    )
    (home / "MEMORY.md").write_text(
        "# Notes\n\n"
        + "".join(
            f"- Note {i}: the build for service {i % 13} takes about {i % 9} minutes.\n"
            for i in range(entries - user)
        ),
        encoding="utf-8",
    )
    return home


def timings(fn: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds of `repeat` calls after one warm-up call."""
    fn()
    gc.collect()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def floor(home: Path) -> None:
    """The unavoidable system calls of a warm compose."""
    names = [e.name for e in os.scandir(home / "skills")] if (home / "skills").exists() else []
    for name in ("IDENTITY.md", "soul.md.j2", "USER.md", "MEMORY.md"):
        with contextlib.suppress(FileNotFoundError):
            os.stat(home / name)
    root = str(home / "skills")
    for name in names:
        os.stat(root + os.sep + name + os.sep + "SKILL.md")


def after_write(home: Path, repeat: int) -> list[float]:
    """Compose times right after a new entry lands in MEMORY.md (the write is not timed)."""
    memory = home / "MEMORY.md"
    original = memory.read_text(encoding="utf-8")
    times = []
    for i in range(repeat + 1):
        memory.write_text(original + f"- Extra note {i}.\n", encoding="utf-8")
        start = time.perf_counter()
        compose_soul(home)
        times.append((time.perf_counter() - start) * 1000)
    memory.write_text(original, encoding="utf-8")
    return times[1:]


KINDS = ("warm", "write", "cold", "floor")


def measure(skills: int, home: Path, repeat: int) -> dict[str, list[float]]:
    """Every figure for one home."""
    repeat = max(20, repeat // (1 + skills // 50))

    def warm() -> object:
        return compose_soul(home)

    def cold() -> object:
        _memo.clear_memos()
        soul_module._LAST.clear()
        return compose_soul(home)

    figures = {"warm": timings(warm, repeat)}
    figures["write"] = after_write(home, repeat)
    figures["cold"] = timings(cold, max(5, repeat // 4))
    figures["floor"] = timings(lambda: floor(home), repeat)
    compose_soul(home)  # leave the memos warm
    return figures


def table(title: str, rows: list[tuple[int, int, dict[str, float]]]) -> None:
    print(f"\n{title}")
    print(f"{'skills x entries':>17} " + " ".join(f"{k:>8}" for k in KINDS))
    for skills, entries, figures in rows:
        print(f"{f'{skills} x {entries}':>17} " + " ".join(f"{figures[k]:8.3f}" for k in KINDS))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=400, help="timed runs per figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        homes = [(s, e, build_home(Path(tmp), s, e)) for s, e in SIZES]
        # Let every file age past the racy window, as a home does between sessions.
        time.sleep(_memo.RACY_WINDOW_NS / 1e9 + 0.2)
        results = []
        for skills, entries, home in homes:
            chars = len(compose_soul(home).text)  # first read after the window
            results.append((skills, entries, chars, measure(skills, home, args.repeat)))
    print(f"compose_soul (python {sys.version.split()[0]}, {os.cpu_count()} cpus)")
    print("soul characters: " + ", ".join(f"{s} x {e}: {c}" for s, e, c, _ in results))
    medians = [(s, e, {k: statistics.median(f[k]) for k in KINDS}) for s, e, _, f in results]
    minimums = [(s, e, {k: min(f[k]) for k in KINDS}) for s, e, _, f in results]
    table("median ms", medians)
    table("minimum ms (least disturbed by other processes)", minimums)
    for label, rows in (("median", medians), ("minimum", minimums)):
        base_s, base_e, base = rows[1]
        table(
            f"{label} time per unit (skill + entry) relative to the 50 x 300 home "
            "(1.00 = linear growth)",
            [
                (s, e, {k: (f[k] / (s + e)) / (base[k] / (base_s + base_e)) for k in KINDS})
                for s, e, f in rows
            ],
        )
    warm_mid = medians[1][2]["warm"]
    verdict = "meets" if warm_mid <= TARGET_MS else "misses"
    print(f"\n50 x 300 warm median {warm_mid:.3f} ms: {verdict} the {TARGET_MS} ms target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
