"""Durability under real concurrency: processes, a SIGKILLed writer, threads, asyncio tasks."""

from __future__ import annotations

import asyncio
import fcntl
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from toolnexus.agents import Home
from toolnexus.home import _writer as _store
from toolnexus.home._door import Door
from toolnexus.memory import MemoryStore, memory_tool, parse_memory

ROOT = Path(__file__).resolve().parent.parent

# A writer process: adds `count` entries "<prefix>-<k>" and prints each acknowledged one.
WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from toolnexus.memory import MemoryStore

    folder, prefix, count, fsync = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    store = MemoryStore(Path(folder), "self", limit=10_000_000, fsync=fsync == "1")
    print("ready", flush=True)
    sys.stdin.readline()  # wait for "go", so all writers start together
    for k in range(count):
        store.add(f"{prefix}-{k}")
        print(f"{prefix}-{k}", flush=True)
    """
)


def writer_env() -> dict[str, str]:
    """The environment of a writer process: this checkout's package first on the path."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }


def spawn_writer(folder: Path, prefix: str, count: int, *, fsync: bool) -> subprocess.Popen[str]:
    env = writer_env()
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), prefix, str(count), "1" if fsync else "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    return proc


def entries(folder: Path) -> list[str]:
    return list(parse_memory((folder / "MEMORY.md").read_text(encoding="utf-8")).entries)


def leftovers(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name not in ("MEMORY.md", ".toolnexus"))


@pytest.mark.slow
def test_processes_adding_at_once_lose_nothing(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Shared notes\n\nWritten by hand.\n", encoding="utf-8")
    # Half the writers sync like memory_tool does, half skip it (faster): both are exact.
    writers = [spawn_writer(tmp_path, f"w{i}", 40, fsync=i % 2 == 0) for i in range(6)]
    for proc in writers:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in writers:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        assert len(out.split()) == 40

    found = entries(tmp_path)
    expected = {f"w{i}-{k}" for i in range(6) for k in range(40)}
    assert len(found) == len(expected)
    assert set(found) == expected
    for i in range(6):  # each writer's entries land in the order it wrote them
        mine = [e for e in found if e.startswith(f"w{i}-")]
        assert mine == [f"w{i}-{k}" for k in range(40)]
    assert (
        (tmp_path / "MEMORY.md")
        .read_text(encoding="utf-8")
        .startswith("# Shared notes\n\nWritten by hand.\n- w")
    )
    assert leftovers(tmp_path) == [".MEMORY.md.lock"]


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(3))
def test_sigkilled_writer_loses_no_acknowledged_write(tmp_path: Path, round_: int) -> None:
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    proc = spawn_writer(tmp_path, "e", 100_000, fsync=True)
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write("go\n")
    proc.stdin.close()
    acked: list[str] = []
    for _ in range(rng.randint(3, 80)):
        acked.append(proc.stdout.readline().strip())
    time.sleep(rng.uniform(0, 0.01))  # land the kill anywhere in the next add
    proc.send_signal(signal.SIGKILL)
    acked += proc.stdout.read().split()  # acknowledged before the kill, read late
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL

    found = entries(tmp_path)
    note = f"seed={seed} acked={len(acked)} found={len(found)}"
    assert found[: len(acked)] == acked, note
    # At most the one add in flight when the kill came, and it is whole.
    assert found in (acked, [*acked, f"e-{len(acked)}"]), note
    # Only the lock file and possibly a hidden temp file of the killed write remain.
    rest = leftovers(tmp_path)
    assert all(n == ".MEMORY.md.lock" or n.startswith(".MEMORY.md.") for n in rest), rest
    assert all(n.endswith((".lock", ".tmp")) for n in rest), rest

    # The next writer is not confused and sweeps the stale temp file away.
    MemoryStore(tmp_path, "self", limit=10_000_000).add("after the crash")
    assert entries(tmp_path)[-1] == "after the crash"
    assert leftovers(tmp_path) == [".MEMORY.md.lock"]


def test_threads_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    def write(i: int) -> None:
        store = MemoryStore(tmp_path, "user", limit=10_000_000, fsync=False)
        for k in range(25):
            store.add(f"t{i}-{k}")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, range(8)))
    found = parse_memory((tmp_path / "USER.md").read_text(encoding="utf-8")).entries
    assert sorted(found) == sorted(f"t{i}-{k}" for i in range(8) for k in range(25))


def test_threads_mixing_adds_and_removes(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, "self", limit=10_000_000, fsync=False)
    for k in range(40):
        store.add(f"old-{k}")

    def work(i: int) -> None:
        for k in range(i, 40, 4):
            store.remove(f"old-{k}")
            store.add(f"new-{k}")

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(work, range(4)))
    assert sorted(Home(store.dir).memory().entries) == sorted(f"new-{k}" for k in range(40))


async def test_asyncio_gather_of_many_adds_loses_nothing(tmp_path: Path) -> None:
    tool = memory_tool(tmp_path, limits={"self": 10**6})
    results = await asyncio.gather(
        *(tool.execute({"action": "add", "text": f"note {k}"}) for k in range(120))
    )
    assert [r.is_error for r in results] == [False] * 120
    assert sorted(entries(tmp_path)) == sorted(f"note {k}" for k in range(120))
    assert leftovers(tmp_path) == [".MEMORY.md.lock"]


# A writer that stops after computing its new file, until told "go" on stdin.
PAUSED_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import toolnexus.home._writer as store
    import toolnexus.memory._tool as memory

    real = store._write_temp

    def paused(*args, **kwargs):
        print("computed", flush=True)
        sys.stdin.readline()
        return real(*args, **kwargs)

    store._write_temp = paused
    print(memory.MemoryStore(Path(sys.argv[1]), "self", limit=10**6).add("entry from A"))
    """
)


@pytest.mark.slow
def test_deleting_the_lock_file_while_held_loses_nothing(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", PAUSED_WRITER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stdout.readline() == "computed\n"  # A holds the lock, its text is ready
    os.unlink(tmp_path / ".MEMORY.md.lock")  # someone tidies hidden files
    # B locks a new lock file and writes; A must notice and redo its edit from disk.
    MemoryStore(tmp_path, "self", limit=10**6).add("entry from B")
    out, _ = proc.communicate("go\ngo\n", timeout=60)
    assert proc.returncode == 0, out
    assert out.rstrip().endswith("characters used.")
    assert entries(tmp_path) == ["entry from B", "entry from A"]
    assert leftovers(tmp_path) == [".MEMORY.md.lock"]


def test_a_fork_during_a_write_does_not_keep_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    inside, release = threading.Event(), threading.Event()

    folder, name = _store.Folder.of(Door(tmp_path), str(path))

    def hold() -> None:
        with _store.locked(folder, name):
            inside.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    inside.wait()
    read_end, write_end = os.pipe()
    ready_read, ready_write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads running
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: say it is up, wait for the parent, leave
        os.close(write_end)
        os.write(ready_write, b"r")
        os.read(read_end, 1)
        os._exit(0)
    os.close(read_end)
    os.close(ready_write)
    try:
        assert os.read(ready_read, 1) == b"r"  # fork handlers have run in the child
        os.close(ready_read)
        release.set()
        holder.join()
        # The child is still alive; the lock must be free all the same.
        fd = os.open(tmp_path / ".MEMORY.md.lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    finally:
        os.close(write_end)
        os.waitpid(pid, 0)
        folder.close()
