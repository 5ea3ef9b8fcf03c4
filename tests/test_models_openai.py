"""The OpenAI-compatible adapter, against a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _loopback_openai import LoopbackServer, add, completion, loopback_server

from toolnexus.agents.models import (
    AssistantMessage,
    ModelRequest,
    OpenAIModel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolnexus.errors import ModelError

pytestmark = pytest.mark.usefixtures("provider_env")


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with loopback_server() as srv:
        yield srv


def make_model(server: LoopbackServer, **kwargs: object) -> OpenAIModel:
    return OpenAIModel(
        "loopback-model",
        base_url=server.base_url,
        api_key="sk-test",
        max_retries=0,
        timeout=30,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_text_answer_and_the_request_on_the_wire(server: LoopbackServer) -> None:
    server.reply(completion("hello there"))
    async with make_model(server) as model:
        answer = await model.complete(
            ModelRequest(system="You are Ada.", messages=(UserMessage("hi"),))
        )
    assert answer == AssistantMessage("hello there")
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "loopback-model",
        "messages": [
            {"role": "system", "content": "You are Ada."},
            {"role": "user", "content": "hi"},
        ],
    }


async def test_tool_calls_both_ways(server: LoopbackServer) -> None:
    server.reply(
        completion(
            "let me add",
            tool_calls=[
                ("call_a", "add", '{"a": 1, "b": 2}'),
                ("call_b", "add", '{"a":3,"b":4}'),
            ],
        )
    )
    server.reply(completion("1+2=3 and 3+4=7"))
    async with make_model(server) as model:
        first = await model.complete(
            ModelRequest(system="sys", messages=(UserMessage("add"),), tools=(add,))
        )
        assert first == AssistantMessage(
            "let me add",
            tool_calls=(
                ToolCall("add", {"a": 1, "b": 2}, id="call_a", raw_arguments='{"a": 1, "b": 2}'),
                ToolCall("add", {"a": 3, "b": 4}, id="call_b", raw_arguments='{"a":3,"b":4}'),
            ),
        )
        history = (
            UserMessage("add"),
            first,
            ToolResultMessage(call_id="call_a", name="add", output="3"),
            ToolResultMessage(call_id="call_b", name="add", output="7"),
        )
        second = await model.complete(ModelRequest(system="sys", messages=history, tools=(add,)))
    assert second.text == "1+2=3 and 3+4=7"
    assert server.bodies[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": add.input_schema,
            },
        }
    ]
    assert server.bodies[1]["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "add"},
        {
            "role": "assistant",
            "content": "let me add",
            "tool_calls": [
                # The provider's argument text goes back verbatim.
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a":3,"b":4}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "3"},
        {"role": "tool", "tool_call_id": "call_b", "content": "7"},
    ]


async def test_calls_from_other_models_are_encoded_as_json(server: LoopbackServer) -> None:
    server.reply(completion("ok"))
    history = (
        UserMessage("x"),
        AssistantMessage(tool_calls=(ToolCall("add", {"a": 1, "b": 2}, id="c1"),)),
        ToolResultMessage(call_id="c1", name="add", output="oops", is_error=True),
    )
    async with make_model(server) as model:
        await model.complete(ModelRequest(system="s", messages=history))
    assert server.bodies[0]["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
            }
        ],
    }
    assert server.bodies[0]["messages"][3] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "oops",
    }


@pytest.mark.parametrize(
    ("raw", "arguments", "error"),
    [
        pytest.param("", {}, None, id="empty-means-no-arguments"),
        pytest.param(
            '{"a": 1',
            {},
            "invalid arguments: not valid JSON (Expecting ',' delimiter at position 7): {\"a\": 1",
            id="truncated-json",
        ),
        pytest.param(
            "[1, 2]", {}, "invalid arguments: expected a JSON object, got list", id="not-an-object"
        ),
    ],
)
async def test_undecodable_arguments_are_reported_not_raised(
    server: LoopbackServer, raw: str, arguments: dict[str, object], error: str | None
) -> None:
    server.reply(completion(tool_calls=[("c1", "add", raw)]))
    async with make_model(server) as model:
        answer = await model.complete(ModelRequest(system="s", messages=(UserMessage("x"),)))
    assert answer.text == ""
    [tc] = answer.tool_calls
    assert (tc.arguments, tc.arguments_error, tc.raw_arguments) == (arguments, error, raw)


async def test_settings_are_sent_with_every_request(server: LoopbackServer) -> None:
    server.reply(completion("a"))
    async with make_model(server, settings={"temperature": 0, "model": "ignored"}) as model:
        await model.complete(ModelRequest(system="s", messages=(UserMessage("x"),)))
    assert server.bodies[0]["temperature"] == 0
    assert server.bodies[0]["model"] == "loopback-model"


async def test_environment_variables(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("TOOLNEXUS_MODEL", "env-model")
    server.reply(completion("ok"))
    async with OpenAIModel(max_retries=0) as model:
        assert model.model == "env-model"
        assert repr(model) == f"OpenAIModel(model='env-model', base_url='{server.base_url}/')"
        await model.complete(ModelRequest(system="s", messages=(UserMessage("x"),)))
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"
    assert server.bodies[0]["model"] == "env-model"


@pytest.mark.parametrize(
    ("status", "payload", "expected"),
    [
        pytest.param(
            401,
            {"error": {"message": "bad key", "type": "auth"}},
            "answered HTTP 401 for model 'loopback-model': bad key",
            id="401",
        ),
        pytest.param(
            500,
            {"error": {"message": "boom"}},
            "answered HTTP 500 for model 'loopback-model': boom",
            id="500",
        ),
    ],
)
async def test_http_errors_become_model_errors(
    server: LoopbackServer, status: int, payload: object, expected: str
) -> None:
    server.reply(payload, status=status)
    async with make_model(server) as model:
        with pytest.raises(ModelError) as info:
            await model.complete(ModelRequest(system="s", messages=(UserMessage("x"),)))
    assert str(info.value) == f"{server.base_url}/ {expected}"


async def test_no_choices_is_a_model_error(server: LoopbackServer) -> None:
    body = completion("x")
    body["choices"] = []
    server.reply(body)
    async with make_model(server) as model:
        with pytest.raises(ModelError, match="answered without any choice"):
            await model.complete(ModelRequest(system="s", messages=(UserMessage("x"),)))


async def test_unreachable_server_is_a_model_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
    async with model:
        with pytest.raises(ModelError, match=rf"^cannot reach http://127.0.0.1:{port}/v1/: "):
            await model.complete(ModelRequest(system="s", messages=(UserMessage("x"),)))


def test_missing_model_name_says_how_to_give_one() -> None:
    with pytest.raises(ModelError) as info:
        OpenAIModel(api_key="k")
    assert str(info.value) == (
        "OpenAIModel needs a model name: pass model=... or set $TOOLNEXUS_MODEL"
    )


def test_missing_api_key_says_how_to_give_one() -> None:
    with pytest.raises(ModelError, match=r"pass api_key=\.\.\. or set \$OPENAI_API_KEY"):
        OpenAIModel("m")


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ModelError) as info:
        OpenAIModel("m", api_key="k")
    assert str(info.value) == (
        'OpenAIModel needs the openai package: pip install "toolnexus[openai]"'
    )
    assert isinstance(info.value.__cause__, ImportError)


def test_arguments_text_round_trips_as_json() -> None:
    # Our own encoding of arguments is plain JSON a server can decode.
    from toolnexus.models._openai import to_openai_messages

    request = ModelRequest(
        system="s",
        messages=(AssistantMessage(tool_calls=(ToolCall("t", {"k": "ü"}, id="1"),)),),
    )
    encoded = to_openai_messages(request)[1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(encoded) == {"k": "ü"}


async def test_missing_and_repeated_call_ids_get_stable_ones(server: LoopbackServer) -> None:
    # Some local servers leave ids out, or reuse one; the results must still answer each call.
    server.reply(
        completion(
            tool_calls=[
                (None, "add", '{"a": 1, "b": 2}'),
                ("dup", "add", '{"a": 3, "b": 4}'),
                ("dup", "add", "  "),
            ]
        )
    )
    server.reply(completion(tool_calls=[("dup", "add", '{"a": 5, "b": 6}'), (None, "add", "")]))
    server.reply(completion("done"))
    async with make_model(server) as model:
        first = await model.complete(ModelRequest(system="s", messages=(UserMessage("x"),)))
        assert [tc.id for tc in first.tool_calls] == ["call_1_1", "dup", "call_1_3"]
        history = (
            UserMessage("x"),
            first,
            *(ToolResultMessage(call_id=tc.id, name="add", output="r") for tc in first.tool_calls),
        )
        second = await model.complete(ModelRequest(system="s", messages=history))
        # "dup" is taken by the first turn; ids count assistant messages, not requests.
        assert [tc.id for tc in second.tool_calls] == ["call_2_1", "call_2_2"]
        history += (
            second,
            *(ToolResultMessage(call_id=tc.id, name="add", output="r") for tc in second.tool_calls),
        )
        await model.complete(ModelRequest(system="s", messages=history))
    sent = server.bodies[2]["messages"]
    assert [tc["id"] for tc in sent[2]["tool_calls"]] == ["call_1_1", "dup", "call_1_3"]
    # Blank argument text goes back as an empty JSON object.
    assert [tc["function"]["arguments"] for tc in sent[2]["tool_calls"]] == [
        '{"a": 1, "b": 2}',
        '{"a": 3, "b": 4}',
        "{}",
    ]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == [
        "call_1_1",
        "dup",
        "call_1_3",
        "call_2_1",
        "call_2_2",
    ]
    assert [tc["function"]["arguments"] for tc in sent[6]["tool_calls"]] == [
        '{"a": 5, "b": 6}',
        "{}",
    ]


async def test_an_empty_answer_goes_back_as_empty_content(server: LoopbackServer) -> None:
    # Chat completions rejects an assistant message with null content and no tool calls.
    server.reply(completion(None))
    server.reply(completion("ok"))
    async with make_model(server) as model:
        empty = await model.complete(ModelRequest(system="s", messages=(UserMessage("x"),)))
        assert empty == AssistantMessage("")
        history = (UserMessage("x"), empty, UserMessage("say something"))
        await model.complete(ModelRequest(system="s", messages=history))
    assert server.bodies[1]["messages"][2] == {"role": "assistant", "content": ""}


async def test_the_prefix_is_byte_identical_on_every_turn_and_session(tmp_path: Path) -> None:
    from toolnexus.agents import from_dir

    (tmp_path / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
    with loopback_server() as server:
        for _ in range(2):
            server.reply(
                completion(tool_calls=[("c1", "memory", '{"action": "add", "text": "x"}')])
            )
            server.reply(completion("done"))
            server.reply(completion("more"))
        model = OpenAIModel("m", base_url=server.base_url, api_key="k", max_retries=0)
        agent = from_dir(tmp_path, model=model, save=False, recall=False)
        for _ in range(2):
            session = agent.session()
            await session.send("one")
            await session.send("two")
            (tmp_path / "MEMORY.md").unlink()  # the home is unchanged for the next session
        bodies = server.bodies
    prefixes = {json.dumps([b["messages"][0], b["tools"]], sort_keys=True) for b in bodies}
    assert len(bodies) == 6
    assert len(prefixes) == 1
