"""Turn a typed Python function into a pydantic input model and a clean JSON Schema.

Validation errors are translated by `_validation.field_errors`.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from ._validation import field_errors

__all__ = [
    "TOOL_NAME_RE",
    "FunctionSchema",
    "clean_schema",
    "decode_json_strings",
    "describe_validation_error",
    "function_schema",
    "parse_docstring",
]

# The strictest rule shared by OpenAI, Anthropic and MCP clients for tool names.
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

_SECTION_RE = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Example|Examples|Note|Notes):\s*$"
)
_PARAM_RE = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class FunctionSchema:
    """What a function looks like to a model: its summary and its input model."""

    description: str
    input_model: type[BaseModel]


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (summary paragraph, {param: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        heading = _SECTION_RE.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if heading:
            section, current = heading.group(1), None
            continue
        if section is None:
            if not line.strip() and summary:
                section = "_rest"
            elif line.strip():
                summary.append(line.strip())
            continue
        if section in ("Args", "Arguments", "Parameters", "Params"):
            stripped = line.strip()
            indent = len(line) - len(line.lstrip())
            match = _PARAM_RE.match(stripped)
            if match and indent <= 4:
                current = match.group(1).lstrip("*")
                params[current] = match.group(2).strip()
            elif stripped and current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
    return " ".join(summary), params


def _field_description(annotation: Any) -> str | None:
    if get_origin(annotation) is Annotated:
        for extra in get_args(annotation)[1:]:
            if isinstance(extra, FieldInfo) and extra.description:
                return extra.description
    return None


def function_schema(
    fn: Callable[..., Any],
    *,
    name: str,
    description: str | None,
    localns: Mapping[str, Any] | None = None,
) -> tuple[FunctionSchema | None, list[str]]:
    """Derive the input model of `fn`; return it with every problem found (empty when fine).

    `localns` resolves string annotations naming classes local to the defining scope.
    """
    problems: list[str] = []
    summary, param_docs = parse_docstring(inspect.getdoc(fn))
    try:
        hints = get_type_hints(_hinted(fn), localns=dict(localns or {}), include_extras=True)
    except Exception as exc:  # a forward reference that does not resolve, for one
        return None, [f"cannot read the type hints of {name!r}: {exc}"]
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        where = f"parameter {param.name!r}"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            problems.append(f"{where}: *args and **kwargs cannot be described to a model")
            continue
        if param.name not in hints:
            problems.append(f"{where} has no type hint; annotate it (e.g. `{param.name}: str`)")
            continue
        annotation = hints[param.name]
        try:
            TypeAdapter(annotation).json_schema()
        except Exception as exc:
            problems.append(
                f"{where}: type {annotation!r} has no JSON Schema ({type(exc).__name__})"
            )
            continue
        doc = param_docs.get(param.name)
        default = ... if param.default is param.empty else param.default
        if doc and _field_description(annotation) is not None:
            doc = None  # Annotated[..., Field(description=...)] wins
        if _needs_alias(param.name):
            # pydantic keeps `_x` private and reserves `model_*`/BaseModel names: store the
            # field under a safe name; the schema, errors and handler still see the real one.
            fields[f"p{len(fields)}_{param.name.lstrip('_')}"] = (
                annotation,
                Field(default, alias=param.name, description=doc),
            )
        elif doc:
            fields[param.name] = (annotation, Field(default, description=doc))
        else:
            fields[param.name] = (annotation, default)
    final_description = description if description is not None else summary
    if not final_description:
        problems.append("no description: write a docstring or pass description=")
    if problems:
        return None, problems
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return FunctionSchema(description=final_description, input_model=model), []


def _hinted(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The object whose annotations describe `fn`'s parameters (partials, callable objects)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return fn
    call = inspect.getattr_static(type(fn), "__call__", None)
    return call if inspect.isfunction(call) else fn


def _needs_alias(name: str) -> bool:
    return name.startswith("_") or name.startswith("model_") or hasattr(BaseModel, name)


def clean_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Return the model's JSON Schema with `$ref`s inlined and titles dropped.

    Providers accept this plain form everywhere; recursive models keep their `$defs`.
    """
    raw = model.model_json_schema(by_alias=True)
    defs: dict[str, Any] = raw.pop("$defs", {})
    recursive: set[str] = set()

    def clean(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [clean(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref.removeprefix("#/$defs/")
            if key in stack:
                recursive.add(key)
                return dict(node)
            merged = {**defs[key], **{k: v for k, v in node.items() if k != "$ref"}}
            return clean(merged, (*stack, key))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and not isinstance(value, dict):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: clean(sub, stack) for name, sub in value.items()}
            else:
                out[key] = clean(value, stack)
        return out

    schema: dict[str, Any] = clean(raw, ())
    if recursive:
        schema["$defs"] = {key: clean(defs[key], (key,)) for key in sorted(recursive)}
    schema.setdefault("properties", {})
    return schema


def _wants_decoding(prop: Mapping[str, Any]) -> bool:
    """A list/object parameter that a string could never satisfy as it is."""
    kinds = [
        k for k in (prop, *prop.get("anyOf", ()), *prop.get("oneOf", ())) if isinstance(k, Mapping)
    ]
    types = {k.get("type") for k in kinds}
    return bool(types & {"array", "object"}) and "string" not in types


def decode_json_strings(args: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Decode JSON-encoded strings sent for list/object arguments (some clients do this).

    Never for a parameter that also accepts a string: there the string is the value.
    """
    props: Mapping[str, Any] = schema.get("properties", {})
    out = dict(args)
    for key, value in args.items():
        prop = props.get(key)
        if isinstance(value, str) and isinstance(prop, Mapping) and _wants_decoding(prop):
            try:
                decoded = json.loads(value)
            except ValueError:
                continue
            if isinstance(decoded, list | dict):
                out[key] = decoded
    return out


def describe_validation_error(exc: ValidationError) -> str:
    """One line naming each bad field and why, for a model to read and retry."""
    parts: list[str] = []
    for error in field_errors(exc):
        msg = error.message
        if error.type == "extra_forbidden":
            msg = "unknown field (not in the tool's schema)"
        parts.append(f"{error.key}: {msg}" if error.key else msg)
    return "invalid arguments: " + "; ".join(parts)
