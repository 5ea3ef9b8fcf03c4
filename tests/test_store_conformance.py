"""One conformance suite for the `Store` seam: every check runs against the home's folder and
against a real PostgreSQL database, through the shape the code above the store uses.

Where the two differ on purpose, the difference is a property of the store, checked here
too: trust marks (the folder's alone), announcing changes (a database's), where forgotten
text goes, and the history's size on disk (which only a folder can tell).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pghome import make_home

from toolnexus.errors import MemoryEditError
from toolnexus.home._lock import WriteCancelled
from toolnexus.store import FolderStore, PgStore, Store, configured_store, copy
from toolnexus.store._protocol import Outcome
from toolnexus.store._records import Pending, compact_cutoff, digest
from toolnexus.store._sessions import Record
from toolnexus.store.postgres._connection import close_pools

KINDS = ["folder", "postgres"]


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh home's store: its folder, or a database of the test's own."""
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None
    home = make_home(tmp_path / "ada", dsn)
    chosen = configured_store(home)
    yield chosen
    if dsn is not None:
        close_pools()


def add(text: str) -> object:
    """An edit that appends one entry, recorded as an add."""

    def edit(data: bytes | None) -> Outcome:
        new = (data or b"") + f"- {text}\n".encode()
        return new, f"added {text}", (Pending("add", None, text),)

    return edit


def write(store: Store, text: str, *, target: str = "self") -> str:
    return store.edit(target, add(text), source="test", limit=8000)  # type: ignore[arg-type]


def record(text: str) -> Record:
    return Record(role="user", name="", data=f'{{"role":"user","content":"{text}"}}', text=text)


# -- what it is --------------------------------------------------------------------------


def test_it_is_the_store_its_settings_name(store: Store) -> None:
    assert isinstance(store, Store)
    assert isinstance(store, FolderStore | PgStore)
    expected = "the folder " if isinstance(store, FolderStore) else "the PostgreSQL store "
    assert store.where.startswith(expected)


def test_its_differences_are_properties_not_branches(store: Store) -> None:
    folder = isinstance(store, FolderStore)
    assert store.keeps_trust_marks is folder
    assert store.announces_changes is not folder
    assert store.forgotten_where  # a message names it either way


def test_a_sound_store_has_nothing_to_repair(store: Store) -> None:
    assert store.health() == []
    write(store, "a note")
    assert store.health() == []


def test_failures_pass_other_errors_through_untouched(store: Store) -> None:
    with store.failures():
        records = store.records()
    assert records is None or records.log(None, limit=None, grep=None) == []
    with pytest.raises(KeyError, match="not the store's"), store.failures():
        raise KeyError("not the store's")


# -- memory files ------------------------------------------------------------------------


def test_a_file_is_none_until_written_then_its_exact_bytes(store: Store) -> None:
    assert store.read("self") is None
    assert store.memory_file("self", limit=8000) is None
    assert write(store, "prefers tea") == "added prefers tea"
    assert store.read("self") == b"- prefers tea\n"
    assert store.read("user") is None
    sha, doc = store.memory_file("self", limit=8000) or ("", None)
    assert sha == digest(b"- prefers tea\n")
    assert doc is not None
    assert doc.entries == ("prefers tea",)


def test_each_edit_sees_the_last_ones_bytes(store: Store) -> None:
    for text in ("one", "two", "three"):
        write(store, text)
    assert store.read("self") == b"- one\n- two\n- three\n"


def test_an_edit_that_refuses_writes_and_records_nothing(store: Store) -> None:
    write(store, "kept")

    def refuse(data: bytes | None) -> Outcome:
        raise MemoryEditError("not found: x", kind="not_found")

    with pytest.raises(MemoryEditError, match="not found: x"):
        store.edit("self", refuse, source="test", limit=8000)
    assert store.read("self") == b"- kept\n"
    records = store.records()
    assert records is not None
    assert [c.after for c in records.log(None, limit=None, grep=None)] == ["kept"]


def test_an_edit_given_up_before_it_writes_writes_nothing(store: Store) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(WriteCancelled):
        store.edit("self", add("never"), source="test", limit=8000, cancel=cancel)  # type: ignore[arg-type]
    assert store.read("self") is None


def test_an_edit_that_writes_nothing_says_so_and_records_nothing(store: Store) -> None:
    write(store, "kept")
    said = store.edit("self", lambda data: (None, "nothing to do", ()), source="test", limit=8000)
    assert said == "nothing to do"
    records = store.records()
    assert records is not None
    assert len(records.log(None, limit=None, grep=None)) == 1


