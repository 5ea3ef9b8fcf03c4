"""Streaming: `Session.stream` events, and both adapters streaming through their official
SDKs against a loopback server speaking server-sent events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _loopback_openai import SSE, LoopbackServer, add, anthropic_stream, openai_chunk

from toolnexus.agents import Agent, from_dir
from toolnexus.agents.models import (
    AnthropicModel,
    AssistantMessage,
    Done,
    ModelRequest,
    OpenAIModel,
    ScriptedModel,
    TextDelta,
    ToolFinished,
    ToolStarted,
    Usage,
    UsageReport,
    UserMessage,
    call,
)

pytestmark = pytest.mark.usefixtures("provider_env")


async def collect(agent: Agent, text: str) -> list[Any]:
    session = agent.session()
    return [event async for event in session.stream(text)]


# -- the session's events --------------------------------------------------------------


async def test_a_turn_reports_what_happens_in_order(home: Path) -> None:
    usage = Usage(input_tokens=5, output_tokens=2)
    model = ScriptedModel(
        [
            AssistantMessage("Adding.", tool_calls=(call("add", a=2, b=3),), usage=usage),
            AssistantMessage("It is 5.", usage=usage),
        ]
    )
    agent = Agent(home, tools=[add], model=model)
    session = agent.session()
    events = [event async for event in session.stream("2 + 3?")]
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "TextDelta",
        "UsageReport",
        "ToolStarted",
        "ToolFinished",
        "TextDelta",
        "UsageReport",
        "Done",
    ]
    started, finished = events[2], events[3]
    assert isinstance(started, ToolStarted)
    assert isinstance(finished, ToolFinished)
    assert started.call.name == "add"
    assert (finished.result.output, finished.result.is_error) == ("5", False)
    assert events[-1] == Done("It is 5.", usage + usage)
    assert session.usage == usage + usage
    # The history is the same as send would leave it.
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "assistant"]


async def test_leaving_a_stream_early_ends_the_turn_and_frees_the_session(home: Path) -> None:
    from contextlib import aclosing

    session = Agent(home, model=ScriptedModel(["first", "second"])).session()
    async with aclosing(session.stream("one")) as events:
        async for event in events:
            assert isinstance(event, TextDelta)
            break
    assert await session.send("two") == "second"
    assert [m.role for m in session.messages] == ["user", "user", "assistant"]


# -- OpenAI, streamed --------------------------------------------------------------------


def openai_usage(prompt: int, completion: int, cached: int) -> tuple[None, Any]:
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return openai_chunk(usage=usage)


async def test_openai_streams_text_and_assembles_tool_calls(
    server: LoopbackServer, home: Path
) -> None:
    server.reply(
        SSE(
            (
                openai_chunk({"role": "assistant", "content": "Let "}),
                openai_chunk({"content": "me add."}),
                openai_chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "add", "arguments": '{"a": 2'},
                            }
                        ]
                    }
                ),
                openai_chunk(
                    {"tool_calls": [{"index": 0, "function": {"arguments": ', "b": 3}'}}]}
                ),
                openai_chunk({}, "tool_calls"),
                openai_usage(50, 6, 40),
                "[DONE]",
            )
        )
    )
    server.reply(
        SSE(
            (
                openai_chunk({"role": "assistant", "content": "It is "}),
                openai_chunk({"content": "5."}),
                openai_chunk({}, "stop"),
                openai_usage(60, 3, 50),
                "[DONE]",
            )
        )
    )
    model = OpenAIModel("m", base_url=server.base_url, api_key="k", max_retries=0)
    events = await collect(Agent(home, tools=[add], model=model), "2 + 3?")
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["Let ", "me add.", "It is ", "5."]
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert (finished.call.id, finished.call.arguments) == ("call_a", {"a": 2, "b": 3})
    assert finished.result.output == "5"
    reports = [e.usage for e in events if isinstance(e, UsageReport)]
    assert reports == [Usage(10, 6, 40, 0), Usage(10, 3, 50, 0)]
    assert events[-1] == Done("It is 5.", Usage(20, 9, 90, 0))
    first = server.bodies[0]
    assert (first["stream"], first["stream_options"]) == (True, {"include_usage": True})
    # The call went back with its arguments as streamed.
    sent_call = server.bodies[1]["messages"][2]["tool_calls"][0]
    assert sent_call["function"] == {"name": "add", "arguments": '{"a": 2, "b": 3}'}


# -- Anthropic, streamed -----------------------------------------------------------------


async def test_anthropic_streams_text_and_assembles_tool_use(
    server: LoopbackServer, home: Path
) -> None:
    cache = {"input_tokens": 10, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 0}
    server.reply(
        anthropic_stream(
            ("text", ["Let ", "me add."]),
            ("tool_use", ("toolu_1", "add", ['{"a": 2', ', "b": 3}'])),
            stop="tool_use",
            usage=cache,
        )
    )
    server.reply(anthropic_stream(("text", ["It is ", "5."]), stop="end_turn", usage=cache))
    base = server.base_url.removesuffix("/v1")
    model = AnthropicModel("m", base_url=base, api_key="k", max_retries=0)
    events = await collect(Agent(home, tools=[add], model=model), "2 + 3?")
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "Let ",
        "me add.",
        "It is ",
        "5.",
    ]
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert (finished.call.id, finished.call.arguments) == ("toolu_1", {"a": 2, "b": 3})
    assert finished.result.output == "5"
    assert [e.usage for e in events if isinstance(e, UsageReport)] == [Usage(10, 7, 900, 0)] * 2
    assert events[-1] == Done("It is 5.", Usage(20, 14, 1800, 0))
    assert server.bodies[0]["stream"] is True
    assert server.bodies[1]["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "add",
        "input": {"a": 2, "b": 3},
    }


async def test_a_stream_cut_mid_call_is_not_run(server: LoopbackServer) -> None:
    server.reply(
        anthropic_stream(
            ("tool_use", ("toolu_1", "add", ['{"a": '])),
            stop="max_tokens",
            usage={"input_tokens": 1},
        )
    )
    base = server.base_url.removesuffix("/v1")
    model = AnthropicModel("m", base_url=base, api_key="k", max_retries=0)
    request = ModelRequest(system="s", messages=(UserMessage("x"),), tools=(add,))
    items = [item async for item in model.stream(request)]
    reply = items[-1]
    assert isinstance(reply, AssistantMessage)
    assert reply.tool_calls[0].arguments_error is not None


async def test_send_does_not_stream(server: LoopbackServer, home: Path) -> None:
    from _loopback_openai import completion

    server.reply(completion("plain"))
    model = OpenAIModel("m", base_url=server.base_url, api_key="k", max_retries=0)
    session = from_dir(home, model=model, save=False).session()
    assert await session.send("hi") == "plain"
    assert "stream" not in server.bodies[0]


async def test_a_stream_cut_before_any_text_is_retried_and_after_it_is_an_error(
    server: LoopbackServer,
) -> None:
    from toolnexus.errors import ModelError

    whole = anthropic_stream(("text", ["Hel", "lo"]), stop="end_turn", usage={"input_tokens": 1})
    server.reply(SSE(whole.events[:1]))  # message_start, then nothing: retried
    server.reply(whole)
    server.reply(SSE(whole.events[:4]))  # "Hel" shown, then the connection ends
    base = server.base_url.removesuffix("/v1")
    model = AnthropicModel("m", base_url=base, api_key="k", max_retries=2)
    req = ModelRequest(system="s", messages=(UserMessage("x"),))
    items = [item async for item in model.stream(req)]
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["Hel", "lo"]
    assert len(server.requests) == 2
    with pytest.raises(ModelError, match="the answer broke off"):
        [item async for item in model.stream(req)]
    assert len(server.requests) == 3  # text was shown: not sent again


async def test_a_malformed_openai_chunk_is_a_model_error(server: LoopbackServer) -> None:
    from toolnexus.errors import ModelError

    server.reply(SSE(("this is not json",)))
    model = OpenAIModel("m", base_url=server.base_url, api_key="k", max_retries=0)
    req = ModelRequest(system="s", messages=(UserMessage("x"),))
    with pytest.raises(ModelError, match="answered something unreadable"):
        [item async for item in model.stream(req)]


async def test_usage_counts_a_response_the_round_cap_turned_away(home: Path) -> None:
    from toolnexus.errors import ToolRoundsExceeded

    usage = Usage(input_tokens=10)
    turns = [AssistantMessage(tool_calls=(call("add", a=1, b=1),), usage=usage)] * 2
    session = Agent(home, tools=[add], model=ScriptedModel(turns), max_tool_rounds=1).session()
    with pytest.raises(ToolRoundsExceeded):
        await session.send("loop")
    assert session.usage == Usage(input_tokens=20)  # both responses were billed
