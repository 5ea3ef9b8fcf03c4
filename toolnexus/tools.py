"""The tool core: `define_tool` turns a typed function into a `Tool` a model can call.

A `Tool` validates its arguments with pydantic before the handler sees them and
always answers with a `ToolResult`, so a conversation survives bad calls; the
exception behind an unexpected failure stays on the result for the developer.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from ._schema import (
    TOOL_NAME_RE,
    clean_schema,
    decode_json_strings,
    describe_validation_error,
    function_schema,
)
from ._text import one_line
from .errors import ToolDefinitionError, ToolError

__all__ = [
    "CallContext",
    "Tool",
    "ToolError",
    "ToolResult",
    "call_context",
    "calling",
    "define_tool",
]


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who is calling a tool right now, and what the model had read: for provenance.

    A session sets it around each tool call (`caller="tool"`, its id, the model's
    call id, and `untrusted`: the tools whose results reached the model since the
    person's last message); `toolnexus serve` sets `caller="mcp"`; the command
    line sets `caller="cli"`. Outside all three it is unset. A loop of your own
    sets it with `calling(...)` so the memory tool can judge its writes (SPEC §3):
    a write made with `untrusted` set is held for review.
    """

    caller: str = "tool"
    session: str | None = None
    call: str | None = None
    #: Where untrusted text that reached the model came from: tool names, `mcp-client`,
    #: `imported` (empty: only the person and the home spoke since their last message).
    untrusted: tuple[str, ...] = ()

    def source(self) -> str:
        """As the history shows it: `tool session=… call=… untrusted=web,mail`, `cli`."""
        parts = [one_line(self.caller)]
        if self.session is not None:
            parts.append(f"session={one_line(self.session)}")
        if self.call is not None:
            # An id a client chose (an MCP request id) may hold anything.
            parts.append(f"call={one_line(self.call)}")
        if self.untrusted:
            parts.append("untrusted=" + ",".join(one_line(name) for name in self.untrusted))
        return " ".join(parts)


_CONTEXT: ContextVar[CallContext | None] = ContextVar("toolnexus_call", default=None)


def call_context() -> CallContext | None:
    """The context of the tool call running now (a handler may read it), or None."""
    return _CONTEXT.get()


def call_source(default: str) -> str:
    """Who is writing, as the history records it: the running call's `source()`, or
    `default` outside any call (`"python"` for a direct call, `"tool"` for a tool's)."""
    context = _CONTEXT.get()
    return default if context is None else context.source()


@contextmanager
def calling(context: CallContext) -> Iterator[None]:
    """Run a block as one tool call's context (threads started with `asyncio.to_thread` see it)."""
    token = _CONTEXT.set(context)
    try:
        yield
    finally:
        _CONTEXT.reset(token)


