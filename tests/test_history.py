"""Memory history: every change recorded with exact fields, outside edits found, undo,
restore, forget, compact, and a state folder that only writes create."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest

from toolnexus.agents import Agent, Home, compose_soul, from_dir, memory_tool
from toolnexus.agents.models import AssistantMessage, ScriptedModel, ToolCall
from toolnexus.errors import HistoryError, MemoryEditError
from toolnexus.memory import History, MemoryStore
from toolnexus.store.folder._state import DB_NAME, MIGRATIONS, STATE_DIR
from toolnexus.tools import CallContext, calling

FIELDS = ["id", "time", "target", "action", "before", "after", "source"]


def run(home: Path, **args: Any) -> str:
    result = asyncio.run(memory_tool(home).execute(args))
    assert not result.is_error, result.output
    return result.output


def records(home: Path, target: str | None = "self") -> list[dict[str, Any]]:
    """The history, oldest first, as `log --json` gives each record."""
    return [json.loads(c.to_json()) for c in reversed(Home(home).history(target))]


def memory(home: Path) -> str:
    return (home / "MEMORY.md").read_text(encoding="utf-8")


def db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / STATE_DIR / DB_NAME)


# -- what is recorded ------------------------------------------------------------------


def test_each_action_is_recorded_with_exact_fields(home: Path) -> None:
    run(home, action="add", text="Weekly update goes out on Fridays at 4pm")
    run(home, action="replace", text="Fridays at 4pm", **{"with": "Mondays at 9am"})
    run(home, action="add", text="line one\n- not a second entry", target="self")
    run(home, action="remove", text="line one")
    got = records(home)
    assert [list(r) for r in got] == [FIELDS] * 4
    assert [r["id"] for r in got] == sorted(r["id"] for r in got)
    assert [(r["target"], r["action"], r["before"], r["after"], r["source"]) for r in got] == [
        ("self", "add", None, "Weekly update goes out on Fridays at 4pm", "tool"),
        (
            "self",
            "replace",
            "Weekly update goes out on Fridays at 4pm",
            "Weekly update goes out on Mondays at 9am",
            "tool",
        ),
        # The entry's text as the tool's `text` gives it: no marker, no indent.
        ("self", "add", None, "line one\n- not a second entry", "tool"),
        ("self", "remove", "line one\n- not a second entry", None, "tool"),
    ]
    for r in got:
        assert r["time"].endswith("Z")  # UTC, ISO 8601
        assert r["time"][10] == "T"
    assert compose_soul(home).text.count("Mondays at 9am") == 1  # history is not in the soul
    assert "Fridays" not in compose_soul(home).text


def test_the_user_file_has_its_own_history(home: Path) -> None:
    run(home, action="add", text="prefers tea", target="user")
    assert records(home, "self") == []
    assert [(r["target"], r["after"]) for r in records(home, "user")] == [("user", "prefers tea")]
    assert [r["target"] for r in records(home, None)] == ["user"]


def test_a_session_names_itself_and_the_call_and_a_batch_is_one_record_per_item(
    home: Path,
) -> None:
    batch = [{"action": "add", "text": "a"}, {"action": "add", "text": "b"}]
    model = ScriptedModel(
        [
            AssistantMessage(
                tool_calls=(
                    ToolCall("memory", {"action": "add", "text": "one"}, id="call_1"),
                    ToolCall("memory", {"operations": batch}, id="call_2"),
                )
            ),
            "done",
        ]
    )
    session = from_dir(home, model=model).session()
    assert asyncio.run(session.send("remember")) == "done"
    got = records(home)
    assert [(r["action"], r["after"], r["source"]) for r in got] == [
        ("add", "one", f"tool session={session.id} call=call_1"),
        ("add", "a", f"tool session={session.id} call=call_2"),
        ("add", "b", f"tool session={session.id} call=call_2"),
    ]
    assert got[1]["time"] == got[2]["time"]  # one batch, one moment


def test_a_write_that_changes_nothing_records_nothing(home: Path) -> None:
    run(home, action="add", text="x")
    run(home, action="add", text="x")  # a duplicate: nothing written
    run(home, operations=[{"action": "add", "text": "y"}, {"action": "remove", "text": "y"}])
    assert len(records(home)) == 1


def test_an_outside_edit_is_recorded_whole_before_the_next_write_lands(home: Path) -> None:
    run(home, action="add", text="Deploys on Fridays")
    before = memory(home)
    (home / "MEMORY.md").write_text("# Notes\n\n- Written by a person\n", encoding="utf-8")
    run(home, action="add", text="from the tool")
    got = records(home)
    assert [(r["action"], r["source"]) for r in got] == [
        ("add", "tool"),
        ("outside-edit", "outside"),
        ("add", "tool"),
    ]
    assert got[1]["before"] == before
    assert got[1]["after"] == "# Notes\n\n- Written by a person\n"
    assert got[1]["id"] < got[2]["id"]


def test_the_first_write_records_the_file_it_found(home: Path) -> None:
    (home / "MEMORY.md").write_text("# Memory\n\n- by hand\n", encoding="utf-8")
    run(home, action="add", text="by the tool")
    got = records(home)
    assert [(r["action"], r["before"], r["after"]) for r in got] == [
        ("outside-edit", None, "# Memory\n\n- by hand\n"),
        ("add", None, "by the tool"),
    ]


def test_a_deleted_file_is_an_outside_edit_with_no_after(home: Path) -> None:
    run(home, action="add", text="x")
    (home / "MEMORY.md").unlink()
    got = records(home)
    assert got[-1]["action"] == "outside-edit"
    assert got[-1]["before"] == "- x\n"
    assert got[-1]["after"] is None


def test_a_file_over_the_cap_is_recorded_by_size_and_digest(home: Path) -> None:
    store = MemoryStore(home, "self", limit=100)
    store.add("small")
    big = b"- " + b"x" * (1 << 20) + b"\n"  # over the 1 MiB read cap
    (home / "MEMORY.md").write_bytes(big)
    with pytest.raises(MemoryEditError, match=r"cannot write MEMORY\.md: .* over its cap"):
        store.add("more")
    last = records(home)[-1]
    assert last["action"] == "outside-edit"
    assert last["before"] == "- small\n"  # the version before is kept whole
    assert last["after"] is None
    assert last["source"] == f"outside size={len(big)} sha256={hashlib.sha256(big).hexdigest()}"


def test_a_file_that_is_not_utf8_is_recorded_by_size_and_digest(home: Path) -> None:
    run(home, action="add", text="x")
    bad = b"- caf\xe9\n"
    (home / "MEMORY.md").write_bytes(bad)
    result = asyncio.run(memory_tool(home).execute({"action": "add", "text": "y"}))
    assert result.is_error
    assert "not UTF-8" in result.output
    last = records(home)[-1]
    assert (last["action"], last["after"]) == ("outside-edit", None)
    assert last["source"] == f"outside size=7 sha256={hashlib.sha256(bad).hexdigest()}"


def test_the_cli_is_the_source_of_what_it_writes(home: Path) -> None:
    from toolnexus.cli import main

    assert main(["memory", str(home), "add", "from the shell"]) == 0
    assert records(home)[-1]["source"] == "cli"


# -- the state folder ------------------------------------------------------------------


def test_reads_never_create_the_state_folder(home: Path) -> None:
    from toolnexus.cli import main

    (home / "MEMORY.md").write_text("- by hand\n", encoding="utf-8")
    compose_soul(home)
    Home(home).memory()
    Agent(home).session()
    assert main(["check", str(home)]) == 0
    assert main(["memory", str(home), "show"]) == 0
    # A refused write creates nothing either.
    result = asyncio.run(memory_tool(home).execute({"action": "remove", "text": "nope"}))
    assert result.is_error
    assert not (home / STATE_DIR).exists()


def test_log_of_a_home_never_written_creates_nothing(home: Path) -> None:
    assert Home(home).history() == []
    assert not (home / STATE_DIR).exists()


def test_log_records_an_outside_edit_it_finds(home: Path) -> None:
    (home / "MEMORY.md").write_text("- by hand\n", encoding="utf-8")
    got = records(home)  # reading the log is a write: it records what it finds
    assert [(r["action"], r["after"]) for r in got] == [("outside-edit", "- by hand\n")]
    assert records(home) == got  # and only once


def test_the_state_folder_is_private_and_ignored_by_git(home: Path) -> None:
    run(home, action="add", text="x")
    state = home / STATE_DIR
    assert (state / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert state.stat().st_mode & 0o777 == 0o700
    conn = db(home)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


# A history that cannot be kept never makes the notes unwritable (SPEC §10): the write
# lands, never through a link, and says it is not recorded.


def test_a_state_folder_that_is_a_link_is_never_written_through(
    home: Path, tmp_path_factory: Any
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    (home / STATE_DIR).symlink_to(outside)
    result = asyncio.run(memory_tool(home).execute({"action": "add", "text": "x"}))
    assert not result.is_error, result.output
    assert f"(not recorded in the history: {home / STATE_DIR}: is a link: refused" in result.output
    assert memory(home) == "- x\n"
    assert os.listdir(outside) == []


def test_a_state_path_that_is_a_file_still_lets_the_write_land(home: Path) -> None:
    (home / STATE_DIR).write_text("not a folder", encoding="utf-8")
    result = asyncio.run(memory_tool(home).execute({"action": "add", "text": "x"}))
    assert not result.is_error, result.output
    assert "not recorded in the history" in result.output
    assert "is not a folder" in result.output
    assert memory(home) == "- x\n"
    assert (home / STATE_DIR).read_text(encoding="utf-8") == "not a folder"


def test_a_database_from_a_newer_toolnexus_is_refused(home: Path) -> None:
    run(home, action="add", text="x")
    conn = db(home)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    from toolnexus.store.folder import _state

    _state._open.clear()  # as a new process would
    with pytest.raises(HistoryError, match="made by a newer toolnexus"):
        Home(home).history()
    assert memory(home) == "- x\n"


def test_a_database_deleted_while_open_is_made_again(home: Path) -> None:
    run(home, action="add", text="x")
    for name in os.listdir(home / STATE_DIR):
        if name.startswith(DB_NAME):
            (home / STATE_DIR / name).unlink()
    run(home, action="add", text="y")
    assert [(r["action"], r["after"]) for r in records(home)] == [
        ("outside-edit", "- x\n"),
        ("add", "y"),
    ]


def test_a_damaged_database_is_a_clear_error(home: Path) -> None:
    (home / STATE_DIR).mkdir()
    (home / STATE_DIR / DB_NAME).write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(HistoryError, match=r"is damaged \(file is not a database\); move it aside"):
        Home(home).history()
    result = asyncio.run(memory_tool(home).execute({"action": "add", "text": "x"}))
    assert not result.is_error, result.output
    assert "not recorded in the history" in result.output
    assert "move it aside" in result.output
    assert memory(home) == "- x\n"


# -- undo ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"action": "add", "text": "new note"},
        {"action": "replace", "text": "Fridays", "with": "Mondays"},
        {"action": "remove", "text": "Fridays"},
    ],
    ids=["add", "replace", "remove"],
)
def test_undo_round_trips(home: Path, change: dict[str, str]) -> None:
    (home / "MEMORY.md").write_text("# Notes\n\n- Deploys on Fridays\n- other\n", encoding="utf-8")
    before = memory(home)
    run(home, **change)
    assert memory(home) != before
    message = Home(home).undo()
    assert message.startswith(f"undid change {records(home)[-2]['id']} ({change['action']}):")
    assert memory(home) == before
    last = records(home)[-1]
    assert (last["action"], last["source"]) == ("undo", f"python undo={last['id'] - 1}")
    # An undo is a change like any other: undoing it redoes the change.
    Home(home).undo()
    assert memory(home) != before
    Home(home).undo()
    assert memory(home) == before


def test_undo_of_an_entry_changed_since_is_a_loud_conflict(home: Path) -> None:
    run(home, action="add", text="Deploys on Fridays")
    added = records(home)[-1]["id"]
    run(home, action="replace", text="Fridays", **{"with": "Mondays"})
    before = memory(home)
    with pytest.raises(HistoryError, match=r"no longer in MEMORY\.md") as info:
        Home(home).undo(added)
    assert info.value.kind == "conflict"
    assert memory(home) == before
    assert records(home)[-1]["action"] == "replace"  # nothing recorded


def test_undo_of_a_remove_whose_entry_is_back_is_a_conflict(home: Path) -> None:
    run(home, action="add", text="x")
    run(home, action="remove", text="x")
    removed = records(home)[-1]["id"]
    run(home, action="add", text="x")
    with pytest.raises(HistoryError, match=r"already in MEMORY\.md"):
        Home(home).undo(removed)


def test_undo_of_an_outside_edit_puts_the_file_back(home: Path) -> None:
    run(home, action="add", text="kept")
    before = memory(home)
    (home / "MEMORY.md").write_text("- overwritten by an editor\n", encoding="utf-8")
    Home(home).history()  # finds the outside edit
    assert "outside-edit" in Home(home).undo()
    assert memory(home) == before
    # Once the file changed again, undoing the outside edit is a conflict.
    (home / "MEMORY.md").write_text("- overwritten again\n", encoding="utf-8")
    edit = next(r for r in records(home) if r["action"] == "outside-edit")["id"]
    with pytest.raises(HistoryError, match="has changed since"):
        Home(home).undo(edit)


def test_undo_of_a_replace_that_merged_two_notes_brings_the_other_back(home: Path) -> None:
    run(home, action="add", text="prefers tea")
    run(home, action="add", text="likes coffee")
    run(home, action="replace", text="likes coffee", **{"with": "prefers tea"})
    assert memory(home) == "- prefers tea\n"
    Home(home).undo()
    assert memory(home) == "- prefers tea\n- likes coffee\n"


def test_undo_errors_name_what_is_wrong(home: Path) -> None:
    with pytest.raises(HistoryError, match="no history yet") as info:
        Home(home).undo()
    assert info.value.kind == "not_found"
    run(home, action="add", text="x")
    with pytest.raises(HistoryError, match="no change 99 in the history"):
        Home(home).undo(99)
    with pytest.raises(HistoryError, match=r"USER\.md has no recorded change"):
        Home(home).undo(target="user")


# -- restore ---------------------------------------------------------------------------


def test_restore_puts_the_exact_bytes_back_and_is_recorded(home: Path) -> None:
    (home / "MEMORY.md").write_bytes(b"\xef\xbb\xbf# Notes\r\n\r\n- first\r\n")
    run(home, action="add", text="second")
    after_second = (home / "MEMORY.md").read_bytes()
    second = records(home)[-1]["id"]
    run(home, action="remove", text="first")
    run(home, action="add", text="third")
    message = Home(home).restore(second)
    assert message.startswith(f"restored MEMORY.md to how it was after change {second}")
    assert (home / "MEMORY.md").read_bytes() == after_second
    last = records(home)[-1]
    assert last["action"] == "restore"
    assert last["source"] == f"python restore={second}"
    assert last["after"] == after_second.decode("utf-8")
    assert "third" in last["before"]
    # Restoring the version already there writes and records nothing.
    assert "nothing written" in Home(home).restore(second)
    assert records(home)[-1]["id"] == last["id"]


def test_restore_of_a_batch_item_gives_the_file_after_the_batch(home: Path) -> None:
    run(home, operations=[{"action": "add", "text": "a"}, {"action": "add", "text": "b"}])
    first = records(home)[0]["id"]
    run(home, action="add", text="c")
    Home(home).restore(first)
    assert memory(home) == "- a\n- b\n"


# -- log -------------------------------------------------------------------------------


def test_log_is_newest_first_with_limit_and_grep(home: Path) -> None:
    for text in ("Prefers tea", "uses vim", "Tea at 4pm"):
        run(home, action="add", text=text)
    log = Home(home).history()
    assert [c.after for c in log] == ["Tea at 4pm", "uses vim", "Prefers tea"]
    assert [c.after for c in Home(home).history(limit=2)] == ["Tea at 4pm", "uses vim"]
    assert [c.after for c in Home(home).history(grep="TEA")] == ["Tea at 4pm", "Prefers tea"]
    assert [c.after for c in Home(home).history(grep="tea", limit=1)] == ["Tea at 4pm"]
    assert Home(home).history(limit=0) == []


# -- forget ----------------------------------------------------------------------------


def _all_state_bytes(home: Path) -> bytes:
    return b"".join((home / STATE_DIR / n).read_bytes() for n in os.listdir(home / STATE_DIR))


def test_forget_blanks_a_secret_everywhere_it_was_kept(home: Path) -> None:
    secret = "the staging door code is hunter2-pw"
    run(home, action="add", text="ordinary note")
    run(home, action="add", text=secret)
    added = records(home)[-1]["id"]
    run(home, action="add", text="later note")
    run(home, action="remove", text="hunter2")
    removed = records(home)[-1]["id"]
    assert secret.encode() in _all_state_bytes(home)

    message = Home(home).forget(added)
    assert f"also in change {removed}" in message
    Home(home).forget(removed)
    got = {r["id"]: r for r in records(home)}
    for id_ in (added, removed):
        assert got[id_]["before"] is None
        assert got[id_]["after"] is None
        assert got[id_]["source"].endswith("redacted")
        assert list(got[id_]) == FIELDS
    assert got[added]["action"] == "add"  # the record stays
    # Not in any record, nor in any kept file version, nor in the bytes on disk.
    assert secret.encode() not in _all_state_bytes(home)
    conn = db(home)
    for (body,) in conn.execute("SELECT body FROM memory_states"):
        assert b"hunter2" not in zlib.decompress(body)
    # The versions that held it cannot be restored, nor the change undone.
    with pytest.raises(HistoryError, match="no longer kept") as info:
        Home(home).restore(added)
    assert info.value.kind == "unavailable"
    with pytest.raises(HistoryError, match="was forgotten"):
        Home(home).undo(added)
    assert memory(home) == "- ordinary note\n- later note\n"


# -- compact ---------------------------------------------------------------------------


def test_compact_drops_old_changes_but_keeps_each_files_latest(home: Path) -> None:
    for text in ("a", "b", "c"):
        run(home, action="add", text=text)
    run(home, action="add", text="u", target="user")
    conn = db(home)
    conn.execute("UPDATE memory_changes SET time = '2020-01-01T00:00:00.000Z'")
    conn.commit()
    conn.close()
    run(home, action="add", text="d")
    message = Home(home).compact(keep_days=30)
    assert message.startswith("removed 3 changes older than 30 days; 2 kept.")
    assert [c.after for c in Home(home).history(None)] == ["d", "u"]
    # The file versions only old changes left are gone; the kept ones still restore.
    conn = db(home)
    assert conn.execute("SELECT COUNT(*) FROM memory_states").fetchone()[0] == 2
    Home(home).restore(records(home)[-1]["id"])
    with pytest.raises(ValueError, match="keep_days: must be 0 or more"):
        Home(home).compact(keep_days=-1)


# -- provenance through the CLI context ------------------------------------------------


def test_history_actions_name_the_cli_when_run_from_it(home: Path) -> None:
    run(home, action="add", text="x")
    with calling(CallContext("cli")):
        History(home).undo()
    assert records(home)[-1]["source"] == f"cli undo={records(home)[-2]['id']}"


def test_a_database_of_an_older_schema_is_upgraded_in_place(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolnexus.store.folder import _state

    run(home, action="add", text="kept across the upgrade")
    _state._open.clear()  # as a new process, shipped with one more migration, would
    later = "CREATE TABLE upgraded (x INTEGER); INSERT INTO upgraded VALUES (42);"
    monkeypatch.setattr(_state, "MIGRATIONS", (*MIGRATIONS, later))
    assert [c.after for c in Home(home).history()] == ["kept across the upgrade"]
    conn = db(home)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 1
    assert conn.execute("SELECT x FROM upgraded").fetchall() == [(42,)]
    _state._open.clear()
    Home(home).history()  # opening again runs nothing twice
    assert db(home).execute("SELECT COUNT(*) FROM upgraded").fetchone()[0] == 1


def test_a_failed_migration_leaves_the_database_as_it_was(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolnexus.store.folder import _state

    run(home, action="add", text="x")
    _state._open.clear()
    broken = "CREATE TABLE half (x INTEGER); INSERT INTO nowhere VALUES (1);"
    monkeypatch.setattr(_state, "MIGRATIONS", (*MIGRATIONS, broken))
    upgrade = (
        rf"cannot be upgraded to schema version {len(MIGRATIONS) + 1} "
        r"\(no such table: nowhere\); it is left"
    )
    with pytest.raises(HistoryError, match=upgrade):
        Home(home).history()
    conn = db(home)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "half" not in tables


# -- review: what forget finds, forks, busy and damaged databases ----------------------


def test_forget_of_an_outside_edit_drops_every_version_holding_its_lines(home: Path) -> None:
    run(home, action="add", text="alpha")
    (home / "MEMORY.md").write_text("- alpha\n- pin is 4711\n", encoding="utf-8")
    edit = records(home)[-1]["id"]  # the log recorded the person's edit
    run(home, action="add", text="beta")
    (home / "MEMORY.md").write_text("- alpha\n- beta\n", encoding="utf-8")
    later = records(home)[-1]["id"]  # the person took the pin out again
    message = Home(home).forget(edit)
    assert f"also in change {later}" in message
    assert "gone too" in message
    conn = db(home)
    for (body,) in conn.execute("SELECT body FROM memory_states"):
        assert b"4711" not in zlib.decompress(body)
    Home(home).forget(later)
    assert b"4711" not in _all_state_bytes(home)


def test_forget_of_a_multi_line_entry_names_the_records_that_hold_it(home: Path) -> None:
    run(home, action="add", text="server notes:\npassword hunter2")
    added = records(home)[-1]["id"]
    (home / "MEMORY.md").write_text("- other\n", encoding="utf-8")
    outside = records(home)[-1]["id"]
    assert f"also in change {outside}" in Home(home).forget(added)


def test_a_forked_child_writes_after_the_parent_used_the_history(home: Path) -> None:
    import signal

    run(home, action="add", text="parent")
    Home(home).history()  # the parent's connection is open
    pid = os.fork()
    if pid == 0:
        signal.alarm(30)  # a hang ends the child, and the test fails
        try:
            MemoryStore(home, "self", limit=8000).add("child")
            ok = [c.after for c in Home(home).history()][:1] == ["child"]
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    run(home, action="add", text="parent again")  # and the parent goes on
    assert [c.after for c in Home(home).history()][:3] == ["parent again", "child", "parent"]


def test_a_busy_database_is_reported_as_busy(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolnexus.store.folder import _state

    run(home, action="add", text="x")
    _state._open.clear()
    monkeypatch.setattr(_state, "BUSY_MS", 100)
    holder = sqlite3.connect(home / STATE_DIR / DB_NAME, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(HistoryError, match="is busy: another process has held it") as info:
            Home(home).forget(1)
        assert info.value.kind == "state"
        assert "move it aside" not in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        _state._open.clear()


def test_a_damaged_database_is_one_line_from_the_cli(home: Path) -> None:
    from test_cli import assert_one_line_error
    from test_cli import run as cli

    for k in range(30):
        run(home, action="add", text=f"note {k} " + "x" * 200)
    from toolnexus.store.folder import _state

    _state._open.clear()
    path = home / STATE_DIR / DB_NAME
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[4096:] = b"\xa5" * (len(data) - 4096)  # the header stays; every other page is junk
    path.write_bytes(bytes(data))
    for args in (("log",), ("undo",), ("forget", "1"), ("compact", "--keep-days", "1")):
        assert_one_line_error(cli("memory", home, *args), 1, "state.db: is damaged")


def test_out_of_range_numbers_are_plain_answers(home: Path) -> None:
    run(home, action="add", text="x")
    with pytest.raises(HistoryError, match="no change 99999999999999999999 in the history"):
        Home(home).undo(99999999999999999999)
    assert Home(home).compact(keep_days=10**9).startswith("removed 0 changes")


def test_log_records_an_outside_edit_to_a_read_only_file(home: Path) -> None:
    run(home, action="add", text="x")
    (home / "MEMORY.md").write_text("- edited by hand\n", encoding="utf-8")
    (home / "MEMORY.md").chmod(0o444)
    assert records(home)[-1]["after"] == "- edited by hand\n"


def test_a_state_folder_swapped_for_a_link_while_open_is_not_written_through(
    home: Path,
) -> None:
    run(home, action="add", text="first")  # the database is open in this process now
    elsewhere = home.parent / "elsewhere"
    (home / STATE_DIR).rename(elsewhere)
    (home / STATE_DIR).symlink_to(elsewhere)
    result = asyncio.run(memory_tool(home).execute({"action": "add", "text": "second"}))
    assert not result.is_error, result.output
    assert f"{STATE_DIR}: is a link: refused" in result.output
    assert "second" in memory(home)
    # Nothing was recorded through the link (closing the old handle may checkpoint it).
    with sqlite3.connect(elsewhere / DB_NAME) as conn:
        afters = [row[0] for row in conn.execute("SELECT after FROM memory_changes")]
    assert not any("second" in (after or "") for after in afters)


@pytest.mark.slow
def test_processes_creating_the_state_at_the_same_moment_all_succeed(tmp_path: Path) -> None:
    # Switching a new database to WAL needs it alone for a moment; SQLite says "locked"
    # at once (no busy wait) to a second process opening it then.
    failed = 0
    for trial in range(40):
        home = tmp_path / f"h{trial}"
        home.mkdir()
        start_r, start_w = os.pipe()
        children = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:  # pragma: no cover (a child)
                code = 1
                try:
                    os.close(start_w)
                    os.read(start_r, 1)  # all start together
                    from toolnexus.store.folder._state import open_state

                    state = open_state(home, create=True)
                    assert state is not None
                    with state.transaction() as conn:
                        conn.execute("SELECT 1")
                    code = 0
                finally:
                    os._exit(code)
            children.append(pid)
        os.close(start_r)
        os.close(start_w)  # go
        for pid in children:
            _, status = os.waitpid(pid, 0)
            failed += os.waitstatus_to_exitcode(status) != 0
    assert failed == 0
