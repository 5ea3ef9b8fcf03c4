"""The write lock as callers meet it: a cancelled call never writes, and the lock file is
never followed and never wider than the file it guards (SPEC §3, §6)."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _unprivileged import NOBODY, reachable_base
from _waits import DEADLINE, finishes, holds_open, wait_until

from toolnexus.errors import MemoryEditError
from toolnexus.home import _writer as _store
from toolnexus.memory import MemoryStore, memory_tool
from toolnexus.memory._tool import Op

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()  # hold until told
"""


@contextmanager
def lock_held_elsewhere(path: Path) -> Iterator[subprocess.Popen[str]]:
    """Hold `flock` on `path` from another process, as a person's script could."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, os.fspath(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline() == "held\n"
            yield holder
        finally:
            if holder.poll() is None:
                holder.kill()


def release(holder: subprocess.Popen[str]) -> None:
    """Let the holder go, and wait until it has (its lock is free once it exits)."""
    assert holder.stdin is not None
    holder.stdin.write("go\n")
    holder.stdin.flush()
    holder.wait(DEADLINE)


# -- cancellation -------------------------------------------------------------------


def test_a_call_cancelled_while_waiting_for_the_lock_never_writes(tmp_path: Path) -> None:
    memory = memory_tool(tmp_path)

    async def script() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(memory.execute({"action": "add", "text": "cancelled note"}), 0.3)

    with lock_held_elsewhere(tmp_path / ".MEMORY.md.lock") as holder:
        # It returns while the lock is still held elsewhere: the wait let go. asyncio.run
        # joins the worker threads as it ends, so nothing of the call can run after it.
        finishes(lambda: asyncio.run(script()), what="a cancelled call")
        release(holder)
    assert not (tmp_path / "MEMORY.md").exists()
    assert sorted(os.listdir(tmp_path)) == [".MEMORY.md.lock"]  # no temp file left either
    # The lock was let go: the next call takes it.
    result = finishes(
        lambda: asyncio.run(memory.execute({"action": "add", "text": "next note"})),
        what="the call after the release",
    )
    assert not result.is_error, result.output
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == "- next note\n"


def test_asyncio_run_returns_while_the_lock_is_still_held(tmp_path: Path) -> None:
    # The same script in its own process, as a person runs it: asyncio.run waits for the
    # worker thread at exit, so a thread stuck on the lock would keep the process alive.
    script = (
        "import asyncio, sys\n"
        "from toolnexus.agents import memory_tool\n"
        "memory = memory_tool(sys.argv[1])\n"
        "async def main():\n"
        "    try:\n"
        "        await asyncio.wait_for(memory.execute("
        "{'action': 'add', 'text': 'cancelled note'}), 0.3)\n"
        "    except TimeoutError:\n"
        "        print('timed out', flush=True)\n"
        "asyncio.run(main())\n"
        "print('done', flush=True)\n"
    )
    with (
        lock_held_elsewhere(tmp_path / ".MEMORY.md.lock") as holder,
        subprocess.Popen(
            [sys.executable, "-c", script, os.fspath(tmp_path)], stdout=subprocess.PIPE, text=True
        ) as proc,
    ):
        assert proc.stdout is not None
        assert proc.stdout.readline() == "timed out\n"
        # The process ends although the lock is still held: its wait was let go.
        out = proc.stdout.read()
        assert proc.wait(DEADLINE) == 0
        release(holder)
    assert out == "done\n"
    assert not (tmp_path / "MEMORY.md").exists()


async def test_a_cancelled_wait_on_a_lock_held_in_this_process_lets_go(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- kept\n", encoding="utf-8")
    memory = memory_tool(tmp_path)
    holding, done = threading.Event(), threading.Event()
    folder = _store.Folder(os.fspath(tmp_path), os.open(tmp_path, os.O_RDONLY))

    def hold() -> None:
        with _store.locked(folder, "MEMORY.md"):  # the thread lock and the flock
            holding.set()
            done.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(memory.execute({"action": "remove", "text": "kept"}), 0.2)
    finally:
        done.set()
        holder.join(10)
        folder.close()
    # Wait for the cancelled call's worker thread to end: whatever it would write is
    # written by then.
    await asyncio.get_running_loop().shutdown_default_executor()
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == "- kept\n"


def test_a_store_call_given_up_before_it_starts_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- kept\n", encoding="utf-8")
    cancel = threading.Event()
    cancel.set()
    store = MemoryStore(tmp_path, "self", limit=100)
    with pytest.raises(MemoryEditError) as info:
        store.apply([Op("add", "never")], cancel=cancel)
    assert info.value.kind == "cancelled"
    assert info.value.message == (
        "cancelled: the call was given up before anything was written to MEMORY.md. "
        "Nothing written."
    )
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == "- kept\n"
    assert sorted(os.listdir(tmp_path)) == [".MEMORY.md.lock", "MEMORY.md"]


# -- the lock file ---------------------------------------------------------------------


async def test_a_link_at_the_lock_path_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    home, outside = tmp_path / "home", tmp_path / "outside"
    home.mkdir()
    outside.mkdir()
    (home / ".MEMORY.md.lock").symlink_to(outside / "planted.lock")  # dangling, pointing out
    result = await memory_tool(home).execute({"action": "add", "text": "a note"})
    assert result.is_error
    assert result.output == (
        f"cannot write MEMORY.md: its lock file {home / '.MEMORY.md.lock'} is a link, and a "
        "lock file is never followed; a person must remove that link. Nothing written."
    )
    assert os.listdir(outside) == []
    assert not (home / "MEMORY.md").exists()


async def test_a_link_to_a_file_inside_the_home_is_refused_too(tmp_path: Path) -> None:
    (tmp_path / "other.lock").write_text("", encoding="utf-8")
    (tmp_path / ".MEMORY.md.lock").symlink_to(tmp_path / "other.lock")
    result = await memory_tool(tmp_path).execute({"action": "add", "text": "a note"})
    assert result.is_error
    assert "is a link, and a lock file is never followed" in result.output


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644])
async def test_a_new_lock_takes_the_guarded_files_mode(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("- kept\n", encoding="utf-8")
    path.chmod(mode)
    old = os.umask(0o002)  # a umask that would otherwise give 0664
    try:
        result = await memory_tool(tmp_path).execute({"action": "add", "text": "new"})
    finally:
        os.umask(old)
    assert not result.is_error, result.output
    assert stat.S_IMODE(os.stat(tmp_path / ".MEMORY.md.lock").st_mode) == mode
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


async def test_an_existing_lock_is_left_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- kept\n", encoding="utf-8")
    (tmp_path / "MEMORY.md").chmod(0o600)
    lock = tmp_path / ".MEMORY.md.lock"
    lock.write_text("", encoding="utf-8")
    lock.chmod(0o664)
    before = os.stat(lock)
    result = await memory_tool(tmp_path).execute({"action": "add", "text": "new"})
    assert not result.is_error
    after = os.stat(lock)
    assert (after.st_ino, stat.S_IMODE(after.st_mode)) == (before.st_ino, 0o664)


def test_a_lock_made_beside_a_read_only_file_still_works_once_it_is_writable() -> None:
    # The lock takes the file's mode (0444 here); once a person makes the file writable
    # again, its owner can still open that lock. Run as an ordinary user: root opens anything.
    with tempfile.TemporaryDirectory(dir=reachable_base()) as tmp:
        home = Path(tmp)
        home.chmod(0o755)
        path = home / "MEMORY.md"
        path.write_text("- kept\n", encoding="utf-8")
        path.chmod(0o444)
        store = MemoryStore(home, "self", limit=100)
        with pytest.raises(MemoryEditError, match="read-only"):
            store.add("new")
        assert stat.S_IMODE(os.stat(home / ".MEMORY.md.lock").st_mode) == 0o444
        path.chmod(0o644)
        if os.geteuid() != 0:
            store.add("new")
        else:
            for p in (home, path, home / ".MEMORY.md.lock"):
                os.chown(p, NOBODY, NOBODY)
            with tempfile.TemporaryDirectory() as warm:  # lazy imports, while they are readable
                (Path(warm) / "MEMORY.md").write_text("- a\n", encoding="utf-8")
                MemoryStore(Path(warm), "self", limit=100).add("b")
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child reports through its exit code
                code = 1
                try:
                    os.setgid(NOBODY)
                    os.setuid(NOBODY)
                    store.add("new")
                    code = 0
                except BaseException as exc:
                    print(f"child: {exc!r}", file=sys.stderr)
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0
        assert path.read_text(encoding="utf-8") == "- kept\n- new\n"


def test_a_lock_swapped_for_a_link_while_waiting_is_refused_cleanly(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- a\n", encoding="utf-8")
    lock = tmp_path / ".MEMORY.md.lock"
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    with lock_held_elsewhere(lock) as holder:
        waiting = threading.Thread(
            target=lambda: results.append(
                asyncio.run(memory_tool(tmp_path).execute({"action": "add", "text": "note"}))
            )
        )
        results: list = []
        waiting.start()
        wait_until(lambda: holds_open(os.getpid(), lock), what="the writer to open the lock")
        os.rename(lock, tmp_path / "old.lock")
        lock.symlink_to(outside)
        release(holder)
        waiting.join(10)
    [result] = results
    assert result.is_error
    assert result.exception is None
    assert result.output == (
        f"cannot write MEMORY.md: its lock file {lock} is a link, and a lock file is never "
        "followed; a person must remove that link. Nothing written."
    )
    assert not outside.exists()
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == "- a\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can write a home it does not own")
def test_a_lock_root_makes_in_a_persons_home_is_theirs() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "MEMORY.md").write_text("- a\n", encoding="utf-8")
        for p in (home, home / "MEMORY.md"):
            os.chown(p, NOBODY, NOBODY)
        MemoryStore(home, "self", limit=100).add("root wrote this")
        lock = os.stat(home / ".MEMORY.md.lock")
        assert (lock.st_uid, lock.st_gid) == (NOBODY, NOBODY)
        assert os.stat(home / "MEMORY.md").st_uid == NOBODY
