"""`toolnexus memory HOME log | undo | restore | compact | forget`, run as a subprocess."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from test_cli import assert_one_line_error, run

FIELDS = ["id", "time", "target", "action", "before", "after", "source"]


def ok(*args: str | Path) -> str:
    result = run("memory", *args)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def log_json(home: Path, *args: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in ok(home, "log", "--json", *args).splitlines()]


def test_log_json_is_one_record_per_line_with_exactly_the_fields(home: Path) -> None:
    ok(home, "add", "prefers tea", "--user")
    ok(home, "replace", "tea", "--with", "green tea", "--user")
    ok(home, "add", "on call this week")
    got = log_json(home, "--user")
    assert [list(r) for r in got] == [FIELDS, FIELDS]
    assert [(r["action"], r["before"], r["after"], r["source"]) for r in got] == [
        ("replace", "prefers tea", "prefers green tea", "cli"),
        ("add", None, "prefers tea", "cli"),
    ]
    assert [r["after"] for r in log_json(home)] == ["on call this week"]
    assert len(log_json(home, "--user", "--limit", "1")) == 1


def test_log_grep_answers_how_it_learned_a_fact(home: Path) -> None:
    ok(home, "add", "Deploys freeze on Fridays")
    ok(home, "add", "The pager rota is in the wiki")
    text = ok(home, "log", "--grep", "FRIDAYS")
    assert text.splitlines()[0].endswith("  self  add  cli")
    assert text.splitlines()[1] == "    + Deploys freeze on Fridays"
    assert "pager" not in text


def test_log_shows_an_outside_edit_as_a_diff(home: Path) -> None:
    ok(home, "add", "kept")
    ok(home, "add", "lost to an editor")
    (home / "MEMORY.md").write_text("- kept\n- typed by a person\n", encoding="utf-8")
    first = ok(home, "log").split("\n\n")[0].splitlines()
    assert first[0].split("  ")[3:] == ["outside-edit", "outside"]
    assert "    -- lost to an editor" in first
    assert "    +- typed by a person" in first


def test_undo_restore_and_their_records(home: Path) -> None:
    ok(home, "add", "one")
    ok(home, "add", "two")
    assert ok(home, "undo").startswith("undid change 2 (add): ")
    assert (home / "MEMORY.md").read_text(encoding="utf-8") == "- one\n"
    assert ok(home, "restore", "2").startswith("restored MEMORY.md to how it was after change 2")
    assert (home / "MEMORY.md").read_text(encoding="utf-8") == "- one\n- two\n"
    assert [(r["action"], r["source"]) for r in log_json(home)][:2] == [
        ("restore", "cli restore=2"),
        ("undo", "cli undo=2"),
    ]


def test_an_undo_conflict_is_exit_1_with_one_line(home: Path) -> None:
    ok(home, "add", "Deploys on Fridays")
    ok(home, "replace", "Fridays", "--with", "Mondays")
    result = run("memory", home, "undo", "1")
    assert_one_line_error(result, 1, "cannot undo change 1 (add): the entry")
    assert "no longer in MEMORY.md" in result.stderr


def test_forget_and_compact(home: Path) -> None:
    ok(home, "add", "token is sk-test-0000")
    ok(home, "remove", "sk-test")
    out = ok(home, "forget", "1")
    assert out.startswith("forgot change 1: its texts are blanked")
    assert "also in change 2" in out
    ok(home, "forget", "2")
    assert all(r["before"] is None and r["after"] is None for r in log_json(home))
    assert all(str(r["source"]).endswith("redacted") for r in log_json(home))
    conn = sqlite3.connect(home / ".toolnexus" / "state.db")
    conn.execute("UPDATE memory_changes SET time = '2001-01-01T00:00:00.000Z' WHERE id = 1")
    conn.commit()
    conn.close()
    assert ok(home, "compact", "--keep-days", "7").startswith(
        "removed 1 change older than 7 days; 1 kept."
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("restore",), "memory restore needs the ID of a change"),
        (("forget", "abc"), "'abc' is not the ID of a change"),
        (("undo", "1.5"), "'1.5' is not the ID of a change"),
        (("compact",), "memory compact needs --keep-days N"),
        (("compact", "--keep-days", "-1"), "--keep-days must be 0 or more"),
        (("log", "--limit", "-2"), "--limit must be 0 or more"),
        (("log", "x"), "memory log takes no TEXT"),
        (("add", "x", "--json"), "--json is not an option of memory add"),
        (("restore", "1", "--user"), "--user is not an option of memory restore"),
        (("log", "--keep-days", "3"), "--keep-days is not an option of memory log"),
        (("undo", "1", "--user"), "memory undo ID undoes that change in its own file"),
    ],
)
def test_usage_errors_are_exit_2(home: Path, args: tuple[str, ...], message: str) -> None:
    assert_one_line_error(run("memory", home, *args), 2, message)


def test_history_errors_are_exit_1(home: Path) -> None:
    assert_one_line_error(run("memory", home, "undo"), 1, "no history yet")
    ok(home, "add", "x")
    assert_one_line_error(run("memory", home, "restore", "42"), 1, "no change 42 in the history")
    assert ok(home, "log", "--user") == "(no recorded changes)\n"
