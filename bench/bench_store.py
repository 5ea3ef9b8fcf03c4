"""Benchmark the PostgreSQL store against the folder: memory writes per second with 1 and
16 writer processes, and a zero-lost-entries check for each.

Run: `python bench/bench_store.py [--writes N] [--dsn postgresql://...]`. Without
`--dsn` it starts a throwaway PostgreSQL server on loopback (the test suite's,
fsync on, as in production; as root it runs as an unprivileged user), so it
needs the server binaries. The folder is measured in the system's temp dir.
Figures are medians of `--repeat` runs, and ratios to the folder store.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

WRITERS = (1, 16)

WRITER = textwrap.dedent(
    """
    import sys
    from toolnexus.memory._tool import MemoryStore

    home, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = MemoryStore(home, "self", limit=10_000_000)
    store.add(f"{prefix} warms up")  # connect, compile, claim: not what is measured
    print("ready", flush=True)
    sys.stdin.readline()
    for k in range(count):
        store.add(f"{prefix} wrote note number {k}")
    print("done", flush=True)
    """
)


def make_home(root: Path, dsn: str | None, key: str | None = None) -> Path:
    root.mkdir(parents=True)
    store = f"store: {dsn}\n" if dsn else ""
    store += f"store_key: {key}\n" if key else ""
    (root / "IDENTITY.md").write_text(
        f"---\nname: bench\n{store}memory_limits: {{self: 10000000}}\n---\nA benchmark.\n",
        encoding="utf-8",
    )
    return root


def run(home: Path, writers: int, writes: int) -> float:
    """Writes per second with `writers` processes adding `writes` entries each, all
    released at once; checks every entry landed."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), f"w{n}", str(writes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(writers)
    ]
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
    start = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "done\n"
    elapsed = time.perf_counter() - start
    for proc in procs:
        proc.communicate()
        assert proc.returncode == 0
    from toolnexus.agents import compose_soul

    entries = set(compose_soul(home).memory_entries)
    missing = [
        f"w{n} wrote note number {k}"
        for n in range(writers)
        for k in range(writes)
        if f"w{n} wrote note number {k}" not in entries
    ]
    assert not missing, f"lost {len(missing)} entries, e.g. {missing[0]}"
    return writers * writes / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=40, help="entries per writer")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--dsn", help="a PostgreSQL database to use (PGPASSWORD set)")
    args = parser.parse_args()
    server = None
    dsn = args.dsn
    if dsn is None:
        from _pgserver import PgServer, find_bindir

        bindir = find_bindir()
        if bindir is None:
            sys.exit("bench_store: no PostgreSQL server binaries (pg_ctl, initdb); try --dsn")
        server = PgServer(bindir, durable=True)
        server.start()
        os.environ["PGPASSWORD"] = server.password
    try:
        print(f"memory writes per second, {args.writes} per writer, median of {args.repeat}")
        print(f"{'writers':>8} {'folder':>10} {'postgres':>10} {'ratio':>8}")
        for writers in WRITERS:
            figures: dict[str, list[float]] = {"folder": [], "postgres": []}
            for n in range(args.repeat):
                with tempfile.TemporaryDirectory() as tmp:
                    figures["folder"].append(
                        run(make_home(Path(tmp) / "h", None), writers, args.writes)
                    )
                    key = None
                    if server is not None:
                        server.create_database(f"bench_{writers}_{n}")
                        target = server.dsn(f"bench_{writers}_{n}")
                    else:
                        # a given database is shared by runs: a key per run keeps them apart
                        target, key = dsn, f"bench-{os.getpid()}-{writers}-{n}"
                    home = make_home(Path(tmp) / "p", target, key)
                    figures["postgres"].append(run(home, writers, args.writes))
            folder = statistics.median(figures["folder"])
            postgres = statistics.median(figures["postgres"])
            print(f"{writers:>8} {folder:>10.0f} {postgres:>10.0f} {postgres / folder:>7.2f}x")
    finally:
        if server is not None:
            server.close()


if __name__ == "__main__":
    main()