M = TypeVar("M", bound=BaseModel)
Handler = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returns to the model: text, and whether it is an error.

    `exception` keeps the object behind an unexpected failure (never part of
    equality or repr), so a developer can re-raise it: nothing is hidden.
    """

    output: str
    is_error: bool = False
    _: KW_ONLY
    exception: BaseException | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A callable capability described to a model by name, description and JSON Schema.

    Build one with `define_tool`. Immutable: `input_schema` returns a fresh copy.
    """

    name: str
    description: str
    source: str = "native"
    input_model: type[BaseModel]
    handler: Handler = field(repr=False)
    #: "kwargs": handler(**fields) (function form); "model": handler(model_instance).
    call_style: Literal["kwargs", "model"] = field(default="kwargs", repr=False)
    #: Set on the builtins that read only the home (`memory`, `skill`, `now`): their
    #: results are not untrusted text for provenance (`home_reader`).
    _reads_home: bool = field(default=False, repr=False, compare=False)
    _schema: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_schema", clean_schema(self.input_model))

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, inlined and title-free (a copy)."""
        return copy.deepcopy(self._schema)

    async def execute(self, args: Mapping[str, Any] | None = None) -> ToolResult:
        """Validate `args`, run the handler, and turn every outcome into a `ToolResult`.

        Cancellation and other `BaseException`s that are not `Exception`s propagate.
        """
        # Models and clients send anything; check at run time what the types promise.
        raw: object = {} if args is None else args
        if not isinstance(raw, Mapping):
            return ToolResult(
                f"invalid arguments: expected a JSON object, got {type(raw).__name__}",
                is_error=True,
            )
        try:
            parsed = self.input_model.model_validate(decode_json_strings(raw, self._schema))
        except ValidationError as exc:
            return ToolResult(describe_validation_error(exc), is_error=True)
        try:
            value = await self._call(parsed)
            return ToolResult(_to_output(value))
        except ToolError as exc:
            return ToolResult(exc.message, is_error=True)
        except Exception as exc:
            return ToolResult(f"{type(exc).__name__}: {exc}", is_error=True, exception=exc)

    def execute_sync(self, args: Mapping[str, Any] | None = None) -> ToolResult:
        """`execute` for plain code (a script, a notebook): the same call, waited for here.

        Runs on one background event loop shared by every sync call of the process,
        so it works where a loop is already running too.
        """
        from ._sync import run_sync

        return run_sync(self.execute(args))

    async def _call(self, parsed: BaseModel) -> Any:
        if self.call_style == "model":
            call: Callable[[], Any] = lambda: self.handler(parsed)  # noqa: E731
        else:
            fields = type(parsed).model_fields
            values = {(f.alias or n): getattr(parsed, n) for n, f in fields.items()}
            call = lambda: self.handler(**values)  # noqa: E731
        if _is_async(self.handler):
            return await call()
        import asyncio  # here, not at the top: `toolnexus soul` never needs an event loop

        result = await asyncio.to_thread(call)
        if inspect.isawaitable(result):
            return await result
        return result

    def to_openai(self) -> dict[str, Any]:
        """Describe this tool as an OpenAI chat-completions function tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            },
        }

    def to_anthropic(self) -> dict[str, Any]:
        """Describe this tool as an Anthropic Messages API tool."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def to_mcp(self) -> dict[str, Any]:
        """Describe this tool as a Model Context Protocol tool definition."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }


def home_reader(tool: Tool) -> Tool:
    """`tool`, marked as one whose results come from the persona's home alone: a session
    does not count them as untrusted text (for the builtins `memory`, `skill`, `now`)."""
    return dataclasses.replace(tool, _reads_home=True)


def reads_home(tool: Tool) -> bool:
    """Whether `tool`'s results come from the home alone (see `home_reader`)."""
    return tool._reads_home


