"""The PostgreSQL store under real processes: many writers on two "machines", a writer
killed mid-transaction, and the server stopped and restarted under a running session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from _pgserver import PgServer
from _waits import wait_until

from toolnexus.agents import compose_soul, from_dir
from toolnexus.agents.models import ScriptedModel, ToolResultMessage, call
from toolnexus.memory import History
from toolnexus.store import database_store
from toolnexus.store.postgres._connection import close_pools

pytestmark = pytest.mark.slow

#: A writer process: adds its entries one by one through the memory tool, printing each
#: one the tool acknowledged (an error result is printed as such, never as acknowledged).
WRITER = """
import sys
from toolnexus.agents import memory_tool

home, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
tool = memory_tool(home)
for n in range(count):
    entry = f"note {n} from {name}"
    result = tool.execute_sync({"action": "add", "target": "self", "text": entry})
    print(("ERR " if result.is_error else "OK ") + entry, flush=True)
"""

#: A writer that stops inside its transaction, after its rows are written and before the
#: commit (the store checks `cancel` there), and waits to be killed.
STALLER = """
import sys, time
from toolnexus.memory import MemoryStore

class Stall:
    def is_set(self):
        print("in transaction", flush=True)
        time.sleep(120)
        return False

store = MemoryStore(sys.argv[1], "self", limit=8000)
store._run([__import__("toolnexus.memory._edit", fromlist=["Op"]).Op("add", "never committed")],
           batch=False, cancel=Stall())
print("committed?!", flush=True)
"""


@pytest.fixture(autouse=True)
def _own_pools() -> Iterator[None]:
    yield
    close_pools()


def make_home(root: Path, dsn: str) -> Path:
    root.mkdir(parents=True)
    (root / "IDENTITY.md").write_text(
        f"---\nname: Ada\nstore: {dsn}\n---\nYou are Ada.\n", encoding="utf-8"
    )
    return root


def spawn(script: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sixteen_writers_on_two_machines_lose_nothing(tmp_path: Path, pg_dsn: str) -> None:
    homes = [make_home(tmp_path / f"machine-{m}", pg_dsn) for m in "ab"]
    writers = [spawn(WRITER, home, f"{home.name}/p{p}", 5) for home in homes for p in range(8)]
    acknowledged: list[str] = []
    for writer in writers:
        out, err = writer.communicate(timeout=180)
        assert writer.returncode == 0, err
        lines = out.splitlines()
        assert all(line.startswith("OK ") for line in lines), lines
        acknowledged += [line[3:] for line in lines]
    assert len(acknowledged) == 80
    for home in homes:
        entries = compose_soul(home).memory_entries
        assert sorted(entries) == sorted(acknowledged)
    log = History(homes[0]).log(limit=None)
    assert sorted(c.id for c in log) == list(range(1, 81))  # one record each, no gap


def waiting_for_locks(dsn: str) -> int:
    """How many connections to the database wait for a lock another one holds."""
    with psycopg.connect(dsn, password=os.environ["PGPASSWORD"], autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_writer_killed_mid_transaction_loses_nothing_acknowledged(
    tmp_path: Path, pg_dsn: str
) -> None:
    home = make_home(tmp_path / "a", pg_dsn)
    database_store(home).migrate()
    staller = spawn(STALLER, home)
    assert staller.stdout is not None
    assert staller.stdout.readline() == "in transaction\n"
    # It holds the persona's row lock now: these writers wait for it.
    writers = [spawn(WRITER, home, f"w{n}", 3) for n in range(4)]
    wait_until(lambda: waiting_for_locks(pg_dsn) >= 4, what="the writers to wait for the row")
    staller.send_signal(signal.SIGKILL)
    staller.communicate(timeout=30)
    acknowledged = []
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        acknowledged += [line[3:] for line in out.splitlines() if line.startswith("OK ")]
    assert len(acknowledged) == 12
    entries = compose_soul(home).memory_entries
    assert sorted(entries) == sorted(acknowledged)
    assert "never committed" not in entries
    assert all(c.after != "never committed" for c in History(home).log(limit=None))


def test_a_writer_killed_at_any_moment_loses_nothing_acknowledged(
    tmp_path: Path, pg_dsn: str
) -> None:
    home = make_home(tmp_path / "a", pg_dsn)
    database_store(home).migrate()
    acknowledged: list[str] = []
    for round_ in range(3):
        writer = spawn(WRITER, home, f"round{round_}", 200)
        assert writer.stdout is not None
        while not writer.stdout.readline().startswith("OK "):
            pass  # the first write is in: the writer is mid-stream
        time.sleep(0.05 * (round_ + 1))
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate(timeout=30)
        acknowledged += [f"note 0 from round{round_}"]
        acknowledged += [line[3:] for line in out.splitlines() if line.startswith("OK ")]
    entries = set(compose_soul(home).memory_entries)
    assert set(acknowledged) <= entries


def test_a_session_outlives_the_server_stopping_and_starting(
    tmp_path: Path, pg_server: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = PgServer(pg_server.bindir)  # its own server: stopping it disturbs no other test
    own.start()
    try:
        own.create_database("restart")
        monkeypatch.setenv("PGPASSWORD", own.password)
        monkeypatch.setenv("TOOLNEXUS_STORE_TIMEOUT", "2")
        home = make_home(tmp_path / "a", own.dsn("restart"))
        model = ScriptedModel(
            [
                call("memory", action="add", target="self", text="Before the outage."),
                "saved",
                call("memory", action="add", target="self", text="During the outage."),
                "could not save",
                call("memory", action="add", target="self", text="After the outage."),
                "saved again",
            ]
        )
        session = from_dir(home, model=model).session()
        assert session.send_sync("one") == "saved"
        own.stop()
        assert session.send_sync("two") == "could not save"  # the session goes on
        result = [m for m in session.messages if isinstance(m, ToolResultMessage)][-1]
        assert result.is_error
        assert "the PostgreSQL store postgresql://127.0.0.1:" in result.output
        assert "is unreachable" in result.output
        assert "Nothing written." in result.output
        own.start()
        assert session.send_sync("three") == "saved again"  # reconnected
        result = [m for m in session.messages if isinstance(m, ToolResultMessage)][-1]
        assert not result.is_error, result.output
        assert compose_soul(home).memory_entries == ("Before the outage.", "After the outage.")
    finally:
        close_pools()
        own.close()
