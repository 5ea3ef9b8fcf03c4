"""Cold start of the command line: `toolnexus soul <example home>` in fresh processes.

Prints the median wall time over several runs and its ratio to a bare
`python -c pass`, so the figure means something on any machine.

    python bench/bench_cli.py [--runs 15] [--home personas_example/sre-oncall]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def median_seconds(cmd: list[str], runs: int) -> float:
    """Median wall time of `cmd`, after one untimed warm-up run (disk cache)."""
    subprocess.run(cmd, check=True, capture_output=True)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--home", default=str(ROOT / "personas_example" / "sre-oncall"))
    args = parser.parse_args()

    python = median_seconds([sys.executable, "-c", "pass"], args.runs)
    imports = median_seconds([sys.executable, "-c", "import toolnexus"], args.runs)
    soul = median_seconds([sys.executable, "-m", "toolnexus", "soul", args.home], args.runs)
    check = median_seconds([sys.executable, "-m", "toolnexus", "check", args.home], args.runs)
    print(f"cold start, median of {args.runs} runs")
    print(f"{'command':34} {'median ms':>10} {'x python':>9}")
    for label, value in [
        ("python -c pass", python),
        ("python -c 'import toolnexus'", imports),
        ("toolnexus soul <home>", soul),
        ("toolnexus check <home>", check),
    ]:
        print(f"{label:34} {value * 1000:10.1f} {value / python:9.1f}")


if __name__ == "__main__":
    main()
