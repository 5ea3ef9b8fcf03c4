"""The scripted model: deterministic replay, recorded requests, a loud end of script."""

from __future__ import annotations

import pytest

from toolnexus.agents.models import (
    AssistantMessage,
    Model,
    ModelRequest,
    ScriptedModel,
    ToolCall,
    UserMessage,
    call,
)
from toolnexus.errors import ModelError

REQUEST = ModelRequest(system="sys", messages=(UserMessage("hi"),))


def test_it_is_a_model() -> None:
    assert isinstance(ScriptedModel([]), Model)


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        pytest.param("hello", AssistantMessage("hello"), id="text"),
        pytest.param(
            call("memory", action="add", text="x"),
            AssistantMessage(
                tool_calls=(ToolCall("memory", {"action": "add", "text": "x"}, id="call_1_1"),)
            ),
            id="one-call",
        ),
        pytest.param(
            [call("a"), call("b", {"with": "w"}, n=1)],
            AssistantMessage(
                tool_calls=(
                    ToolCall("a", {}, id="call_1_1"),
                    ToolCall("b", {"with": "w", "n": 1}, id="call_1_2"),
                )
            ),
            id="several-calls",
        ),
        pytest.param(
            AssistantMessage("thinking", tool_calls=(ToolCall("a", id="mine"), call("b"))),
            AssistantMessage(
                "thinking",
                tool_calls=(ToolCall("a", id="mine"), ToolCall("b", id="call_1_2")),
            ),
            id="message-keeps-given-ids",
        ),
        pytest.param(
            lambda request: f"you said {request.messages[-1].text}",
            AssistantMessage("you said hi"),
            id="function-of-the-request",
        ),
    ],
)
async def test_turn_shapes(turn: object, expected: AssistantMessage) -> None:
    model = ScriptedModel([turn])  # type: ignore[list-item]
    assert await model.complete(REQUEST) == expected


async def test_async_turn_function() -> None:
    async def answer(request: ModelRequest) -> str:
        return request.system.upper()

    assert await ScriptedModel([answer]).complete(REQUEST) == AssistantMessage("SYS")


async def test_replays_in_order_and_records_requests() -> None:
    model = ScriptedModel(["one", "two"])
    second = ModelRequest(system="other", messages=())
    assert (await model.complete(REQUEST)).text == "one"
    assert model.remaining == 1
    assert (await model.complete(second)).text == "two"
    assert model.requests == [REQUEST, second]
    assert model.remaining == 0


async def test_running_out_is_a_loud_error() -> None:
    model = ScriptedModel(["only"])
    await model.complete(REQUEST)
    with pytest.raises(ModelError) as info:
        await model.complete(REQUEST)
    assert str(info.value) == (
        "ScriptedModel ran out of turns: request 2 arrived but the script plans 1; "
        "add a turn for it (last message: user 'hi')"
    )
    assert len(model.requests) == 2


async def test_a_bad_turn_says_what_a_turn_may_be() -> None:
    with pytest.raises(ModelError) as info:
        await ScriptedModel([42]).complete(REQUEST)  # type: ignore[list-item]
    assert str(info.value) == (
        "ScriptedModel turn 1 is 42: a turn is text, a ToolCall, a non-empty list of "
        "ToolCalls, an AssistantMessage, or a function of the request returning one of those"
    )
