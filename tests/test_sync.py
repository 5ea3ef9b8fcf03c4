"""The sync door: `Tool.execute_sync` and `Session.send_sync` from plain code."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from toolnexus import define_tool
from toolnexus.agents import from_dir
from toolnexus.agents.models import AssistantMessage, ScriptedModel, ToolCall


@define_tool
async def where() -> str:
    """Name the thread and loop the handler runs on."""
    loop = asyncio.get_running_loop()
    return f"{threading.current_thread().name} {id(loop)}"


def test_execute_sync_returns_the_result_and_uses_one_loop() -> None:
    first = where.execute_sync({})
    second = where.execute_sync({})
    assert not first.is_error
    assert first.output == second.output  # one background loop for every sync call
    assert first.output.startswith("toolnexus-sync ")


def test_execute_sync_works_where_a_loop_is_already_running() -> None:
    async def notebook_cell() -> str:
        return where.execute_sync({}).output  # a notebook: a loop runs in this thread

    assert asyncio.run(notebook_cell()).startswith("toolnexus-sync ")


def test_execute_sync_keeps_error_results() -> None:
    result = where.execute_sync({"unexpected": 1})
    assert result.is_error
    assert "unexpected" in result.output


def test_send_sync_runs_a_whole_turn_with_tools(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
    model = ScriptedModel(
        [
            AssistantMessage(tool_calls=(ToolCall("memory", {"action": "add", "text": "tea"}),)),
            "Noted.",
            "Still here.",
        ]
    )
    session = from_dir(tmp_path, model=model).session()
    assert session.send_sync("I like tea") == "Noted."
    assert session.send_sync("hello?") == "Still here."
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == "- tea\n"


def test_send_sync_raises_what_send_raises(tmp_path: Path) -> None:
    from toolnexus.errors import AgentError

    (tmp_path / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
    with pytest.raises(AgentError, match="this session has no model"):
        from_dir(tmp_path).session().send_sync("hi")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_loop() -> None:
    where.execute_sync({})  # the parent's loop thread exists
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's loop thread is not here
        try:
            ok = not where.execute_sync({}).is_error
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 2) == b"ok"
    assert status == 0


@define_tool
async def outer_async() -> str:
    """Call another tool the sync way from inside an async handler."""
    return "outer:" + where.execute_sync({}).output.split()[0]


@define_tool
def outer_sync() -> str:
    """Call another tool the sync way from inside a sync handler (a worker thread)."""
    return "outer:" + inner_sync.execute_sync({}).output


@define_tool
def inner_sync() -> str:
    """A sync handler: it needs a worker thread of its own."""
    return "inner"


def test_a_sync_call_inside_a_sync_call_does_not_wait_for_itself() -> None:
    # On the background loop's own thread: the nested call runs on a loop of its own.
    assert outer_async.execute_sync({}).output == "outer:toolnexus-sync-nested_0"


def test_many_nested_sync_calls_at_once_do_not_exhaust_the_workers() -> None:
    from concurrent.futures import ThreadPoolExecutor

    # More callers than the loop has worker threads, each waiting on a nested call.
    with ThreadPoolExecutor(max_workers=40) as pool:
        results = list(pool.map(lambda _: outer_sync.execute_sync({}).output, range(40)))
    assert results == ["outer:inner"] * 40
