"""Print each figure of the speed issue beside its target, all measured in one run.

Medians of interleaved runs, judged as ratios (never as absolute promises):

1. Memory writes (`MemoryStore`, fsync on, history recorded as shipped) at 10 / 100 /
   300 entries vs the write floor (temp file, fsync, rename, fsync folder): <= 1.4x.
2. The same writes at 300 entries vs Hermes Agent 0.19's `memory_tool()` handler
   (the path a model's call takes): toolnexus >= 2x faster.
3. A new session (`agent.session()` of a `from_dir` agent) vs Hermes's snapshot
   build (fresh MemoryStore, load_from_disk, format_for_system_prompt): >= 12x.
4. compose_soul's cost per (skill + entry) up to 500 x 3,000: linear (<= 2x the
   per-unit cost at 50 x 300).
5. RSS that composing the largest example home adds in a fresh process: <= 5 MB.
6. Cold start of the command line: bench/bench_cli.py's own table.

Run: `python bench/bench_speed.py [--dir FOLDER] [--repeat N] [--quick]
[--hermes-venv PATH | --no-hermes]`. FOLDER should be on a real disk (fsync on
tmpfs costs nothing). Hermes is never a dependency of this project: the first run
makes a throwaway venv (`<tmp>/toolnexus-bench-hermes`, reused afterwards) and
runs `pip install --no-deps hermes-agent==0.19.0 pyyaml` in it; without network
the Hermes comparisons are skipped and the floor ratio stands alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench_compose import build_home  # noqa: E402
from bench_history import floor_write  # noqa: E402

from toolnexus import soul as soul_module  # noqa: E402
from toolnexus.agents import from_dir, memory_tool  # noqa: E402
from toolnexus.home import _memo  # noqa: E402
from toolnexus.memory import MemoryStore  # noqa: E402
from toolnexus.soul import compose_soul  # noqa: E402

HERMES = "hermes-agent==0.19.0"
LIMIT = 10_000_000
WRITE_SIZES = (10, 100, 300)
CURVE = ((1, 10), (10, 100), (50, 300), (100, 600), (250, 1500), (500, 3000))
QUICK_CURVE = ((1, 10), (10, 100), (50, 300), (100, 600))
BASE_SIZE = (50, 300)  # the per-unit cost every other size is compared with
ACTIONS = ("add", "replace", "remove")

# The Hermes side: one round per line read from stdin, its timings back as JSON.
HERMES_WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    out = os.fdopen(os.dup(1), "w")
    sys.stdout = sys.stderr  # nothing Hermes prints can garble the replies
    from tools.memory_tool import MemoryStore, memory_tool

    def new_store():
        store = MemoryStore(memory_char_limit=10**7, user_char_limit=10**7)
        store.load_from_disk()
        return store

    def timed(*args, **kwargs):
        start = time.perf_counter()
        reply = json.loads(memory_tool(*args, store=STORE, **kwargs))
        assert reply.get("success"), reply
        return time.perf_counter() - start

    def writes(k):
        old, new = f"Fresh note {k}", f"Fresh fact {k}"
        return {"add": timed("add", "memory", old),
                "replace": timed("replace", "memory", new, old_text=old),
                "remove": timed("remove", "memory", old_text=new)}

    def snapshot(k):
        start = time.perf_counter()
        store = new_store()
        store.format_for_system_prompt("memory"), store.format_for_system_prompt("user")
        return {"snapshot": time.perf_counter() - start}

    STORE = new_store()
    step = writes if sys.argv[1] == "writes" else snapshot
    step(-1)  # warm-up: Hermes imports some modules on first use
    print("ready", file=out, flush=True)
    for line in sys.stdin:
        print(json.dumps(step(int(line))), file=out, flush=True)
    """
)


def entry(k: int) -> str:
    return f"Note {k}: the build for service {k % 13} takes about {k % 9} minutes."