def test_then_runs_inside_the_write_and_ends_the_message(store: Store) -> None:
    said = store.edit("self", add("x"), source="test", limit=8000, then=lambda: " and then")  # type: ignore[arg-type]
    assert said == "added x and then"


# -- history -----------------------------------------------------------------------------


def test_the_history_is_newest_first_with_every_field(store: Store) -> None:
    write(store, "first note")
    write(store, "about the user", target="user")
    write(store, "second note")
    records = store.records()
    assert records is not None
    log = records.log(None, limit=None, grep=None)
    assert [(c.id, c.target, c.action, c.after, c.source) for c in log] == [
        (3, "self", "add", "second note", "test"),
        (2, "user", "add", "about the user", "test"),
        (1, "self", "add", "first note", "test"),
    ]
    assert [c.id for c in records.log("self", limit=1, grep=None)] == [3]
    assert [c.id for c in records.log(None, limit=None, grep="USER")] == [2]


def test_undo_and_restore_read_what_they_need(store: Store) -> None:
    write(store, "one")
    write(store, "two")
    records = store.records()
    assert records is not None
    latest = records.latest_change("self")
    assert latest is not None
    assert latest.change.id == 2
    assert records.find_change(1) is not None
    assert records.find_change(99) is None
    assert records.state_bytes(latest.digest) == b"- one\n- two\n"
    assert records.state_before(latest) == b"- one\n"


def test_forget_blanks_a_text_everywhere_it_is_kept(store: Store) -> None:
    write(store, "a secret token 1234")
    write(store, "an ordinary note")
    records = store.records()
    assert records is not None
    done = records.forget(1)
    assert done is not None
    row, others, dropped = done
    assert row.change.id == 1
    assert others == []
    assert dropped >= 1  # the versions that held it are gone
    [forgotten] = [c for c in records.log(None, limit=None, grep=None) if c.id == 1]
    assert (forgotten.before, forgotten.after) == (None, None)
    assert forgotten.source.endswith("redacted")
    assert records.forget(99) is None


def test_compact_keeps_each_files_latest_record(store: Store) -> None:
    for text in ("a", "b", "c"):
        write(store, text)
    records = store.records()
    assert records is not None
    # Times are kept to the millisecond: wait until "now" is past the last write's.
    last = records.log(None, limit=1, grep=None)[0].time
    while compact_cutoff(0) <= last:
        pass
    assert records.compact(0) == (2, 1)
    assert [c.after for c in records.log(None, limit=None, grep=None)] == ["c"]
    size = records.size()
    if isinstance(store, FolderStore):
        assert size is not None
        assert size[0] == "state.db"
        assert size[1] > 0
    else:
        assert size is None


# -- conversations -----------------------------------------------------------------------


def test_a_saved_conversation_is_listed_read_searched_and_removed(store: Store) -> None:
    talk = store.talk(create=True)
    assert talk is not None
    assert talk.save(
        session="s1",
        model="m",
        soul="digest",
        records=[record("the kayak is named Drift"), record("it is green")],
    )
    assert not talk.save(session="gone", model=None, soul="d", records=[], create=False)
    [meta] = talk.sessions()
    assert (meta.id, meta.model, meta.messages) == ("s1", "m", 2)
    latest = talk.latest()
    assert latest is not None
    assert latest.id == "s1"
    assert talk.match_ids("s") == ["s1"]
    assert [m.data for m in talk.messages("s1")] == [
        record("the kayak is named Drift").data,
        record("it is green").data,
    ]
    assert talk.has_any()
    # What recall ranks: the messages holding a form, how many, and the lines around them.
    count, found = talk.matching(["kayak", "boat"], cap=10)
    assert (count, [(m.session, m.seq) for m in found]) == (1, [("s1", 1)])
    assert found[0].chars == len("the kayak is named Drift")
    assert talk.matching(["drif*"], cap=10)[0] == 1  # a prefix
    assert talk.matching(["named drift"], cap=10)[0] == 1  # words in order
    assert talk.matching(["drift named"], cap=10)[0] == 0
    count, found = talk.matching(["kayak", "green"], cap=1)
    assert (count, len(found)) == (2, 1)  # the count, whatever the cap
    assert (found[0].session, found[0].seq) == ("s1", 2)  # the newest
    assert talk.matching(["?!", ""], cap=10) == (0, [])  # nothing to search for is no error
    assert talk.matching(["kayak"], cap=10, exclude="s1") == (0, [])
    lines = talk.lines([("s1", 2), ("s1", 1), ("s1", 3), ("nope", 1)])
    assert [(k, v.text, v.role) for k, v in sorted(lines.items())] == [
        (("s1", 1), "the kayak is named Drift", "user"),
        (("s1", 2), "it is green", "user"),
    ]
    total, mean = talk.corpus()
    assert total == 2
    assert mean == pytest.approx((24 + 11) / 2)
    assert talk.sessions_holding(["named drift"]) == ["s1"]
    assert talk.remove("s1") == 2
    assert talk.sessions() == []


