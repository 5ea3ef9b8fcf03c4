"""Watching a home: a new soul after edits and memory writes, errors reported, clean stops.

These machines are slow and noisy: every wait has a generous timeout and no
test asserts how long anything took.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from toolnexus.agents import Home, Soul, from_dir, memory_tool, watch_home
from toolnexus.agents import _watch as watch_module
from toolnexus.agents._watch import is_relevant
from toolnexus.agents.models import ScriptedModel, call
from toolnexus.errors import HomeError

TIMEOUT = 10.0
Watch = AsyncGenerator["Soul | HomeError", None]


def write_identity(home: Path, body: str, *, name: str = "Ada") -> None:
    (home / "IDENTITY.md").write_text(f"---\nname: {name}\n---\n{body}\n", encoding="utf-8")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    write_identity(path, "You are Ada.")
    return path


async def next_item(watch: Watch) -> Soul | HomeError:
    return await asyncio.wait_for(watch.__anext__(), TIMEOUT)


async def next_soul(watch: Watch) -> Soul:
    item = await next_item(watch)
    assert isinstance(item, Soul), item
    return item


async def test_yields_after_an_edit(home: Path) -> None:
    async with contextlib.aclosing(watch_home(home, initial=True)) as watch:
        first = await next_soul(watch)
        assert "You are Ada." in first.text
        write_identity(home, "You are Ada, now with a beard.")
        second = await next_soul(watch)
        assert "now with a beard" in second.text
        assert second.digest != first.digest


async def test_yields_after_a_memory_write(home: Path) -> None:
    tool = memory_tool(home)
    async with contextlib.aclosing(watch_home(home, initial=True)) as watch:
        await next_soul(watch)
        result = await tool.execute({"action": "add", "text": "likes green tea"})
        assert not result.is_error
        soul = await next_soul(watch)
        assert soul.memory_entries == ("likes green tea",)


async def test_reports_a_broken_identity_then_recovers(home: Path) -> None:
    async with contextlib.aclosing(watch_home(home, initial=True)) as watch:
        await next_soul(watch)
        (home / "IDENTITY.md").write_text(
            "---\nname: Ada\nmood: grumpy\n---\nx\n", encoding="utf-8"
        )
        error = await next_item(watch)
        assert isinstance(error, HomeError)
        assert "unknown key 'mood'" in str(error)
        write_identity(home, "You are Ada again.")
        soul = await next_soul(watch)
        assert "You are Ada again." in soul.text


async def test_a_burst_of_writes_ends_in_one_soul_with_all_of_them(home: Path) -> None:
    tool = memory_tool(home)
    texts = [f"note number {n}" for n in range(5)]
    async with contextlib.aclosing(watch_home(home, initial=True)) as watch:
        await next_soul(watch)
        for text in texts:
            assert not (await tool.execute({"action": "add", "text": text})).is_error
        # However the OS groups the events, the watcher settles on the final state and
        # never yields the same soul twice in a row.
        seen: list[Soul] = []
        while not seen or seen[-1].memory_entries != tuple(texts):
            seen.append(await next_soul(watch))
        digests = [soul.digest for soul in seen]
        assert all(a != b for a, b in itertools.pairwise(digests))


async def test_unrelated_files_do_not_yield(home: Path) -> None:
    async with contextlib.aclosing(watch_home(home, initial=True)) as watch:
        await next_soul(watch)
        (home / "notes.txt").write_text("not part of the soul", encoding="utf-8")
        (home / ".MEMORY.md.tmp123").write_text("- half written", encoding="utf-8")
        (home / "IDENTITY.md.swp").write_text("swap", encoding="utf-8")
        write_identity(home, "Changed for real.")
        # The next item is the real change, not one for the files before it.
        soul = await next_soul(watch)
        assert "Changed for real." in soul.text


async def test_unrelated_files_do_not_even_recompose(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An unchanged soul is never yielded anyway, so count compositions to see the filter work.
    composed: list[None] = []
    compose = watch_module._compose

    async def counting(home: Home, *, strict: bool) -> Soul | HomeError:
        composed.append(None)
        return await compose(home, strict=strict)

    monkeypatch.setattr(watch_module, "_compose", counting)
    # Record the filter's verdict on each change the OS reports, to know when the junk
    # has reached the watcher (and what it made of it) without sleeping for it.
    junk = {"notes.txt", "IDENTITY.md.swp", "4913"}
    verdicts: dict[str, bool] = {}
    all_junk_seen = asyncio.Event()
    relevant = watch_module.is_relevant

    def recording(home: Home, path: str | os.PathLike[str]) -> bool:
        verdict = relevant(home, path)
        verdicts[Path(path).name] = verdict
        if junk <= verdicts.keys():
            all_junk_seen.set()
        return verdict

    monkeypatch.setattr(watch_module, "is_relevant", recording)
    async with contextlib.aclosing(
        watch_home(home, initial=True, debounce_ms=20, max_delay_ms=50)
    ) as watch:
        await next_soul(watch)
        # The watcher runs only while someone waits for its next item.
        waiting = asyncio.ensure_future(next_soul(watch))
        (home / "notes.txt").write_text("not part of the soul", encoding="utf-8")
        (home / "IDENTITY.md.swp").write_text("swap", encoding="utf-8")
        (home / "4913").write_text("", encoding="utf-8")
        await asyncio.wait_for(all_junk_seen.wait(), TIMEOUT)
        assert {name: verdicts[name] for name in junk} == dict.fromkeys(junk, False)
        assert len(composed) == 1  # the baseline only
        write_identity(home, "Changed for real.")
        soul = await waiting
        assert "Changed for real." in soul.text
    assert len(composed) == 2  # the baseline and the real change


async def test_without_initial_the_first_item_is_a_change(home: Path) -> None:
    watch = watch_home(home)
    pending = asyncio.ensure_future(next_item(watch))
    # No readiness signal without `initial`: keep writing until the watcher sees one.
    for n in range(50):
        write_identity(home, f"Edit {n}.")
        done, _ = await asyncio.wait({pending}, timeout=0.2)
        if done:
            break
    item = pending.result()
    assert isinstance(item, Soul)
    assert "Edit " in item.text
    await watch.aclose()


async def test_stop_event_ends_the_iteration(home: Path) -> None:
    stop = asyncio.Event()
    seen: list[Soul | HomeError] = []

    async def consume() -> None:
        async for item in watch_home(home, initial=True, stop_event=stop):
            seen.append(item)
            stop.set()

    await asyncio.wait_for(consume(), TIMEOUT)
    assert len(seen) == 1


async def test_breaking_out_stops_cleanly(home: Path) -> None:
    async def consume() -> Soul | HomeError:
        async for item in watch_home(home, initial=True):
            return item
        raise AssertionError("the watch ended without an item")

    assert isinstance(await asyncio.wait_for(consume(), TIMEOUT), Soul)


async def test_cancelling_the_consumer_stops_cleanly(home: Path) -> None:
    watch = watch_home(home, initial=True)
    await next_soul(watch)
    task = asyncio.ensure_future(watch.__anext__())
    for _ in range(5):  # let the task run into the watcher and wait there
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, TIMEOUT)
    await asyncio.wait_for(watch.aclose(), TIMEOUT)


async def test_watching_never_touches_a_running_session(home: Path) -> None:
    model = ScriptedModel([call("memory", action="add", text="watched"), "saved"])
    session = from_dir(home, model=model).session()
    prompt = session.system_prompt
    async with contextlib.aclosing(watch_home(home, initial=True)) as watch:
        await next_soul(watch)
        assert await session.send("remember") == "saved"
        soul = await next_soul(watch)
        assert "watched" in soul.text
    assert session.system_prompt == prompt
    assert "watched" not in prompt


async def test_a_missing_home_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HomeError, match="does not exist"):
        await watch_home(tmp_path / "nowhere").__anext__()


@pytest.mark.parametrize(
    ("rel", "relevant"),
    [
        pytest.param("IDENTITY.md", True, id="identity"),
        pytest.param("MEMORY.md", True, id="memory"),
        pytest.param("USER.md", True, id="user"),
        pytest.param("soul.md.j2", True, id="template"),
        pytest.param("skills", True, id="skills-folder"),
        pytest.param("skills/cite/SKILL.md", True, id="skill-file"),
        pytest.param("skills/cite/references/guide.md", True, id="file-beside-a-skill"),
        pytest.param(".MEMORY.md.lock", False, id="memory-lock"),
        pytest.param(".MEMORY.md.tmp-1234", False, id="memory-temp"),
        pytest.param(".USER.md.x", False, id="user-temp"),
        pytest.param(".IDENTITY.md.swp", False, id="vim-swap"),
        pytest.param("IDENTITY.md~", False, id="backup"),
        pytest.param("#IDENTITY.md#", False, id="emacs-autosave"),
        pytest.param(".#IDENTITY.md", False, id="emacs-lock"),
        pytest.param("4913", False, id="vim-write-test"),
        pytest.param("skills/cite/.SKILL.md.swp", False, id="swap-in-skill"),
        pytest.param("skills/cite/SKILL.md~", False, id="backup-in-skill"),
        pytest.param("skills/cite/4913", False, id="vim-write-test-in-skill"),
        pytest.param("skills/4913", True, id="skill-folder-named-4913"),
        pytest.param("skills/4913/SKILL.md", True, id="skill-file-in-folder-named-4913"),
        pytest.param("skills/cite/.cache/x.md", False, id="hidden-folder-in-skill"),
        pytest.param("skills/.git/HEAD", False, id="hidden-folder"),
        pytest.param("notes.txt", False, id="unrelated"),
        pytest.param("", False, id="the-home-itself"),
    ],
)
def test_which_paths_count(tmp_path: Path, rel: str, relevant: bool) -> None:
    home = Home(tmp_path)
    assert is_relevant(home, tmp_path / rel if rel else tmp_path) is relevant


def test_paths_outside_the_home_do_not_count(tmp_path: Path) -> None:
    assert not is_relevant(Home(tmp_path / "home"), tmp_path / "IDENTITY.md")
