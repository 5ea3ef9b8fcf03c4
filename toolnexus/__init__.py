"""toolnexus: long-lived AI-agent personas that live in a directory.

`agents` holds the persona side (memory_tool, compose_soul, from_dir, ...);
the tool core (`define_tool`, `Tool`, `ToolResult`, `ToolError`) sits here.

Names load lazily: `toolnexus --help` and `--version` import neither pydantic
nor the persona side, and a verb loads only what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import exports

if TYPE_CHECKING:
    from . import agents, errors
    from .errors import ToolError
    from .tools import Tool, ToolResult, define_tool

__all__ = ["Tool", "ToolError", "ToolResult", "agents", "define_tool", "errors"]
__version__ = "0.1.0"

__getattr__, __dir__ = exports(
    __name__,
    {"Tool": ".tools", "ToolError": ".errors", "ToolResult": ".tools", "define_tool": ".tools"},
    modules={"agents": ".agents", "errors": ".errors"},
)
