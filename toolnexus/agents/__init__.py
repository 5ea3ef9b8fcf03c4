"""Personas that live in a directory: the home, its soul, its memory, the agent.

Names load lazily, so `import toolnexus` stays cheap for a command line that
only needs one of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..errors import HomeError
    from .agent import Agent, from_dir
    from .conversations import Conversations
    from .home import Home
    from .memory import memory_tool
    from .recall import recall_tool
    from .scanner import Finding, Scanner
    from .session import Session
    from .skills import skill_tool
    from .soul import Soul, compose_soul
    from .watch import watch_home

__all__ = [
    "Agent",
    "Conversations",
    "Finding",
    "Home",
    "HomeError",
    "Scanner",
    "Session",
    "Soul",
    "compose_soul",
    "from_dir",
    "memory_tool",
    "recall_tool",
    "skill_tool",
    "watch_home",
]

_WHERE = {
    "Agent": ".agent",
    "Conversations": ".conversations",
    "recall_tool": ".recall",
    "Session": ".session",
    "Finding": ".scanner",
    "Scanner": ".scanner",
    "from_dir": ".agent",
    "Home": ".home",
    "memory_tool": ".memory",
    "Soul": ".soul",
    "compose_soul": ".soul",
    "HomeError": "..errors",
    "skill_tool": ".skills",
    "watch_home": ".watch",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