def seed(folder: Path, entries: int) -> Path:
    folder.mkdir(parents=True)
    text = "# Memory\n\n" + "".join(f"- {entry(k)}\n" for k in range(entries))
    (folder / "MEMORY.md").write_text(text, encoding="utf-8")
    return folder


def seed_hermes(home: Path, memory: list[str], user: list[str]) -> Path:
    """A HERMES_HOME whose memory files hold these entries (joined by Hermes's "\\n§\\n")."""
    (home / "memories").mkdir(parents=True)
    for name, entries in (("MEMORY.md", memory), ("USER.md", user)):
        (home / "memories" / name).write_text("\n§\n".join(entries), encoding="utf-8")
    return home


def bullets(path: Path) -> list[str]:
    """The entries of a toolnexus memory file that `build_home` wrote (one `- ` line each)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line[2:] for line in lines if line.startswith("- ")]


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def forget() -> None:
    """Empty every memo of the loader, as a fresh process starts (imports aside)."""
    _memo.clear_memos()
    soul_module._LAST.clear()


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **extra}


def hermes_python(venv: Path, scratch: Path) -> tuple[Path | None, str]:
    """The python of a venv holding Hermes (made on first use), and a line saying how."""
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    env = clean_env(HERMES_HOME=str(scratch / "hermes-check"))

    def works() -> bool:
        check = [str(python), "-c", "import tools.memory_tool"]
        return (
            python.exists() and subprocess.run(check, capture_output=True, env=env).returncode == 0
        )

    if works():
        return python, f"Hermes: {HERMES} in {venv} (reused)"
    try:
        if not python.exists():
            subprocess.run(
                [sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True
            )
        install = [str(python), "-m", "pip", "install", "-q", "--no-deps", HERMES, "pyyaml"]
        subprocess.run(install, check=True, capture_output=True, timeout=600, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        last = detail.decode(errors="replace").strip().splitlines()[-1:] or [str(exc)]
        return None, f"Hermes: could not install {HERMES} into {venv} (no network?): {last[0]}"
    if not works():
        return None, f"Hermes: installed into {venv}, but `tools.memory_tool` fails to import"
    return python, f"Hermes: {HERMES} installed into {venv}"


class Hermes:
    """One Hermes worker process on its own HERMES_HOME, driven a round at a time."""

    def __init__(self, python: Path, script: Path, mode: str, home: Path) -> None:
        self.errors = home.with_suffix(".err")
        self._stderr = self.errors.open("w", encoding="utf-8")
        self.proc = subprocess.Popen(
            [str(python), str(script), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            cwd=home,
            env=clean_env(HERMES_HOME=str(home)),
        )
        self.round(None)

    def round(self, k: int | None) -> dict[str, float]:
        """Ask for round `k` (None: wait for "ready") and return its timings."""
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        if k is not None:
            self.proc.stdin.write(f"{k}\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            tail = self.errors.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(f"the Hermes worker stopped:\n{tail}")
        return {} if k is None else dict(json.loads(line))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()
        self._stderr.close()


def writes(base: Path, entries: int, rounds: int, hermes: Hermes | None) -> dict[str, float]:
    """Median seconds of the floor, each store action, and (with Hermes) both tools."""
    store = MemoryStore(seed(base / f"store-{entries}", entries), "self", limit=LIMIT)
    floor = floor_write(seed(base / f"floor-{entries}", entries))
    tool = memory_tool(seed(base / f"tool-{entries}", entries), limits={"self": LIMIT})
    loop = asyncio.new_event_loop()

    def call(args: Mapping[str, Any]) -> None:
        result = loop.run_until_complete(tool.execute(args))
        assert not result.is_error, result.output

    samples: defaultdict[str, list[float]] = defaultdict(list)
    for k in range(rounds + 1):  # round 0 warms up
        old, new = f"Fresh note {k}", f"Fresh fact {k}"
        got = {"floor": timed(floor)}
        got["add"] = timed(partial(store.add, old))
        got["replace"] = timed(partial(store.replace, old, new))
        got["remove"] = timed(partial(store.remove, new))
        if hermes is not None:
            got["tool add"] = timed(partial(call, {"action": "add", "text": old}))
            got["tool replace"] = timed(
                partial(call, {"action": "replace", "text": old, "with": new})
            )
            got["tool remove"] = timed(partial(call, {"action": "remove", "text": new}))
            got.update({f"hermes {a}": t for a, t in hermes.round(k).items()})
        for name, t in got.items():
            if k:
                samples[name].append(t)
    loop.close()
    return {name: statistics.median(ts) for name, ts in samples.items()}


def sessions(home: Path, rounds: int, hermes: Hermes | None) -> dict[str, float]:
    """Median seconds of a new session, warm and cold, and of Hermes's snapshot build."""
    agent = from_dir(home)
    agent.session()
    samples: defaultdict[str, list[float]] = defaultdict(list)
    for k in range(rounds):
        samples["warm"].append(timed(agent.session))
        forget()
        samples["cold"].append(timed(agent.session))
        if hermes is not None:
            samples["hermes"].append(hermes.round(k)["snapshot"])
    return {name: statistics.median(ts) for name, ts in samples.items()}