def _is_async(handler: Handler) -> bool:
    """Coroutine functions, partials of them, and objects with an async `__call__`."""
    while isinstance(handler, functools.partial):
        handler = handler.func
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        inspect.getattr_static(type(handler), "__call__", None)
    )


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def _stable(value: Any) -> Any:
    """JSON-ready data with sets sorted, so the same result is the same text in any process."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="python")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {key: _stable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_stable(item) for item in value]
    if isinstance(value, set | frozenset):
        items = [to_jsonable_python(_stable(item)) for item in value]
        return sorted(items, key=_dump)
    return value


def _to_output(value: Any) -> str:
    """Text for the model: strings as they are, anything else as deterministic JSON."""
    if isinstance(value, str):
        return value
    return _dump(to_jsonable_python(_stable(value)))


def _check_name(name: str) -> list[str]:
    if TOOL_NAME_RE.match(name):
        return []
    return [f"tool name {name!r} breaks the providers' rule: 1-64 characters from A-Z a-z 0-9 _ -"]


def _from_function(
    fn: Handler,
    *,
    name: str | None,
    description: str | None,
    source: str,
    localns: Mapping[str, Any],
) -> Tool:
    if not callable(fn):
        raise ToolDefinitionError(f"define_tool expects a function, got {type(fn).__name__}")
    tool_name = name if name is not None else getattr(fn, "__name__", "")
    problems = _check_name(tool_name)
    schema, schema_problems = function_schema(
        fn, name=tool_name, description=description, localns=localns
    )
    problems += schema_problems
    if problems or schema is None:
        raise ToolDefinitionError(f"cannot define tool {tool_name!r}", problems=problems)
    return Tool(
        name=tool_name,
        description=schema.description,
        source=source,
        input_model=schema.input_model,
        handler=fn,
        call_style="kwargs",
    )


def _from_model(
    *, name: str, description: str, input_model: type[BaseModel], handler: Handler, source: str
) -> Tool:
    problems = _check_name(name)
    if not description.strip():
        problems.append("description is empty: tell the model what the tool does")
    model: object = input_model
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        problems.append(f"input_model must be a pydantic BaseModel subclass, got {model!r}")
    function: object = handler
    if not callable(function):
        problems.append(f"handler must be callable, got {type(function).__name__}")
    if not problems:
        try:  # the Tool derives its schema once, here: a model without one fails now
            return Tool(
                name=name,
                description=description,
                source=source,
                input_model=input_model,
                handler=handler,
                call_style="model",
            )
        except Exception as exc:
            problems.append(f"input_model has no JSON Schema: {exc}")
    raise ToolDefinitionError(f"cannot define tool {name!r}", problems=problems)


@overload
def define_tool(fn: Handler, /) -> Tool: ...
@overload
def define_tool(
    *, name: str | None = None, description: str | None = None, source: str = "native"
) -> Callable[[Handler], Tool]: ...
@overload
def define_tool(
    *,
    name: str,
    description: str,
    input_model: type[M],
    handler: Callable[[M], Any],
    source: str = "native",
) -> Tool: ...
def define_tool(
    fn: Handler | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    input_model: type[BaseModel] | None = None,
    handler: Handler | None = None,
    source: str = "native",
) -> Tool | Callable[[Handler], Tool]:
    """Define a tool from a typed function, or from an explicit pydantic input model.

    Three forms:

    * `@define_tool` on a typed function: name from the function, description from
      its docstring's first paragraph, parameter descriptions from its `Args:`
      section or `Annotated[..., Field(description=...)]`.
    * `@define_tool(name=..., description=...)`: the same, with overrides.
    * `define_tool(name=..., description=..., input_model=Model, handler=fn)`:
      `fn` receives one validated `Model` instance.

    Handlers may be sync (run in a worker thread) or async, and may return a
    string or anything JSON-serialisable.

    Raises:
        ToolDefinitionError: listing every problem found (missing type hints,
            types without a JSON Schema, a name providers reject, no description).
    """
    if input_model is not None or handler is not None:
        if fn is not None:
            raise ToolDefinitionError("pass either a function or input_model= and handler=")
        missing = [
            arg
            for arg, value in (
                ("name", name),
                ("description", description),
                ("input_model", input_model),
                ("handler", handler),
            )
            if value is None
        ]
        if missing:
            raise ToolDefinitionError(
                "the explicit form of define_tool needs " + ", ".join(f"{m}=" for m in missing)
            )
        return _from_model(
            name=str(name),
            description=str(description),
            input_model=input_model,  # type: ignore[arg-type]
            handler=handler,  # type: ignore[arg-type]
            source=source,
        )
    # Names local to the caller's scope resolve string annotations (PEP 563).
    caller_locals = sys._getframe(1).f_locals
    if fn is not None:
        return _from_function(
            fn, name=name, description=description, source=source, localns=caller_locals
        )

    def decorate(func: Handler) -> Tool:
        return _from_function(
            func,
            name=name,
            description=description,
            source=source,
            localns={**caller_locals, **sys._getframe(1).f_locals},
        )

    return decorate
