"""The history under real processes: many writers at once, and writers SIGKILLed mid-write."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_memory_concurrency import spawn_writer, writer_env

from toolnexus.agents import Home
from toolnexus.memory import parse_memory
from toolnexus.store.folder._changes import state_bytes
from toolnexus.store.folder._state import open_state


@pytest.mark.slow
def test_eight_processes_writing_at_once_make_exactly_one_record_per_write(
    tmp_path: Path,
) -> None:
    (tmp_path / "MEMORY.md").write_text("# Shared notes\n", encoding="utf-8")
    procs = [spawn_writer(tmp_path, f"w{i}", 25, fsync=True) for i in range(8)]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    acked: list[str] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0
        acked += out.split()
    assert len(acked) == 200

    log = list(reversed(Home(tmp_path).history()))
    adds = [c.after for c in log if c.action == "add"]
    assert sorted(adds) == sorted(acked)  # exactly one record per acknowledged write
    assert [c.action for c in log] == ["outside-edit"] + ["add"] * 200  # the header, first seen
    assert {c.source for c in log[1:]} == {"python"}
    # The file and the history agree.
    _assert_agree(tmp_path)


def _assert_agree(home: Path) -> None:
    """The newest record's version of the file is the file on disk, byte for byte."""
    data = (home / "MEMORY.md").read_bytes()
    state = open_state(home, create=False)
    assert state is not None
    with state.reading() as conn:
        (digest,) = conn.execute(
            "SELECT digest FROM memory_changes WHERE target = 'self' ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert digest == hashlib.sha256(data).hexdigest()
    assert state_bytes(state, digest) == data


# A zygote: imports toolnexus once (and compiles the scanner's rules), then forks writers
# and SIGKILLs each at a random moment.
# Each writer appends every acknowledged entry to the ack file (one write: whole lines),
# then tells the zygote through a pipe. The zygote waits for a random number of those
# (none to two), then kills the writer a random share of the way through its next write,
# as long as the last write took: on a loaded machine as on an idle one, the kills land
# inside writes, and most writers get some done.
ZYGOTE = textwrap.dedent(
    """
    import os, random, signal, sys, time
    from pathlib import Path
    from toolnexus.scanner._engine import rules
    from toolnexus.memory import MemoryStore

    for rule in rules():
        rule.pattern  # compiled before forking, as in a long-lived writer
    home, acks, kills, seed = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    ack = os.open(acks, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    took = 0.02  # how long the last write took, fork to acknowledgement at first
    for k in range(seed % 100000 * 1000, seed % 100000 * 1000 + kills):
        done, told = os.pipe()
        last = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.close(done)
            store = MemoryStore(home, "self", limit=10_000_000)
            i = 0
            while True:
                text = f"k{k}-{i}"
                store.add(text)
                os.write(ack, (text + "\\n").encode())
                os.write(told, b".")
                i += 1
        os.close(told)
        for _ in range(rng.randrange(3)):
            os.read(done, 1)  # waits for the writer's next acknowledged write
            now = time.monotonic()
            took, last = now - last, now
        time.sleep(rng.uniform(0.0, 1.2 * took))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(done)
    print("done", flush=True)
    """
)


@pytest.mark.slow
def test_writers_killed_at_random_moments_lose_nothing_acknowledged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "MEMORY.md").write_text("# Notes\n", encoding="utf-8")
    acks = tmp_path / "acks"
    seeds: list[int] = []
    acked: list[str] = []
    # Enough acknowledged writes to mean something (a round makes about 220); should a
    # round make too few, more rounds follow.
    while len(acked) <= 40 and len(seeds) < 6:
        seeds.append(random.randrange(2**32))
        out = subprocess.run(
            [sys.executable, "-c", ZYGOTE, str(home), str(acks), "220", str(seeds[-1])],
            capture_output=True,
            text=True,
            env=writer_env(),
            timeout=600,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        acked = acks.read_text(encoding="utf-8").split() if acks.exists() else []
    note = f"seeds={seeds} acked={len(acked)}"
    assert len(acked) > 40, note

    # The next run: reading the log records whatever a killed writer left unrecorded.
    log = list(reversed(Home(home).history()))
    text = (home / "MEMORY.md").read_text(encoding="utf-8")
    entries = set(parse_memory(text).entries)
    missing = [e for e in acked if e not in entries]
    assert missing == [], note
    _assert_agree(home)
    # Every entry in the file is accounted for by the history: its add record, or an
    # outside edit (a writer killed between its write and its record) that holds it.
    added = [c.after for c in log if c.action == "add"]
    assert len(added) == len(set(added)), note  # never recorded twice
    found = set(added)
    for c in log:
        if c.action == "outside-edit" and c.after is not None:
            found |= set(parse_memory(c.after).entries)
    assert entries <= found, note
    assert all(c.action in ("add", "outside-edit") for c in log), note
