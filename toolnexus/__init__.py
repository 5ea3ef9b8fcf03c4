"""toolnexus: long-lived AI-agent personas that live in a directory.

`agents` holds the persona side (memory_tool, compose_soul, from_dir, ...);
the tool core (`define_tool`, `Tool`, `ToolResult`, `ToolError`) sits here.
"""

from __future__ import annotations

from . import agents, errors
from .errors import ToolError
from .tools import Tool, ToolResult, define_tool

__all__ = ["Tool", "ToolError", "ToolResult", "agents", "define_tool", "errors"]
__version__ = "0.1.0"
