"""Benchmark compose_soul against home size (skills x memory entries).

Run: `python bench/bench_compose.py [--repeat N]`. Not a timed test: it prints
median times per size, for four situations a long-lived process meets:

* warm     the home is unchanged since the last compose (the common case: a new
           session, a staleness check): stat every file, reuse the parsed files
           and the previous soul.
* recent   every file changed less than RACY_WINDOW_NS ago: the cache may not
           trust stat alone, so each file is re-read and its hash compared
           (parse results are still reused).
* render   a source changed (say a memory write): the soul is rendered again
           from cached parses of the unchanged files.
* cold     nothing cached: read, parse, scan and render everything.

and the time per unit of home size (one unit = one skill or one memory entry),
so growth faster than linear shows up as a rising ratio.
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

from toolnexus.agents import home as home_module
from toolnexus.agents import soul as soul_module
from toolnexus.agents.soul import compose_soul

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


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm up
    gc.collect()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=200, help="timed runs per figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        homes = [(s, e, build_home(Path(tmp), s, e)) for s, e in SIZES]
        # Let every file age past the racy window, as a home does between sessions.
        time.sleep(home_module.RACY_WINDOW_NS / 1e9 + 0.2)
        rows = []
        for skills, entries, home in homes:
            soul = compose_soul(home)  # first read after the window: verifies content
            repeat = max(10, args.repeat // (1 + skills // 50))

            def warm(home: Path = home) -> object:
                return compose_soul(home)

            def render(home: Path = home) -> object:
                soul_module._SOULS.clear()
                return compose_soul(home)

            def cold(home: Path = home) -> object:
                home_module.clear_caches()
                soul_module._SOULS.clear()
                return compose_soul(home)

            figures = {"warm": median_ms(warm, repeat)}
            saved = home_module.RACY_WINDOW_NS
            home_module.RACY_WINDOW_NS = 10**18  # every file counts as just written
            try:
                figures["recent"] = median_ms(warm, repeat)
            finally:
                home_module.RACY_WINDOW_NS = saved
            figures["render"] = median_ms(render, repeat)
            figures["cold"] = median_ms(cold, max(5, repeat // 4))
            rows.append((skills, entries, len(soul.text), figures))
            compose_soul(home)  # leave the caches warm for the next size
    kinds = ("warm", "recent", "render", "cold")
    print(f"compose_soul, median ms (python {sys.version.split()[0]})")
    print(f"{'skills x entries':>17} {'soul chars':>10} " + " ".join(f"{k:>8}" for k in kinds))
    for skills, entries, chars, figures in rows:
        print(
            f"{f'{skills} x {entries}':>17} {chars:>10} "
            + " ".join(f"{figures[k]:8.3f}" for k in kinds)
        )
    print("\ntime per unit (skill or entry), microseconds; ratio to the 50 x 300 home")
    base = {k: rows[1][3][k] / (rows[1][0] + rows[1][1]) for k in kinds}
    for skills, entries, _, figures in rows:
        units = skills + entries
        cells = " ".join(
            f"{1000 * figures[k] / units:8.3f} ({figures[k] / units / base[k]:4.2f}x)"
            for k in kinds
        )
        print(f"{f'{skills} x {entries}':>17} {cells}")
    warm_mid = rows[1][3]["warm"]
    verdict = "meets" if warm_mid <= TARGET_MS else "misses"
    print(f"\n50 x 300 warm median {warm_mid:.3f} ms: {verdict} the {TARGET_MS} ms target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
