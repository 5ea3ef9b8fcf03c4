"""Text from outside never acts on a terminal, and never forges a line of a record.

An MCP client chooses its JSON-RPC ids, an imported chat file its messages and
titles, a person or a script the bytes of MEMORY.md: each may hold escape
sequences (a window title, the clipboard, a cursor move) or line breaks. Where
such text is printed (`memory log`, `sessions list`, `sessions show`) or kept
as a one-line record (the history's `source`), it shows as escapes.
"""

from __future__ import annotations

import json
from pathlib import Path

from _mcp_wire import HANDSHAKE, raw_stdio
from test_cli import run

from toolnexus._text import one_line, terminal_safe

OSC_TITLE = "\x1b]0;pwned\x07"
OSC_CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGU=\x07"
ACTIVE = ("\x1b", "\x07", "\x9b", "\u202e")


def clean(output: str) -> bool:
    return not any(ch in output for ch in ACTIVE)


def test_active_characters_are_shown_as_escapes() -> None:
    text = f"a{OSC_TITLE}b\u202ec\td\ne\x9b"
    assert terminal_safe(text) == "a\\x1b]0;pwned\\x07b\\u202ec\td\ne\\x9b"
    assert one_line(text) == "a\\x1b]0;pwned\\x07b\\u202ec\\x09d\\x0ae\\x9b"
    assert one_line("plain ünïcode ✓") == "plain ünïcode ✓"


def test_an_mcp_request_id_cannot_forge_a_history_record(home: Path) -> None:
    forged = f"7\n9  2026-01-01T00:00:00Z  self  remove  cli{OSC_TITLE}"
    lines = [
        *HANDSHAKE,
        {
            "jsonrpc": "2.0",
            "id": forged,
            "method": "tools/call",
            "params": {"name": "memory", "arguments": {"action": "add", "text": "a note"}},
        },
    ]
    with raw_stdio(home, lines, "--trust-client") as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        while (reply := json.loads(proc.stdout.readline())).get("id") != forged:
            pass
        proc.stdin.close()
        proc.wait(timeout=30)
    assert reply["result"]["isError"] is False
    log = run("memory", home, "log")
    assert log.returncode == 0, log.stderr
    assert clean(log.stdout)
    headers = [line for line in log.stdout.splitlines() if not line.startswith(" ")]
    assert len(headers) == 1  # one change, one record: the id forged none
    assert "call=7\\x0a9  2026-01-01T00:00:00Z" in headers[0]
    assert "\\x1b]0;pwned\\x07" in headers[0]


def test_an_outside_edit_with_escapes_is_logged_escaped(home: Path) -> None:
    assert run("memory", home, "add", "first").returncode == 0
    path = home / "MEMORY.md"
    path.write_text(path.read_text("utf-8") + f"- sneaky{OSC_CLIPBOARD}\n", encoding="utf-8")
    assert run("memory", home, "add", "second").returncode == 0  # records the outside edit
    log = run("memory", home, "log")
    assert "outside-edit" in log.stdout
    assert clean(log.stdout)
    assert "sneaky\\x1b]52;c;" in log.stdout


def test_imported_messages_are_listed_and_shown_escaped(home: Path, tmp_path: Path) -> None:
    talk = [
        {"role": "user", "content": f"hello{OSC_TITLE} there\u202eevil"},
        {
            "role": "assistant",
            "content": f"hi{OSC_CLIPBOARD}",
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": f"now{OSC_TITLE}", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "noon\x1b[2J"},
    ]
    file = tmp_path / "talk.jsonl"
    file.write_text("".join(json.dumps(m) + "\n" for m in talk), encoding="utf-8")
    imported = run("sessions", home, "import", file)
    assert imported.returncode == 0, imported.stderr
    listed = run("sessions", home, "list")
    assert clean(listed.stdout)
    assert "hello\\x1b]0;pwned\\x07 there\\u202eevil" in listed.stdout
    [id] = [line.split()[0] for line in listed.stdout.splitlines()]
    shown = run("sessions", home, "show", id)
    assert shown.returncode == 0, shown.stderr
    assert clean(shown.stdout)
    assert "hi\\x1b]52;c;" in shown.stdout
    assert "calls now\\x1b]0;pwned\\x07 {}" in shown.stdout
    assert "noon\\x1b[2J" in shown.stdout
