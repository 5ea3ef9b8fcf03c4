"""The tool core: define_tool, Tool, ToolResult, and the provider export formats."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from toolnexus import Tool, ToolError, ToolResult, define_tool
from toolnexus.errors import ToolDefinitionError


class Point(BaseModel):
    x: int
    y: int = 0


@define_tool
def move(
    point: Point,
    mode: Literal["walk", "run"] = "walk",
    tags: list[str] | None = None,
    steps: Annotated[int, Field(description="How many steps.", ge=1)] = 1,
) -> dict[str, Any]:
    """Move a point across the board.

    The board wraps at its edges.

    Args:
        point: Where to start.
        mode: How fast to go; running
            doubles the distance.
    """
    factor = 2 if mode == "run" else 1
    return {"x": point.x + steps * factor, "y": point.y, "tags": tags}


MOVE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "point": {
            "type": "object",
            "description": "Where to start.",
            "properties": {
                "x": {"type": "integer"},
                "y": {"type": "integer", "default": 0},
            },
            "required": ["x"],
        },
        "mode": {
            "type": "string",
            "enum": ["walk", "run"],
            "default": "walk",
            "description": "How fast to go; running doubles the distance.",
        },
        "tags": {
            "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
            "default": None,
        },
        "steps": {
            "type": "integer",
            "minimum": 1,
            "default": 1,
            "description": "How many steps.",
        },
    },
    "required": ["point"],
}


def test_schema_is_derived_from_the_signature_and_docstring() -> None:
    assert move.name == "move"
    assert move.source == "native"
    assert move.description == "Move a point across the board."
    assert move.input_schema == MOVE_SCHEMA


def test_input_schema_is_a_copy_and_the_tool_is_frozen() -> None:
    move.input_schema["properties"].clear()
    assert move.input_schema == MOVE_SCHEMA
    with pytest.raises(dataclasses.FrozenInstanceError):
        move.name = "other"  # type: ignore[misc]


async def test_execute_validates_and_serialises_deterministically() -> None:
    result = await move.execute({"point": {"x": 1, "y": 5}, "mode": "run", "steps": 2})
    assert result == ToolResult('{"tags": null, "x": 5, "y": 5}', is_error=False)


async def test_json_encoded_strings_are_decoded_for_list_and_object_arguments() -> None:
    result = await move.execute({"point": '{"x": 1}', "tags": '["a", "b"]'})
    assert result.output == '{"tags": ["a", "b"], "x": 2, "y": 0}'
    assert not result.is_error


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param({}, "invalid arguments: point: Field required", id="missing"),
        pytest.param(
            {"point": {"x": "one"}},
            "invalid arguments: point.x: Input should be a valid integer, "
            "unable to parse string as an integer",
            id="nested-type",
        ),
        pytest.param(
            {"point": {"x": 1}, "mode": "fly"},
            "invalid arguments: mode: Input should be 'walk' or 'run'",
            id="enum",
        ),
        pytest.param(
            {"point": {"x": 1}, "speed": 3},
            "invalid arguments: speed: unknown field (not in the tool's schema)",
            id="extra",
        ),
        pytest.param(
            {"point": {"x": 1}, "steps": 0},
            "invalid arguments: steps: Input should be greater than or equal to 1",
            id="constraint",
        ),
        pytest.param(
            {"point": {"x": 1}, "tags": "not json"},
            "invalid arguments: tags: Input should be a valid list",
            id="bad-json-string",
        ),
    ],
)
async def test_invalid_arguments_name_each_field(args: dict[str, Any], expected: str) -> None:
    result = await move.execute(args)
    assert result == ToolResult(expected, is_error=True)


async def test_non_mapping_arguments_are_an_error_result() -> None:
    result = await move.execute([1, 2])  # type: ignore[arg-type]
    assert result == ToolResult(
        "invalid arguments: expected a JSON object, got list", is_error=True
    )


async def test_invalid_arguments_never_reach_the_handler() -> None:
    calls: list[int] = []

    @define_tool
    def count(n: int) -> str:
        """Count."""
        calls.append(n)
        return "ok"

    assert (await count.execute({"n": "x"})).is_error
    assert calls == []


async def test_sync_handlers_run_off_the_event_loop() -> None:
    seen: list[str] = []

    @define_tool
    def where() -> str:
        """Say which thread runs the handler."""
        seen.append(threading.current_thread().name)
        return "done"

    assert await where.execute({}) == ToolResult("done")
    assert len(seen) == 1
    assert seen[0] != threading.main_thread().name


async def test_async_handlers_are_awaited() -> None:
    @define_tool
    async def later(seconds: float = 0.0) -> list[int]:
        """Wait, then answer."""
        await asyncio.sleep(seconds)
        return [1, 2]

    assert await later.execute({}) == ToolResult("[1, 2]")


async def test_tool_error_becomes_an_error_result_with_exactly_its_message() -> None:
    @define_tool
    def fail() -> str:
        """Fail on purpose."""
        raise ToolError("disk is full, free some space")

    result = await fail.execute()
    assert result == ToolResult("disk is full, free some space", is_error=True)
    assert result.exception is None


async def test_unexpected_exceptions_are_results_that_keep_the_exception() -> None:
    boom = ZeroDivisionError("division by zero")

    @define_tool
    async def divide() -> str:
        """Divide."""
        raise boom

    result = await divide.execute({})
    assert result == ToolResult("ZeroDivisionError: division by zero", is_error=True)
    assert result.exception is boom
    assert "exception" not in repr(result)
    # The exception takes no part in equality.
    assert result == ToolResult("ZeroDivisionError: division by zero", is_error=True)


async def test_cancellation_is_never_swallowed() -> None:
    @define_tool
    async def hang() -> str:
        """Hang forever."""
        await asyncio.sleep(3600)
        return "never"

    task = asyncio.create_task(hang.execute({}))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_unserialisable_return_values_are_error_results() -> None:
    @define_tool
    def odd() -> object:
        """Return something JSON cannot hold."""
        return object()

    result = await odd.execute({})
    assert result.is_error
    assert result.output.startswith("PydanticSerializationError: ")
    assert result.exception is not None


async def test_decorator_with_arguments_overrides_name_and_description() -> None:
    @define_tool(name="web-search", description="Search the web.")
    def search(query: str) -> str:
        """Ignored docstring."""
        return query.upper()

    assert (search.name, search.description) == ("web-search", "Search the web.")
    assert await search.execute({"query": "hi"}) == ToolResult("HI")


async def test_explicit_form_passes_the_validated_model() -> None:
    class Args(BaseModel):
        model_config = {"extra": "forbid"}
        with_: str = Field(alias="with")

    seen: list[Args] = []

    def handle(args: Args) -> str:
        seen.append(args)
        return f"got {args.with_}"

    tool = define_tool(name="echo", description="Echo.", input_model=Args, handler=handle)
    assert tool.input_schema == {
        "type": "object",
        "additionalProperties": False,
        "properties": {"with": {"type": "string"}},
        "required": ["with"],
    }
    assert await tool.execute({"with": "x"}) == ToolResult("got x")
    assert seen == [Args.model_validate({"with": "x"})]


def test_recursive_models_keep_their_definitions() -> None:
    class Node(BaseModel):
        value: int
        children: list[Node] = []

    @define_tool
    def walk(tree: Node) -> int:
        """Walk a tree."""
        return tree.value

    schema = walk.input_schema
    assert schema["properties"]["tree"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/Node"
    }
    assert set(schema["$defs"]) == {"Node"}


def test_definition_mistakes_are_listed_together() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        @define_tool(name="bad name!")
        def broken(a, b: int, *rest: int):  # type: ignore[no-untyped-def]
            return a

    assert info.value.problems == (
        "tool name 'bad name!' breaks the providers' rule: 1-64 characters from A-Z a-z 0-9 _ -",
        "parameter 'a' has no type hint; annotate it (e.g. `a: str`)",
        "parameter 'rest': *args and **kwargs cannot be described to a model",
        "no description: write a docstring or pass description=",
    )
    assert str(info.value).startswith("cannot define tool 'bad name!'\n  - tool name")


def test_unsupported_types_are_definition_errors() -> None:
    class Opaque:
        pass

    with pytest.raises(ToolDefinitionError) as info:

        @define_tool
        def use(thing: Opaque) -> str:
            """Use a thing."""
            return ""

    (problem,) = info.value.problems
    assert problem.startswith("parameter 'thing': type ")
    assert "has no JSON Schema" in problem


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        pytest.param(
            {"name": "x", "description": "d", "input_model": Point},
            "the explicit form of define_tool needs handler=",
            id="no-handler",
        ),
        pytest.param(
            {"name": "x", "description": " ", "input_model": Point, "handler": print},
            "description is empty: tell the model what the tool does",
            id="blank-description",
        ),
        pytest.param(
            {"name": "x", "description": "d", "input_model": dict, "handler": print},
            "input_model must be a pydantic BaseModel subclass, got <class 'dict'>",
            id="not-a-model",
        ),
    ],
)
def test_explicit_form_mistakes(kwargs: dict[str, Any], problem: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        define_tool(**kwargs)
    assert problem in info.value.problems


def test_openai_format() -> None:
    assert move.to_openai() == {
        "type": "function",
        "function": {
            "name": "move",
            "description": "Move a point across the board.",
            "parameters": MOVE_SCHEMA,
        },
    }


def test_anthropic_format() -> None:
    assert move.to_anthropic() == {
        "name": "move",
        "description": "Move a point across the board.",
        "input_schema": MOVE_SCHEMA,
    }


def test_mcp_format() -> None:
    assert move.to_mcp() == {
        "name": "move",
        "description": "Move a point across the board.",
        "inputSchema": MOVE_SCHEMA,
    }


def test_every_format_is_a_valid_json_schema_object() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for spec in (move.to_openai()["function"]["parameters"], move.to_mcp()["inputSchema"]):
        jsonschema.Draft202012Validator.check_schema(spec)
        assert spec["type"] == "object"
    jsonschema.validate({"point": {"x": 1}}, move.input_schema)


def test_tool_is_exported_as_a_type() -> None:
    assert isinstance(move, Tool)


# -- edge cases: strings that look like JSON, callables, awkward names, sets ----------------


async def test_a_parameter_that_accepts_strings_keeps_json_looking_strings() -> None:
    @define_tool
    def echo(value: str | list[str]) -> str:
        """Echo the value and its type."""
        return f"{type(value).__name__}: {value}"

    assert await echo.execute({"value": '["a", "b"]'}) == ToolResult('str: ["a", "b"]')
    assert await echo.execute({"value": '{"k": 1}'}) == ToolResult('str: {"k": 1}')
    assert await echo.execute({"value": ["a"]}) == ToolResult("list: ['a']")


async def test_async_callable_objects_and_partials_are_tools() -> None:
    import functools

    class Adder:
        """Add an offset to a number."""

        def __init__(self, offset: int) -> None:
            self.offset = offset

        async def __call__(self, n: int) -> int:
            return n + self.offset

    def scale(factor: int, n: int) -> int:
        """Scale a number."""
        return factor * n

    adder = define_tool(Adder(10), name="adder")
    assert adder.description == "Add an offset to a number."
    assert adder.input_schema["required"] == ["n"]
    assert await adder.execute({"n": 1}) == ToolResult("11")

    triple = define_tool(functools.partial(scale, 3), name="triple")
    assert list(triple.input_schema["properties"]) == ["n"]
    assert await triple.execute({"n": 2}) == ToolResult("6")


async def test_parameter_names_pydantic_reserves_still_reach_the_handler() -> None:
    @define_tool
    def odd_names(_private: int, model_name: str, json: bool = False) -> dict[str, Any]:
        """Take awkward parameter names.

        Args:
            _private: A number.
        """
        return {"_private": _private, "model_name": model_name, "json": json}

    schema = odd_names.input_schema
    assert list(schema["properties"]) == ["_private", "model_name", "json"]
    assert schema["properties"]["_private"] == {"type": "integer", "description": "A number."}
    assert schema["required"] == ["_private", "model_name"]
    result = await odd_names.execute({"_private": 1, "model_name": "m", "json": True})
    assert result == ToolResult('{"_private": 1, "json": true, "model_name": "m"}')
    missing = await odd_names.execute({"model_name": "m"})
    assert missing == ToolResult("invalid arguments: _private: Field required", is_error=True)


@pytest.mark.slow
def test_set_results_serialise_the_same_in_every_process() -> None:
    import subprocess
    import sys

    code = (
        "import asyncio\n"
        "from toolnexus import define_tool\n"
        "@define_tool\n"
        "def tags() -> dict:\n"
        "    '''Tags.'''\n"
        "    return {'tags': {'zeta', 'alpha', 'mu', 'beta', 'omega'}, 'n': frozenset({3, 1, 2})}\n"
        "print(asyncio.run(tags.execute({})).output)\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(4)
    }
    assert outputs == {'{"n": [1, 2, 3], "tags": ["alpha", "beta", "mu", "omega", "zeta"]}\n'}
