"""Imports pass the door's rules: regular files, a size cap, bounded nesting, a capped
list of problems. Each case once ran out of memory, blocked forever, ended in a
traceback or printed one enormous line; now each is one clear refusal, and nothing
is imported."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_cli import run

from toolnexus.conversations import Conversations, _chatfile
from toolnexus.errors import ConversationError


def refused(home: Path, file: Path | str) -> str:
    done = run("sessions", home, "import", file)
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("toolnexus sessions: ")
    assert Conversations(home).list() == []  # nothing imported
    return done.stderr


def jsonl(*messages: object) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


def test_a_link_to_a_device_is_refused_not_read(home: Path, tmp_path: Path) -> None:
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    assert "is not a regular file (a FIFO, device or socket): refused" in refused(home, link)


def test_a_fifo_is_refused_without_waiting_for_a_writer(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "talk.jsonl"
    os.mkfifo(fifo)
    assert "is not a regular file" in refused(home, fifo)


def test_a_folder_is_refused(home: Path, tmp_path: Path) -> None:
    assert "is a folder, not a conversation file" in refused(home, tmp_path)


def test_a_link_to_a_regular_file_is_followed(home: Path, tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text(jsonl({"role": "user", "content": "hello"}), encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert run("sessions", home, "import", link).returncode == 0
    assert len(Conversations(home).list()) == 1


@pytest.mark.parametrize("where", ["arguments", "message"])
def test_deep_nesting_is_a_problem_not_a_crash(home: Path, tmp_path: Path, where: str) -> None:
    deep = "[" * 1000 + "]" * 1000
    call = {"id": "t1", "type": "function", "function": {"name": "x", "arguments": deep}}
    if where == "arguments":
        messages = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "t1", "content": "ok"},
        ]
        text = jsonl(*messages)
    else:
        text = '{"role": "user", "content": "hi", "extra": ' + "[" * 200 + "]" * 200 + "}\n"
    file = tmp_path / "deep.jsonl"
    file.write_text(text, encoding="utf-8")
    line = 2 if where == "arguments" else 1
    assert f"deep.jsonl:{line}: nested deeper than 64 levels" in refused(home, file)


def test_a_million_bad_lines_list_twenty_and_count_the_rest(home: Path, tmp_path: Path) -> None:
    file = tmp_path / "bad.jsonl"
    file.write_text("x\n" * 1_000_000, encoding="utf-8")
    error = refused(home, file)
    assert len(error) < 3000
    assert error.count(": not JSON (") == 20
    assert "bad.jsonl: and 999,980 more lines with problems" in error


def test_a_file_over_the_cap_is_refused_before_it_is_read(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "big.jsonl"
    file.write_text(jsonl({"role": "user", "content": "y" * 5000}), encoding="utf-8")
    monkeypatch.setattr(_chatfile, "IMPORT_CAP", 4096)
    with pytest.raises(ConversationError, match=r"is over the import cap of 4,096 bytes"):
        Conversations(home).import_files([file])
    assert _chatfile.IMPORT_CAP == 4096 < 2**20 <= 32 * 2**20  # the shipped cap is 32 MiB


def test_text_that_is_not_utf8_says_where(home: Path, tmp_path: Path) -> None:
    file = tmp_path / "latin1.jsonl"
    file.write_bytes(b'{"role": "user", "content": "caf\xe9"}\n')
    assert "latin1.jsonl: not UTF-8 text (byte 33 cannot be read)" in refused(home, file)
