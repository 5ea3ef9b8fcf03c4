"""Saved conversations under real processes: a session SIGKILLed mid-turn, two saving at once."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from test_memory_concurrency import writer_env

from toolnexus.agents import Conversations, from_dir
from toolnexus.agents.models import ScriptedModel

TIMEOUT = 60

# A session whose model answers two turns (the first with a memory call), then hangs
# in the third turn's request, after printing "waiting".
HANGING = textwrap.dedent(
    """
    import sys, time
    from toolnexus.agents import from_dir
    from toolnexus.agents.models import ScriptedModel, call

    def hang(request):
        print("waiting", flush=True)
        time.sleep(3600)

    turns = [call("memory", action="add", text="the kiwi is green"), "Noted.", "Second.", hang]
    session = from_dir(sys.argv[1], model=ScriptedModel(turns)).session()
    print(session.id, flush=True)
    for line in ("first message", "second message", "third message"):
        session.send_sync(line)
    """
)

# A session of `count` sends that starts talking once the file `go` exists.
TALKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from toolnexus.agents import from_dir
    from toolnexus.agents.models import ScriptedModel

    home, tag, go, count = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    model = ScriptedModel([f"{tag} answer {k}" for k in range(count)])
    session = from_dir(home, model=model).session()
    print(session.id, flush=True)
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            sys.exit("no go")
        time.sleep(0.001)
    for k in range(count):
        assert session.send_sync(f"{tag} question {k}") == f"{tag} answer {k}"
        assert session.save_error is None, session.save_error
    print("done", flush=True)
    """
)


@contextmanager
def child(script: str, *args: str | Path | int, cwd: Path) -> Iterator[subprocess.Popen[str]]:
    """A Python child running `script`; killed (after TIMEOUT at the latest) on leaving."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        env=writer_env(),
    )
    watchdog = threading.Timer(TIMEOUT, proc.kill)  # a hung child fails the test, not the run
    watchdog.start()
    try:
        yield proc
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def read_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, f"the child ended early: {proc.communicate()[1]}"
    return line.rstrip("\n")


def test_a_killed_session_loses_at_most_the_turn_in_flight(home: Path, tmp_path: Path) -> None:
    with child(HANGING, home, cwd=tmp_path) as proc:
        id = read_line(proc)
        assert read_line(proc) == "waiting"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    assert proc.returncode == -signal.SIGKILL

    conversations = Conversations(home)
    [saved] = conversations.list()
    assert saved.id == id
    assert saved.messages == 7
    assert saved.title == "first message"
    exported = conversations.export(id)
    tool_output = exported[2].pop("content")
    assert tool_output.startswith("added to MEMORY.md")
    arguments = json.dumps({"action": "add", "text": "the kiwi is green"})
    assert exported == [
        {"role": "user", "content": "first message"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "memory", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_1"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "second message"},
        {"role": "assistant", "content": "Second."},
        {"role": "user", "content": "third message"},
    ]
    assert "- the kiwi is green" in (home / "MEMORY.md").read_text(encoding="utf-8")
    [memory_hit] = [h for h in conversations.recall("kiwi") if h.kind == "memory"]
    assert memory_hit.session == id

    with closing(sqlite3.connect(home / ".toolnexus" / "state.db")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    # The conversation goes on where it stopped: the third message is asked again.
    model = ScriptedModel(["Back again."])
    session = from_dir(home, model=model).session(resume=id[:6])
    assert session.id == id
    assert session.send_sync("third message, again") == "Back again."
    [request] = model.requests
    assert [m.role for m in request.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "user",
        "user",
    ]
    assert conversations.get(id).messages == 9


def test_two_processes_saving_sessions_of_one_home_lose_nothing(home: Path, tmp_path: Path) -> None:
    count = 40
    go = tmp_path / "go"
    with (
        child(TALKER, home, "left", go, count, cwd=tmp_path) as left,
        child(TALKER, home, "right", go, count, cwd=tmp_path) as right,
    ):
        ids = {"left": read_line(left), "right": read_line(right)}
        # Both are ready, and nothing is saved yet: they even create the database together.
        assert not (home / ".toolnexus").exists()
        go.touch()
        for proc in (left, right):
            out, err = proc.communicate(timeout=TIMEOUT)
            assert proc.returncode == 0, err
            assert out == "done\n"
            assert "not being saved" not in err

    conversations = Conversations(home)
    saved = {s.id: s for s in conversations.list()}
    assert set(saved) == set(ids.values())
    for tag, id in ids.items():
        assert saved[id].messages == 2 * count
        assert saved[id].title == f"{tag} question 0"
        expected = []
        for k in range(count):
            expected.append({"role": "user", "content": f"{tag} question {k}"})
            expected.append({"role": "assistant", "content": f"{tag} answer {k}"})
        assert conversations.export(id) == expected
