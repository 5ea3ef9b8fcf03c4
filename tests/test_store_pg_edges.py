"""The PostgreSQL store at its edges: a key handed over under a running process, a lock
held too long, a role that may not create tables, text PostgreSQL refuses, a copy
taken while others write, and many undos in one process."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from _pghome import cli, make_home, memory
from psycopg import sql

from toolnexus.agents import Conversations, compose_soul, from_dir
from toolnexus.agents.models import ScriptedModel
from toolnexus.errors import MemoryEditError
from toolnexus.memory import History
from toolnexus.store import database_store
from toolnexus.store._address import shown as describe
from toolnexus.store.folder._changes import digest
from toolnexus.store.postgres._connection import close_pools


@pytest.fixture(autouse=True)
def _own_pools() -> Iterator[None]:
    yield
    close_pools()


def superuser(dsn: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(dsn, password=os.environ["PGPASSWORD"], autocommit=True)


def test_a_key_handed_over_refuses_a_process_still_on_the_old_identity(
    tmp_path: Path, pg_dsn: str
) -> None:
    old = make_home(tmp_path / "old", pg_dsn)
    memory(old).add("Written by the old deployment.")  # this process now knows its claim
    new = make_home(tmp_path / "new", pg_dsn, body="You are Ada, version two.")
    cli("store", new, "migrate", "--claim")  # another machine redeploys
    with pytest.raises(MemoryEditError) as info:
        memory(old).add("Written after the handover.")
    assert "belongs to another identity" in str(info.value)
    assert "Nothing written." in str(info.value)
    assert database_store(new).read("self") == b"- Written by the old deployment.\n"
    memory(new).add("Written by the new deployment.")
    assert compose_soul(new).memory_entries == (
        "Written by the old deployment.",
        "Written by the new deployment.",
    )


def test_a_lock_held_too_long_is_an_error_not_a_hang(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLNEXUS_STORE_TIMEOUT", "2")
    home = make_home(tmp_path / "a", pg_dsn)
    memory(home).add("Before the stall.")
    with superuser(pg_dsn) as frozen:
        # Should the store ever wait forever, the server ends this stall: a failure, no hang.
        frozen.execute("SET idle_in_transaction_session_timeout = '30s'")
        frozen.execute("BEGIN")
        # A writer on another machine stalls while it holds the persona's row.
        frozen.execute("SELECT 1 FROM toolnexus_personas WHERE key = 'Ada' FOR UPDATE")
        with pytest.raises(MemoryEditError) as info:
            memory(home).add("During the stall.")
        frozen.execute("ROLLBACK")
    message = str(info.value)
    assert "is busy: another writer has held the persona's lock for over 2 s" in message
    assert "TOOLNEXUS_STORE_TIMEOUT" in message
    assert message.endswith("Nothing written.")
    memory(home).add("After the stall.")
    assert compose_soul(home).memory_entries == ("Before the stall.", "After the stall.")


def test_a_role_without_create_uses_a_migrated_schema_and_refusals_name_the_table(
    tmp_path: Path, pg_dsn: str
) -> None:
    owner = make_home(tmp_path / "owner", pg_dsn)
    cli("store", owner, "migrate")
    with superuser(pg_dsn) as conn:
        password = sql.Literal(os.environ["PGPASSWORD"])
        conn.execute(sql.SQL("CREATE ROLE clerk LOGIN PASSWORD {}").format(password))
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        conn.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO clerk")
    try:
        clerk = make_home(tmp_path / "clerk", pg_dsn.replace("toolnexus@", "clerk@"))
        memory(clerk).add("Written by a role that cannot create tables.")
        assert compose_soul(owner).memory_entries == (
            "Written by a role that cannot create tables.",
        )
        close_pools()
        with superuser(pg_dsn) as conn:
            conn.execute("REVOKE UPDATE ON toolnexus_memory FROM clerk")
        with pytest.raises(MemoryEditError) as info:
            memory(clerk).add("Not allowed.")
        assert "refused: permission denied for table toolnexus_memory" in str(info.value)
        assert str(info.value).endswith("Nothing written.")
        assert compose_soul(owner).memory_entries == (
            "Written by a role that cannot create tables.",
        )
    finally:
        close_pools()
        with superuser(pg_dsn) as conn:
            conn.execute("REASSIGN OWNED BY clerk TO toolnexus")
            conn.execute("DROP OWNED BY clerk")
            conn.execute("DROP ROLE clerk")


def test_a_nul_in_a_message_is_kept_as_a_replacement_character(tmp_path: Path, pg_dsn: str) -> None:
    home = make_home(tmp_path / "a", pg_dsn)
    session = from_dir(home, model=ScriptedModel(["Got it."])).session()
    assert session.send_sync("pasted from a binary\x00file") == "Got it."
    assert session.save_error is None
    [saved] = Conversations(home).list()
    # The message itself comes back exactly; its searchable text holds U+FFFD instead.
    assert Conversations(home).export(saved.id)[0]["content"] == "pasted from a binary\x00file"
    [hit] = Conversations(home).recall("binary\x00file")
    assert "binary\ufffdfile" in hit.snippet


def test_a_copy_taken_while_others_write_is_one_moment(tmp_path: Path, pg_dsn: str) -> None:
    home = make_home(tmp_path / "a", pg_dsn)
    memory(home).add("The first entry.")
    stop = threading.Event()

    def write() -> None:
        n = 0
        while not stop.is_set() and n < 400:  # short entries, well inside the limit
            memory(home).add(f"E{n}")
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        copies = [database_store(home).snapshot() for _ in range(40)]
    finally:
        stop.set()
        writer.join()
    assert len({len(c.changes) for c in copies}) > 1  # the writer did write meanwhile
    for copy in copies:
        [(target, body)] = copy.memory
        latest = max(copy.changes, key=lambda row: int(str(row[0])))
        assert (target, latest[8]) == ("self", digest(body))  # the file and its last record
        assert len(body.splitlines()) == len(copy.changes)  # one entry per recorded add


def test_many_undos_at_once_in_one_process_all_land(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLNEXUS_STORE_TIMEOUT", "3")
    home = make_home(tmp_path / "a", pg_dsn)
    for n in range(12):  # more than one process's pool holds (8)
        memory(home).add(f"Entry {n}.")
    said: list[str] = []
    failed: list[BaseException] = []

    def undo(id: int) -> None:
        try:
            said.append(History(home).undo(id))
        except BaseException as exc:  # reported by the assertion below
            failed.append(exc)

    threads = [threading.Thread(target=undo, args=(id,)) for id in range(1, 13)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    assert len(said) == 12
    assert compose_soul(home).memory_entries == ()


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://ada:s3cret@db.example:5433/vigil", "postgresql://db.example:5433/vigil"),
        (
            "host=db.example port=5433 dbname=vigil password=s3cret",
            "postgresql://db.example:5433/vigil",
        ),
        ("postgresql://ada:s3cret@[::1:5/vigil", "postgresql://?"),
        ("postgresql://ada:s3:cret@db.example/vigil", "postgresql://db.example/vigil"),
        ("postgresql://db.example", "postgresql://db.example/"),
    ],
)
def test_a_store_is_named_without_its_password_whatever_the_address(dsn: str, shown: str) -> None:
    assert describe(dsn) == shown
