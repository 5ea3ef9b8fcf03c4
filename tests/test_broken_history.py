"""A history that cannot be used never makes the person's notes unwritable (SPEC §10).

Each way `.toolnexus/state.db` can be broken is made for real, then the command
line writes a note: the note lands, the result says it is not recorded, nothing
is written through a link, and `toolnexus check` names the problem and its repair.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from _unprivileged import NOBODY, as_nobody, reachable_base
from test_cli import run

from toolnexus.agents import memory_tool
from toolnexus.store import configured_store
from toolnexus.store.folder import _state
from toolnexus.store.folder._state import DB_NAME, STATE_DIR, unusable


def real_history(home: Path) -> Path:
    """A history made by a first write, closed as a finished process leaves it."""
    assert run("memory", home, "add", "first").returncode == 0
    return home / STATE_DIR / DB_NAME


def cut_short(home: Path, outside: Path) -> None:
    db = real_history(home)
    db.write_bytes(db.read_bytes()[:1500])


def garbage(home: Path, outside: Path) -> None:
    (home / STATE_DIR).mkdir()
    (home / STATE_DIR / DB_NAME).write_bytes(b"not sqlite at all " * 200)


def a_folder(home: Path, outside: Path) -> None:
    (home / STATE_DIR / DB_NAME).mkdir(parents=True)


def a_link_out(home: Path, outside: Path) -> None:
    (home / STATE_DIR).mkdir()
    (home / STATE_DIR / DB_NAME).symlink_to(outside / "theirs.db")


def state_folder_a_link(home: Path, outside: Path) -> None:
    (home / STATE_DIR).symlink_to(outside)


def state_folder_a_file(home: Path, outside: Path) -> None:
    (home / STATE_DIR).write_text("a file", encoding="utf-8")


def a_linked_wal(home: Path, outside: Path) -> None:
    db = real_history(home)
    db.with_name(f"{DB_NAME}-wal").unlink(missing_ok=True)
    db.with_name(f"{DB_NAME}-wal").symlink_to(outside / "theirs.db")


BREAKS: dict[str, Callable[[Path, Path], None]] = {
    "cut-short": cut_short,
    "garbage": garbage,
    "a-folder": a_folder,
    "a-link-out": a_link_out,
    "state-folder-a-link": state_folder_a_link,
    "state-folder-a-file": state_folder_a_file,
    "a-linked-wal": a_linked_wal,
}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("broken", BREAKS)
def test_the_note_lands_unrecorded_and_check_names_the_repair(
    home: Path, tmp_path: Path, broken: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs.db").write_bytes(b"someone else's file")
    BREAKS[broken](home, outside)
    before = snapshot(outside)

    done = run("memory", home, "add", "a note")
    assert done.returncode == 0, done.stderr
    assert "not recorded in the history" in done.stdout
    assert "- a note" in (home / "MEMORY.md").read_text(encoding="utf-8")
    assert snapshot(outside) == before  # nothing written through a link

    checked = run("check", home)
    assert checked.returncode == 1
    [problem] = [line for line in checked.stdout.splitlines() if "history:" in line]
    assert "repair:" in problem


def test_a_repaired_history_records_again(home: Path) -> None:
    garbage(home, home)
    assert "not recorded" in run("memory", home, "add", "one").stdout
    db = home / STATE_DIR / DB_NAME
    db.rename(db.with_name(f"{DB_NAME}.damaged"))  # the repair check names
    assert run("check", home).returncode == 0
    again = run("memory", home, "add", "two")
    assert "not recorded" not in again.stdout
    log = run("memory", home, "log").stdout
    assert "outside-edit" in log  # the unrecorded note is found as the file stood
    assert "add" in log


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_a_history_the_user_cannot_read() -> None:
    home = reachable_base() / f"toolnexus-unreadable-{os.getpid()}"
    home.mkdir()
    try:
        (home / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
        real_history(home)
        for path in (home, *home.rglob("*")):
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        # Warm up as root: what the code imports lazily is then loaded (the unprivileged
        # user may not read the interpreter's files); then close what that opened.
        memory_tool(home).execute_sync({"action": "remove", "text": "missing"})
        configured_store(home).health()
        for key in list(_state._open):
            _state._close(key)
        (home / STATE_DIR / DB_NAME).chmod(0)
        with as_nobody():
            result = memory_tool(home).execute_sync({"action": "add", "text": "a note"})
            problems = configured_store(home).health()
        assert not result.is_error, result.output
        assert "not recorded in the history" in result.output
        assert "- a note" in (home / "MEMORY.md").read_text(encoding="utf-8")
        [problem] = problems
        assert "repair:" in problem
    finally:
        shutil.rmtree(home)


def test_a_full_disk_is_named_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / DB_NAME
    full = sqlite3.OperationalError("database or disk is full")
    assert "the disk is full" in str(unusable(db, full))
    io_error = sqlite3.OperationalError("disk I/O error")
    assert "the disk is full" not in str(unusable(db, io_error))  # this disk has room
    monkeypatch.setattr(
        _state.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9, 0)
    )
    assert "the disk is full" in str(unusable(db, io_error))
