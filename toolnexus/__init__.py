"""toolnexus: long-lived AI-agent personas that live in a directory.

`agents` holds the persona side (memory_tool, compose_soul, from_dir, ...);
the tool core (`define_tool`, `Tool`, `ToolResult`, `ToolError`) sits here.

Names load lazily, as in `agents`: `toolnexus --help` and `--version` import
neither pydantic nor the persona side, and a verb loads only what it uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import agents, errors
    from .errors import ToolError
    from .tools import Tool, ToolResult, define_tool

__all__ = ["Tool", "ToolError", "ToolResult", "agents", "define_tool", "errors"]
__version__ = "0.1.0"

#: Where each name lives: (module, attribute), attribute None for the module itself.
_WHERE: dict[str, tuple[str, str | None]] = {
    "Tool": (".tools", "Tool"),
    "ToolError": (".errors", "ToolError"),
    "ToolResult": (".tools", "ToolResult"),
    "agents": (".agents", None),
    "define_tool": (".tools", "define_tool"),
    "errors": (".errors", None),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where[0], __name__)
    value = module if where[1] is None else getattr(module, where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
