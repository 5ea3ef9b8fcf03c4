"""The Anthropic adapter, driven through the official SDK against a Messages API server
on 127.0.0.1 (the same recording loopback server the OpenAI tests use)."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from _loopback_openai import LoopbackServer, add

from toolnexus.agents import from_dir
from toolnexus.agents.models import (
    AnthropicModel,
    AssistantMessage,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from toolnexus.errors import ModelError
from toolnexus.models._anthropic import to_anthropic_request

CACHED = {"type": "ephemeral"}


pytestmark = pytest.mark.usefixtures("provider_env")


def message(
    text: str | None = None,
    *,
    tool_uses: Sequence[tuple[str, str, Any]] = (),
    stop: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A Messages API response body: text and/or (id, name, input) tool uses."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    content.extend({"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in tool_uses)
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": "claude-loopback",
        "content": content,
        "stop_reason": stop or ("tool_use" if tool_uses else "end_turn"),
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 3, "output_tokens": 2},
    }


def model_for(server: LoopbackServer, **options: Any) -> AnthropicModel:
    base = server.base_url.removesuffix("/v1")  # the SDK adds /v1/messages itself
    return AnthropicModel("claude-loopback", base_url=base, api_key="test-key", **options)


def request(*messages: Any, tools: tuple[Any, ...] = ()) -> ModelRequest:
    return ModelRequest(system="You are Ada.", messages=tuple(messages), tools=tools)


async def test_a_text_answer_and_the_request_on_the_wire(server: LoopbackServer) -> None:
    server.reply(
        message(
            "Hello!",
            usage={
                "input_tokens": 12,
                "output_tokens": 4,
                "cache_read_input_tokens": 900,
                "cache_creation_input_tokens": 30,
            },
        )
    )
    model = model_for(server, max_tokens=321, settings={"temperature": 0.2})
    reply = await model.complete(request(UserMessage("hi"), tools=(add,)))
    assert reply == AssistantMessage("Hello!")
    assert reply.usage == Usage(12, 4, 900, 30)
    [sent] = server.requests
    assert sent.path == "/v1/messages"
    # The key travels as x-api-key or as a bearer token, by SDK version.
    key = sent.headers.get("x-api-key") or sent.headers.get("authorization", "")
    assert key.removeprefix("Bearer ") == "test-key"
    assert "anthropic-version" in sent.headers
    body = sent.body
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("claude-loopback", 321, 0.2)
    # Three cache breakpoints: the tools, the system prompt, the conversation so far.
    assert body["tools"] == [{**add.to_anthropic(), "cache_control": CACHED}]
    assert body["system"] == [{"type": "text", "text": "You are Ada.", "cache_control": CACHED}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": CACHED}]}
    ]


async def test_tool_use_round_trip_through_a_session(
    server: LoopbackServer, tmp_path: Path
) -> None:
    (tmp_path / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
    server.reply(
        message(
            "Let me note that.",
            tool_uses=[
                ("toolu_1", "memory", {"action": "add", "text": "likes tea"}),
                ("toolu_2", "memory", {"action": "remove", "text": "nothing like it"}),
            ],
        )
    )
    server.reply(message("Noted: tea."))
    session = from_dir(tmp_path, model=model_for(server), save=False).session()
    assert await session.send("I like tea") == "Noted: tea."
    assert "- likes tea" in (tmp_path / "MEMORY.md").read_text(encoding="utf-8")
    first, second = server.bodies
    assert [t["name"] for t in first["tools"]] == ["memory"]
    # Both results ride in one user turn, each naming its call; the failed one says so.
    assert second["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me note that."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "memory",
                "input": {"action": "add", "text": "likes tea"},
            },
            {
                "type": "tool_use",
                "id": "toolu_2",
                "name": "memory",
                "input": {"action": "remove", "text": "nothing like it"},
            },
        ],
    }
    results = second["messages"][2]
    assert results["role"] == "user"
    assert [b["type"] for b in results["content"]] == ["tool_result", "tool_result"]
    assert results["content"][0]["tool_use_id"] == "toolu_1"
    assert "is_error" not in results["content"][0]
    assert results["content"][1]["is_error"] is True
    assert results["content"][1]["content"].startswith("not found")
    assert results["content"][1]["cache_control"] == CACHED  # the last block is marked
    assert session.usage == Usage(6, 4, 0, 0)


async def test_the_cached_prefix_is_byte_identical_on_every_turn_and_session(
    server: LoopbackServer, tmp_path: Path
) -> None:
    (tmp_path / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
    for _ in range(2):
        server.reply(message(tool_uses=[("toolu_1", "memory", {"action": "add", "text": "x"})]))
        server.reply(message("done"))
        server.reply(message("more"))
    agent = from_dir(tmp_path, model=model_for(server), save=False, recall=False)
    for _ in range(2):
        session = agent.session()
        await session.send("one")
        await session.send("two")
        (tmp_path / "MEMORY.md").unlink()  # the home is unchanged for the next session

    def prefix(body: dict[str, Any]) -> bytes:
        return json.dumps([body["tools"], body["system"]], sort_keys=True).encode()

    prefixes = {prefix(body) for body in server.bodies}
    assert len(server.bodies) == 6
    assert len(prefixes) == 1


async def test_consecutive_turns_of_one_role_are_merged() -> None:
    history = (
        UserMessage("a"),
        AssistantMessage(tool_calls=(ToolCall("add", {"a": 1, "b": 2}, id="t1"),)),
        ToolResultMessage(call_id="t1", name="add", output="3"),
        UserMessage("and then?"),
        AssistantMessage(""),
    )
    body = to_anthropic_request(request(*history), model="m")
    assert [turn["role"] for turn in body["messages"]] == ["user", "assistant", "user", "assistant"]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "3"},
        {"type": "text", "text": "and then?"},
    ]
    # An empty answer is still a turn the API accepts.
    assert body["messages"][3]["content"][0]["text"] == "(no answer)"
    assert "tools" not in body


async def test_a_tool_call_cut_off_at_max_tokens_is_not_run(server: LoopbackServer) -> None:
    server.reply(message(tool_uses=[("toolu_9", "add", {"a": 1})], stop="max_tokens"))
    reply = await model_for(server).complete(request(UserMessage("add"), tools=(add,)))
    [cut] = reply.tool_calls
    assert cut.arguments_error is not None
    assert "cut off at max_tokens" in cut.arguments_error
    assert cut.raw_arguments == '{"a": 1}'


async def test_provider_errors_are_model_errors_in_one_line(server: LoopbackServer) -> None:
    server.reply(
        {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}},
        status=401,
    )
    with pytest.raises(ModelError) as info:
        await model_for(server, max_retries=0).complete(request(UserMessage("hi")))
    assert str(info.value).endswith("answered HTTP 401 for model 'claude-loopback': bad key")
    server.reply({"type": "error", "error": {"type": "api_error", "message": "boom"}}, status=500)
    with pytest.raises(ModelError, match="answered HTTP 500 for model 'claude-loopback': boom"):
        await model_for(server, max_retries=0).complete(request(UserMessage("hi")))
    server.reply("not json at all")
    with pytest.raises(ModelError):
        await model_for(server, max_retries=0).complete(request(UserMessage("hi")))


async def test_an_unreachable_server_is_a_model_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = AnthropicModel(
        "m", base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=0, timeout=5
    )
    with pytest.raises(ModelError, match=f"cannot reach http://127.0.0.1:{port}"):
        await model.complete(request(UserMessage("hi")))


def test_settings_come_from_arguments_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelError, match="needs a model name"):
        AnthropicModel()
    with pytest.raises(
        ModelError, match=r"needs an API key: pass api_key=\.\.\. or set \$ANTHROPIC_API_KEY"
    ):
        AnthropicModel("m")
    with pytest.raises(ModelError, match="max_tokens must be a whole number from 1, got 0"):
        AnthropicModel("m", api_key="k", max_tokens=0)
    monkeypatch.setenv("TOOLNEXUS_MODEL", "claude-env")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    model = AnthropicModel()
    assert repr(model) == "AnthropicModel(model='claude-env', base_url='http://127.0.0.1:9/')"


def test_a_missing_sdk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ModelError) as info:
        AnthropicModel("m", api_key="k")
    assert str(info.value) == (
        'AnthropicModel needs the anthropic package: pip install "toolnexus[anthropic]"'
    )


async def test_blank_text_and_foreign_tool_ids_are_sent_as_the_api_accepts() -> None:
    from toolnexus.models._anthropic import tool_id

    history = (
        UserMessage("  "),
        AssistantMessage(
            "\n\n", tool_calls=(ToolCall("add", {"a": 1, "b": 2}, id="functions.add:0"),)
        ),
        ToolResultMessage(call_id="functions.add:0", name="add", output="3"),
    )
    body = to_anthropic_request(request(*history), model="m")
    assert body["messages"][0]["content"] == [{"type": "text", "text": "(empty message)"}]
    [use] = body["messages"][1]["content"]  # no whitespace-only text block
    mapped = tool_id("functions.add:0")
    assert use["id"] == mapped
    assert body["messages"][2]["content"][0]["tool_use_id"] == mapped
    assert mapped.startswith("functions_add_0_")
    assert tool_id("functions.add:1") != mapped  # two ids never become one
    assert tool_id("toolu_01A-b") == "toolu_01A-b"  # a valid id is kept


async def test_a_long_retry_after_is_reported_at_once_not_waited_for(
    server: LoopbackServer,
) -> None:
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    server.reply(error, status=429, headers={"retry-after": "3600"})
    with pytest.raises(ModelError) as info:
        await model_for(server).complete(request(UserMessage("hi")))
    assert "HTTP 429" in str(info.value)
    assert "(it asked to wait 3600 s; toolnexus waits 20 s at most)" in str(info.value)
    assert len(server.requests) == 1


async def test_a_server_error_is_retried_with_a_short_backoff(server: LoopbackServer) -> None:
    error = {"type": "error", "error": {"type": "api_error", "message": "boom"}}
    server.reply(error, status=529, headers={"retry-after-ms": "5"})
    server.reply(error, status=503)  # no header: the backoff, half a second or so
    server.reply(message("Finally."))
    reply = await model_for(server, max_retries=2).complete(request(UserMessage("hi")))
    assert reply.text == "Finally."
    assert len(server.requests) == 3
