"""The conversation loop: tool calls in order, every failure fed back, the round cap."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from _loopback_openai import LoopbackServer, completion, loopback_server

from toolnexus import Tool, ToolError, define_tool
from toolnexus.agents import Agent, Session
from toolnexus.agents.models import (
    AssistantMessage,
    ModelRequest,
    OpenAIModel,
    ScriptedModel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    call,
)
from toolnexus.errors import AgentError, ModelError, ToolRoundsExceeded

CALLS: list[str] = []
TIMEOUT = 10.0


@define_tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    CALLS.append(f"add({a}, {b})")
    return a + b


@define_tool
async def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    CALLS.append(f"lookup({key})")
    if key == "missing":
        raise ToolError(f"no such key: {key}")
    if key == "crash":
        raise RuntimeError("the database is on fire")
    return f"value of {key}"


@pytest.fixture(autouse=True)
def _reset_calls() -> Iterator[None]:
    CALLS.clear()
    yield
    CALLS.clear()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "IDENTITY.md").write_text(
        "---\nname: Calc\n---\nYou add numbers.\n", encoding="utf-8"
    )
    return tmp_path


def session_for(
    home: Path, model: ScriptedModel | OpenAIModel, *, max_tool_rounds: int = 16
) -> Session:
    return Agent(home, tools=[add, lookup], model=model, max_tool_rounds=max_tool_rounds).session()


async def test_text_answer_and_history(home: Path) -> None:
    model = ScriptedModel(["hello", "again"])
    session = session_for(home, model)
    assert await session.send("hi") == "hello"
    assert await session.send("once more") == "again"
    assert session.messages == (
        UserMessage("hi"),
        AssistantMessage("hello"),
        UserMessage("once more"),
        AssistantMessage("again"),
    )
    assert model.requests[1] == ModelRequest(
        system=session.system_prompt,
        messages=session.messages[:3],
        tools=(add, lookup),
    )


async def test_several_tool_calls_in_one_turn_run_in_order(home: Path) -> None:
    model = ScriptedModel(
        [
            AssistantMessage(
                "adding",
                tool_calls=(call("add", a=1, b=2), call("lookup", key="x"), call("add", a=3, b=4)),
            ),
            "3, value of x, 7",
        ]
    )
    session = session_for(home, model)
    assert await session.send("go") == "3, value of x, 7"
    assert CALLS == ["add(1, 2)", "lookup(x)", "add(3, 4)"]
    assert session.messages[2:5] == (
        ToolResultMessage(call_id="call_1_1", name="add", output="3"),
        ToolResultMessage(call_id="call_1_2", name="lookup", output="value of x"),
        ToolResultMessage(call_id="call_1_3", name="add", output="7"),
    )
    # The second request carried the calls and their results.
    assert model.requests[1].messages == session.messages[:5]


async def test_every_failure_goes_back_to_the_model(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel(
        [
            [
                call("lookup", key="missing"),
                call("lookup", key="crash"),
                call("add", a="one", b=2),
                call("divide", a=1, b=0),
                ToolCall("add", id="bad", raw_arguments='{"a": 1', arguments_error="invalid JSON"),
                call("add", a=1, b=1),
            ],
            "recovered",
        ]
    )
    session = session_for(home, model)
    with caplog.at_level(logging.WARNING, logger="toolnexus.agents"):
        assert await session.send("try everything") == "recovered"
    results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [(r.output, r.is_error) for r in results] == [
        ("no such key: missing", True),
        ("RuntimeError: the database is on fire", True),
        (
            "invalid arguments: a: Input should be a valid integer, "
            "unable to parse string as an integer",
            True,
        ),
        ("unknown tool 'divide': the tools are add, lookup", True),
        ("invalid JSON", True),
        ("2", False),
    ]
    # The arguments error stopped the call before the tool ran.
    assert CALLS == ["lookup(missing)", "lookup(crash)", "add(1, 1)"]
    # The unexpected exception is kept (and logged), never hidden.
    crash = results[1].exception
    assert isinstance(crash, RuntimeError)
    assert str(crash) == "the database is on fire"
    assert [r.exception for r in results if r is not results[1]] == [None] * 5
    [record] = caplog.records
    assert record.exc_info is not None
    assert record.exc_info[1] is crash
    assert record.getMessage() == (
        "tool 'lookup' failed unexpectedly: RuntimeError: the database is on fire"
    )


async def test_round_cap(home: Path) -> None:
    model = ScriptedModel([call("add", a=n, b=n) for n in range(5)])
    session = session_for(home, model, max_tool_rounds=2)
    with pytest.raises(ToolRoundsExceeded) as info:
        await session.send("loop forever")
    assert str(info.value) == (
        "the model still called tools (add) after 2 tool rounds (max_tool_rounds=2); raise "
        "max_tool_rounds (from_dir(..., max_tool_rounds=...) or "
        "agent.session(max_tool_rounds=...)) if the task needs more, or check why the model "
        "keeps calling tools"
    )
    assert isinstance(info.value, AgentError)
    assert CALLS == ["add(0, 0)", "add(1, 1)"]
    # The third call never ran and is not in the history, which stays valid to send on.
    assert len(model.requests) == 3
    assert session.messages[-1] == ToolResultMessage(call_id="call_2_1", name="add", output="2")


async def test_round_cap_zero_still_allows_plain_answers(home: Path) -> None:
    session = session_for(home, ScriptedModel(["fine", call("add", a=1, b=1)]), max_tool_rounds=0)
    assert await session.send("hi") == "fine"
    with pytest.raises(ToolRoundsExceeded, match=r"^the model still called tools \(add\) after 0"):
        await session.send("add")
    assert CALLS == []


async def test_the_cap_counts_per_send(home: Path) -> None:
    turns: list[object] = []
    for n in range(3):
        turns += [call("add", a=n, b=0), call("add", a=n, b=1), f"done {n}"]
    session = session_for(home, ScriptedModel(turns), max_tool_rounds=2)  # type: ignore[arg-type]
    assert [await session.send(str(n)) for n in range(3)] == ["done 0", "done 1", "done 2"]


async def test_model_errors_propagate_and_keep_the_history(home: Path) -> None:
    session = session_for(home, ScriptedModel([call("add", a=1, b=2)]))
    with pytest.raises(ModelError, match="ScriptedModel ran out of turns"):
        await session.send("add")
    assert [m.role for m in session.messages] == ["user", "assistant", "tool"]


async def test_a_model_must_answer_an_assistant_message(home: Path) -> None:
    class Wrong:
        async def complete(self, request: ModelRequest, /) -> AssistantMessage:
            return "plain text"  # type: ignore[return-value]

        def __repr__(self) -> str:
            return "Wrong()"

    session = Agent(home, model=Wrong()).session()
    with pytest.raises(ModelError) as info:
        await session.send("hi")
    assert str(info.value) == (
        "Wrong() answered str: Model.complete must return an AssistantMessage"
    )


async def test_one_send_at_a_time(home: Path) -> None:
    release = asyncio.Event()

    async def slow(request: ModelRequest) -> str:
        await release.wait()
        return "slow answer"

    session = session_for(home, ScriptedModel([slow]))
    first = asyncio.create_task(session.send("one"))
    await asyncio.sleep(0)
    with pytest.raises(AgentError, match="already answering a message"):
        await session.send("two")
    release.set()
    assert await asyncio.wait_for(first, 10) == "slow answer"
    assert [m.role for m in session.messages] == ["user", "assistant"]


async def test_text_next_to_tool_calls_is_kept_and_the_last_text_is_the_answer(home: Path) -> None:
    session = session_for(
        home,
        ScriptedModel([AssistantMessage("let me check", tool_calls=(call("add", a=2, b=2),)), "4"]),
    )
    assert await session.send("2+2?") == "4"
    assert session.messages[1] == AssistantMessage(
        "let me check", tool_calls=(ToolCall("add", {"a": 2, "b": 2}, id="call_1_1"),)
    )


# -- through the OpenAI-compatible adapter, against a real local server ------------


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    with loopback_server() as srv:
        yield srv


async def test_a_whole_conversation_over_http(home: Path, server: LoopbackServer) -> None:
    server.reply(
        completion(
            tool_calls=[
                ("call_1", "add", '{"a": 20, "b": 22}'),
                ("call_2", "lookup", '{"key": "missing"}'),
                ("call_3", "add", "{oops"),
            ]
        )
    )
    server.reply(completion("20+22=42"))
    model = OpenAIModel("loopback-model", base_url=server.base_url, api_key="k", max_retries=0)
    async with model:
        session = session_for(home, model)
        assert await session.send("what is 20+22?") == "20+22=42"
    first, second = server.bodies
    assert first["messages"] == [
        {"role": "system", "content": session.system_prompt},
        {"role": "user", "content": "what is 20+22?"},
    ]
    assert [t["function"]["name"] for t in first["tools"]] == ["add", "lookup"]
    assert second["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 20, "b": 22}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"key": "missing"}'},
            },
            {"id": "call_3", "type": "function", "function": {"name": "add", "arguments": "{oops"}},
        ],
    }
    assert second["messages"][3:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "42"},
        {"role": "tool", "tool_call_id": "call_2", "content": "no such key: missing"},
        {
            "role": "tool",
            "tool_call_id": "call_3",
            "content": "invalid arguments: not valid JSON (Expecting property name enclosed "
            "in double quotes at position 1): {oops",
        },
    ]
    assert CALLS == ["add(20, 22)", "lookup(missing)"]


def slow_tool(started: asyncio.Event) -> Tool:
    @define_tool
    async def slow(x: int) -> str:
        """Take a long while."""
        started.set()
        await asyncio.sleep(60)
        return "never"

    return slow


async def test_a_cancelled_send_answers_every_call_and_the_session_goes_on(home: Path) -> None:
    started = asyncio.Event()
    model = ScriptedModel(
        [[call("lookup", key="a"), call("slow", x=1), call("add", a=3, b=4)], "after"]
    )
    session = Agent(home, tools=[add, lookup, slow_tool(started)], model=model).session()
    sending = asyncio.ensure_future(asyncio.wait_for(session.send("go"), TIMEOUT))
    await asyncio.wait_for(started.wait(), TIMEOUT)
    sending.cancel()  # as a timeout would, while the second tool runs
    with pytest.raises(asyncio.CancelledError):
        await sending
    assert CALLS == ["lookup(a)"]
    assert session.messages[2:] == (
        ToolResultMessage(call_id="call_1_1", name="lookup", output="value of a"),
        ToolResultMessage(
            call_id="call_1_2",
            name="slow",
            output="cancelled: the tool call was interrupted before it finished",
            is_error=True,
        ),
        ToolResultMessage(
            call_id="call_1_3",
            name="add",
            output="cancelled: the tool call did not run",
            is_error=True,
        ),
    )
    assert await session.send("and now?") == "after"
    assert [m.role for m in model.requests[-1].messages] == [
        *("user", "assistant", "tool", "tool", "tool", "user")
    ]


async def test_a_send_that_times_out_leaves_a_history_a_provider_accepts(
    home: Path, server: LoopbackServer
) -> None:
    started = asyncio.Event()
    server.reply(
        completion(tool_calls=[("c1", "lookup", '{"key": "a"}'), ("c2", "slow", '{"x": 1}')])
    )
    server.reply(completion("fine"))
    model = OpenAIModel("loopback-model", base_url=server.base_url, api_key="k", max_retries=0)
    async with model:
        session = Agent(home, tools=[lookup, slow_tool(started)], model=model).session()
        # Time out (a cancellation) once the slow tool runs: waited for, not slept for.
        sending = asyncio.ensure_future(session.send("go"))
        await asyncio.wait_for(started.wait(), TIMEOUT)
        sending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sending
        assert await session.send("again") == "fine"
    sent = server.bodies[1]["messages"]
    asked = [tc["id"] for m in sent if m.get("tool_calls") for tc in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert asked == answered == ["c1", "c2"]
    assert sent[-2:] == [
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "cancelled: the tool call was interrupted before it finished",
        },
        {"role": "user", "content": "again"},
    ]