def test_a_memory_change_is_found_by_search_too(store: Store) -> None:
    write(store, "the staging cluster is quokkaberry")
    talk = store.talk(create=True)
    assert talk is not None
    count, [hit] = talk.history_matching(["quokkaberry"], cap=5)
    assert count == 1
    assert hit.kind == "memory"
    assert hit.role == "memory self add"
    assert "the staging cluster is quokkaberry" in hit.text


# -- copying and watching ----------------------------------------------------------------


def test_a_snapshot_copies_exactly_into_the_other_kind(
    store: Store, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    write(store, "first")
    write(store, "about the user", target="user")
    talk = store.talk(create=True)
    assert talk is not None
    talk.save(session="s1", model=None, soul="d", records=[record("hello there")])
    if isinstance(store, FolderStore):
        other = configured_store(make_home(tmp_path / "b", request.getfixturevalue("pg_dsn")))
    else:
        other = FolderStore(make_home(tmp_path / "b", None))
    copied = copy(store, other)
    assert other.snapshot() == copied == store.snapshot()
    assert other.read("self") == b"- first\n"


def test_notifications_end_at_once_or_hear_other_machines(store: Store) -> None:
    async def first() -> list[None]:
        heard: list[None] = []
        async with asyncio.timeout(30):
            async for item in store.notifications():
                heard.append(item)
                break  # a database yields once as soon as it listens
        return heard

    heard = asyncio.run(first())
    assert len(heard) == (1 if store.announces_changes else 0)


# -- writes held for review ----------------------------------------------------------------


def test_held_writes_are_kept_whole_listed_in_order_and_taken_once(store: Store) -> None:
    from toolnexus.store._review import HeldOp

    review = store.review(create=True)
    assert review is not None
    assert review.pending() == []
    one = review.hold(
        time="2026-01-01T00:00:00.000Z",
        target="self",
        operations=[HeldOp("add", "line one\nline two")],
        batch=False,
        source="tool session=s call=c untrusted=web",
    )
    two = review.hold(
        time="2026-01-01T00:00:01.000Z",
        target="user",
        operations=[HeldOp("add", "a"), HeldOp("replace", "b", "c"), HeldOp("remove", "d")],
        batch=True,
        source="mcp session=t untrusted=mcp-client",
    )
    assert two.id > one.id
    assert review.pending() == [one, two]
    assert store.read("self") is None  # holding writes no memory file
    assert review.take(one.id) == one
    assert review.take(one.id) is None  # two people deciding on one write: one gets it
    assert review.pending() == [two]
    review.put_back(one)
    assert review.pending() == [one, two]  # back under its own id


def test_a_held_write_reads_back_as_the_json_the_command_line_prints(store: Store) -> None:
    from toolnexus.store._review import HeldOp

    review = store.review(create=True)
    assert review is not None
    held = review.hold(
        time="2026-01-01T00:00:00.000Z",
        target="self",
        operations=[HeldOp("replace", "old", "new")],
        batch=False,
        source="tool",
    )
    [back] = review.pending()
    assert back.to_dict() == {
        "id": held.id,
        "target": "self",
        "action": "replace",
        "text": "old",
        "with": "new",
        "operations": None,
        "source": "tool",
        "time": "2026-01-01T00:00:00.000Z",
    }


def test_a_held_skill_write_keeps_its_own_fields(store: Store) -> None:
    from toolnexus.store._review import HeldOp

    review = store.review(create=True)
    assert review is not None
    memory = review.hold(
        time="2026-01-01T00:00:00.000Z",
        target="self",
        operations=[HeldOp("add", "a note")],
        batch=False,
        source="tool",
    )
    skill = review.hold(
        time="2026-01-01T00:00:01.000Z",
        target="skill",
        operations=[HeldOp("write_file", "Roll back.", name="deploy", path="refs/rollback.md")],
        batch=False,
        source="tool session=s call=c untrusted=web",
    )
    assert review.pending() == [memory, skill]
    assert review.take(skill.id) == skill
    assert skill.to_dict() == {
        "id": skill.id,
        "target": "skill",
        "action": "write_file",
        "text": "Roll back.",
        "with": None,
        "operations": None,
        "source": "tool session=s call=c untrusted=web",
        "time": "2026-01-01T00:00:01.000Z",
        "name": "deploy",
        "path": "refs/rollback.md",
        "description": None,
    }
    assert "name" not in memory.to_dict()  # a memory write's JSON is as it was