def curve_point(home: Path, rounds: int) -> tuple[float, float]:
    """Median seconds of compose_soul, cold (memos emptied) and warm (unchanged home)."""
    cold: list[float] = []
    warm: list[float] = []
    compose_soul(home)
    for _ in range(rounds):
        forget()
        cold.append(timed(lambda: compose_soul(home)))
        warm += [timed(lambda: compose_soul(home)) for _ in range(5)]
    return statistics.median(cold), statistics.median(warm)


RSS_SCRIPT = textwrap.dedent(
    """
    import resource, sys

    def peak_mb():  # VmHWM where /proc has it, else ru_maxrss (KiB; bytes on macOS)
        try:
            with open("/proc/self/status", encoding="utf-8") as status:
                return int(status.read().split("VmHWM:")[1].split()[0]) / 1024
        except (OSError, IndexError):
            unit = 2**20 if sys.platform == "darwin" else 2**10
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / unit

    from toolnexus.agents import compose_soul  # the soul module's import is not counted
    before = peak_mb()
    compose_soul(sys.argv[1])
    print(before, peak_mb())
    """
)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f}"


def mark(ok: bool | None) -> str:
    return "info" if ok is None else "pass" if ok else "MISS"


def table(header: list[str], rows: list[list[str]]) -> None:
    rows = [row + [""] * (len(header) - len(row)) for row in rows]
    widths = [max(len(c) for c in col) for col in zip(header, *rows, strict=True)]
    for row in (header, *rows):
        cells = [
            c.rjust(w) if i else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  " + "  ".join(cells).rstrip())


@dataclass
class Run:
    """What every section needs: where to write, how often, Hermes, and the summary."""

    base: Path
    repeat: int
    quick: bool
    python: Path | None  # the Hermes venv's python; None: no Hermes
    workers: list[Hermes] = field(default_factory=list)
    summary: list[tuple[str, str, bool | None]] = field(default_factory=list)

    def hermes(self, mode: str, home: Path) -> Hermes | None:
        if self.python is None:
            return None
        self.workers.append(Hermes(self.python, self.base / "hermes_worker.py", mode, home))
        return self.workers[-1]


def section_writes(run: Run) -> None:
    print(f"\n1. Memory writes vs the write floor (fsync on; median of {run.repeat} rounds)")
    rows, worst, figures = [], 0.0, {}
    for n in WRITE_SIZES:
        hermes = None  # Hermes at 300 entries only, interleaved with the rest
        if n == 300:
            home = seed_hermes(run.base / "hermes-writes", [entry(k) for k in range(n)], [])
            hermes = run.hermes("writes", home)
        figures[n] = got = writes(run.base, n, run.repeat, hermes)
        for action in ACTIONS:
            ratio = got[action] / got["floor"]
            worst = max(worst, ratio)
            row = [str(n), action, ms(got["floor"]), ms(got[action]), f"{ratio:.2f}x"]
            rows.append([*row, "<= 1.40x", mark(ratio <= 1.4)])
    table(["entries", "action", "floor ms", "toolnexus ms", "/floor", "target", ""], rows)
    run.summary.append(
        ("memory writes <= 1.4x the write floor", f"worst {worst:.2f}x", worst <= 1.4)
    )

    print("\n2. Memory writes vs Hermes Agent 0.19 at 300 entries (Hermes ms / toolnexus ms)")
    name = "memory writes >= 2x faster than Hermes"
    got = figures[300]
    if "hermes add" not in got:
        print("  no Hermes venv: only the floor ratio above is reported")
        run.summary.append((name, "not measured (no Hermes)", None))
        return
    rows, least = [], float("inf")
    for action in ACTIONS:
        theirs, tool, store = (got[f"{side}{action}"] for side in ("hermes ", "tool ", ""))
        least = min(least, theirs / tool)
        row = [action, ms(theirs), ms(tool), ms(store), f"{theirs / tool:.2f}x"]
        rows.append([*row, f"{theirs / store:.2f}x", ">= 2x", mark(theirs / tool >= 2)])
    table(["action", "hermes ms", "tool ms", "store ms", "/tool", "/store", "target", ""], rows)
    print("  judged on /tool: toolnexus's memory tool, the model's path on both sides (/store:")
    print("  MemoryStore, as in 1). Hermes fsyncs the file but not the folder, and keeps no")
    print("  history; toolnexus does both.")
    run.summary.append((name, f"worst {least:.2f}x", least >= 2))


def section_sessions(run: Run, homes: dict[int, Path]) -> None:
    print(f"\n3. New session vs Hermes's snapshot build (median of {run.repeat} rounds)")
    rows = []
    for skills, home in homes.items():
        memory, user = bullets(home / "MEMORY.md"), bullets(home / "USER.md")
        hermes_home = seed_hermes(run.base / f"hermes-snapshot-{skills}", memory, user)
        got = sessions(home, run.repeat, run.hermes("snapshot", hermes_home))
        label = f"{skills} skills x 300 entries"
        for kind in ("warm", "cold"):
            row = [label, kind, ms(got[kind])]
            if "hermes" in got:
                ratio = got["hermes"] / got[kind]
                ok = ratio >= 12 if kind == "warm" else None
                row += [ms(got["hermes"]), f"{ratio:.1f}x", ">= 12x" if ok is not None else ""]
                row.append(mark(ok))
                run.summary.append(
                    (f"new session >= 12x Hermes ({label}, {kind})", f"{ratio:.1f}x", ok)
                )
            rows.append(row)
    table(["home", "session", "toolnexus ms", "hermes ms", "hermes/tn", "target", ""], rows)
    print("  warm: the same agent again, memos in place (a long-lived server): the target is")
    print("  judged on it. cold: every memo emptied first (a fresh process, imports aside).")
    if run.python is None:
        print("  no Hermes venv: the toolnexus figures alone")
        run.summary.append(("new session >= 12x Hermes", "not measured (no Hermes)", None))


def section_curve(run: Run, homes: dict[tuple[int, int], Path]) -> None:
    print("\n4. compose_soul cost per (skill + entry), relative to 50 x 300 (1.00 = linear)")
    points = {
        size: curve_point(home, max(5, run.repeat // (1 + size[0] // 50)))
        for size, home in homes.items()
    }
    base_cold, base_warm = (t / sum(BASE_SIZE) for t in points[BASE_SIZE])
    rows, worst = [], 0.0
    for size, (cold, warm) in points.items():
        units = sum(size)
        rel = (cold / units / base_cold, warm / units / base_warm)
        judged = units > sum(BASE_SIZE)
        worst = max(worst, *rel) if judged else worst
        row = [f"{size[0]} x {size[1]}", ms(cold), ms(warm), f"{cold / units * 1e6:.2f}"]
        row += [f"{warm / units * 1e6:.2f}", f"{rel[0]:.2f}", f"{rel[1]:.2f}"]
        rows.append([*row, "<= 2.00", mark(max(rel) <= 2)] if judged else row)
    header = ["skills x entries", "cold ms", "warm ms", "cold us/unit", "warm us/unit"]
    table([*header, "cold rel", "warm rel", "target", ""], rows)
    print("  judged above 50 x 300 (below it, fixed costs dominate the cost per unit)")
    run.summary.append(("compose cost linear (<= 2x per unit)", f"worst {worst:.2f}x", worst <= 2))


def section_rss(run: Run) -> None:
    print("\n5. Peak RSS of a fresh process composing the largest example home")
    homes = [p for p in (ROOT / "personas_example").iterdir() if p.is_dir()]
    example = max(homes, key=lambda h: sum(f.stat().st_size for f in h.rglob("*") if f.is_file()))
    cmd = [sys.executable, "-c", RSS_SCRIPT, str(example)]
    env = clean_env(PYTHONPATH=str(ROOT))
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    before, after = (float(x) for x in done.stdout.split())
    added, ok = after - before, after - before <= 5
    row = [example.name, f"{before:.1f}", f"{after:.1f}", f"{added:.2f}", "<= 5 MB", mark(ok)]
    table(["home", "after import MB", "after compose MB", "added MB", "target", ""], [row])
    run.summary.append(("composing adds <= 5 MB of RSS", f"{added:.2f} MB", ok))


def section_cli(run: Run) -> None:
    runs = 3 if run.quick else 15
    print(f"\n6. Cold start (bench/bench_cli.py --runs {runs}, its own table)")
    cli = [sys.executable, str(ROOT / "bench" / "bench_cli.py"), "--runs", str(runs)]
    done = subprocess.run(cli, capture_output=True, text=True, cwd=ROOT)
    print(textwrap.indent((done.stdout + done.stderr).rstrip(), "  "))
    name = "cold start (bench_cli's own targets)"
    if done.returncode:
        run.summary.append((name, f"bench_cli.py failed (exit {done.returncode})", False))
    else:
        run.summary.append((name, "see 6", None))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where to write (a real disk)")
    parser.add_argument("--repeat", type=int, default=None, help="rounds per figure (40; 8 quick)")
    parser.add_argument("--quick", action="store_true", help="fewer runs, smaller homes")
    parser.add_argument("--hermes-venv", type=Path, default=None, help="venv holding Hermes")
    parser.add_argument("--no-hermes", action="store_true", help="skip the Hermes comparisons")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-speed-", dir=args.dir))
    run = Run(base, args.repeat or (8 if args.quick else 40), args.quick, python=None)
    try:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; files in {base}")
        # Build the homes of 3 and 4 first, so they age past the racy window meanwhile.
        session_homes = {skills: build_home(base, skills, 300) for skills in (0, 20)}
        curve_homes = {
            size: build_home(base, *size) for size in (QUICK_CURVE if run.quick else CURVE)
        }
        aged_at = time.monotonic() + _memo.RACY_WINDOW_NS / 1e9 + 0.2
        if args.no_hermes:
            print("Hermes: skipped (--no-hermes)")
        else:
            venv = args.hermes_venv or Path(tempfile.gettempdir()) / "toolnexus-bench-hermes"
            run.python, note = hermes_python(venv, base)
            print(note)
            (base / "hermes_worker.py").write_text(HERMES_WORKER, encoding="utf-8")
        section_writes(run)
        time.sleep(max(0.0, aged_at - time.monotonic()))
        section_sessions(run, session_homes)
        section_curve(run, curve_homes)
        section_rss(run)
        section_cli(run)
    finally:
        for worker in run.workers:
            worker.close()
        shutil.rmtree(base, ignore_errors=True)
    print("\nSummary")
    table(["target", "figure", ""], [[t, f, mark(ok)] for t, f, ok in run.summary])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
