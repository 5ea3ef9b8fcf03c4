"""Cold start of the command line: `toolnexus soul`, `check`, `--help`, `--version`.

Each command runs in fresh processes; the runs of all commands are interleaved,
so a noisy machine slows them alike. Every median is compared with "the floor":
a bare interpreter that imports pydantic and PyYAML and validates one small
frozen model, the least any command that reads a home must do. Targets: `soul`
within 1.2x the floor; `--help` and `--version`, which build no model, within 1x.

    python bench/bench_cli.py [--runs 15] [--home personas_example/sre-oncall]
                              [--bytecode cached|source|both]

Two cases, both by default. "cached": bytecode is written and reused (into a
temporary PYTHONPYCACHEPREFIX, so the tree stays clean), as for any installed
package. "source": PYTHONDONTWRITEBYTECODE=1, as some sandboxes set it, so each
run compiles every toolnexus module its __pycache__ holds no fresh bytecode for,
while pydantic and PyYAML load their installed bytecode: the floor compiles
nothing, and toolnexus pays for every line it imports.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOOR = """\
import pydantic, yaml
class M(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True)
    name: str
M(name='x')
"""


def commands(home: str) -> list[tuple[str, list[str], float | None]]:
    """(label, command, target as a multiple of the floor) for each measured command."""
    py = sys.executable
    cli = [py, "-m", "toolnexus"]
    return [
        ("python -c pass", [py, "-c", "pass"], None),
        ("floor: pydantic + yaml + 1 model", [py, "-c", FLOOR], None),
        ("toolnexus soul <home>", [*cli, "soul", home], 1.2),
        ("toolnexus check <home>", [*cli, "check", home], 1.2),
        ("toolnexus --help", [*cli, "--help"], 1.0),
        ("toolnexus --version", [*cli, "--version"], 1.0),
    ]


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, str | None]:
    """Wall time of one run of `cmd`, and why it failed (None when it exited 0)."""
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    seconds = time.perf_counter() - start
    if done.returncode == 0:
        return seconds, None
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return seconds, f"failed (exit {done.returncode}): {last}"


def medians(cmds: list[list[str]], runs: int, env: dict[str, str]) -> list[float | str]:
    """Median wall time of each command; one untimed warm-up each, then interleaved runs.

    A command that fails is reported by its error's last line instead of a time.
    """
    failed: dict[int, str] = {}
    for k, cmd in enumerate(cmds):
        why = run(cmd, env)[1]
        if why is not None:
            failed[k] = why
    times: list[list[float]] = [[] for _ in cmds]
    for _ in range(runs):
        for k, cmd in enumerate(cmds):
            if k not in failed:
                seconds, why = run(cmd, env)
                times[k].append(seconds)
                if why is not None:
                    failed[k] = why
    return [failed.get(k) or statistics.median(t) for k, t in enumerate(times)]


def report(table: list[tuple[str, list[str], float | None]], found: list[float | str]) -> None:
    """One line per command: its median, its ratio to the floor, and its target."""
    floor = found[1]
    assert isinstance(floor, float), floor
    print(f"{'command':34} {'median ms':>10} {'x floor':>8} {'target':>8}")
    for (label, _, target), value in zip(table, found, strict=True):
        if isinstance(value, str):
            print(f"{label:34} {value}")
            continue
        goal = "" if target is None else f"<= {target:.1f}"
        mark = "" if target is None else ("  ok" if value <= target * floor else "  OVER")
        print(f"{label:34} {value * 1000:10.1f} {value / floor:8.2f} {goal:>8}{mark}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--home", default=str(ROOT / "personas_example" / "sre-oncall"))
    parser.add_argument("--bytecode", choices=["cached", "source", "both"], default="both")
    args = parser.parse_args()

    table = commands(args.home)
    cmds = [cmd for _, cmd, _ in table]
    with tempfile.TemporaryDirectory(prefix="bench-cli-pycache-") as prefix:
        cases = {
            "cached": {
                **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                "PYTHONPYCACHEPREFIX": prefix,
            },
            "source": {
                **{k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"},
                "PYTHONDONTWRITEBYTECODE": "1",
            },
        }
        for case in ("cached", "source") if args.bytecode == "both" else (args.bytecode,):
            found = medians(cmds, args.runs, cases[case])
            print(f"cold start, bytecode {case}: median of {args.runs} interleaved runs")
            report(table, found)
            print()


if __name__ == "__main__":
    main()
