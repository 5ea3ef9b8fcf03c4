"""Personas that live in a directory: the home, its soul, its memory, the agent.

The persona side in one place: what SPEC names under `agents`, re-exported from
the packages that hold it (`soul`, `memory`, `scanner`, `store`,
`conversations`), and what lives here: `Agent` and `from_dir` (`_agent`),
`Session` (`_session`), `Home` (`_home`), the `skill` tool (`_skills`) and
`watch_home` (`_watch`). The models are `agents.models`.

Names load lazily, so `import toolnexus` stays cheap for a command line that
only needs one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ..conversations._recall import recall_tool
    from ..conversations._saved import Conversations
    from ..errors import HomeError
    from ..memory._held import Review
    from ..memory._skill_store import SkillStore
    from ..memory._skill_tool import skill_manage_tool
    from ..memory._tool import memory_tool
    from ..scanner._scanner import Finding, Scanner
    from ..soul import Soul, compose_soul
    from ..store._protocol import Store
    from ..store.folder._store import FolderStore
    from ..store.postgres._store import PgStore
    from ._agent import Agent, Uses, from_dir
    from ._home import Home
    from ._session import Session
    from ._skills import skill_tool
    from ._watch import watch_home

__all__ = [
    "Agent",
    "Conversations",
    "Finding",
    "FolderStore",
    "Home",
    "HomeError",
    "PgStore",
    "Review",
    "Scanner",
    "Session",
    "SkillStore",
    "Soul",
    "Store",
    "Uses",
    "compose_soul",
    "from_dir",
    "memory_tool",
    "recall_tool",
    "skill_manage_tool",
    "skill_tool",
    "watch_home",
]

__getattr__, __dir__ = exports(
    __name__,
    {
        "Agent": "._agent",
        "Conversations": "..conversations._saved",
        "Finding": "..scanner._scanner",
        "FolderStore": "..store.folder._store",
        "Home": "._home",
        "HomeError": "..errors",
        "PgStore": "..store.postgres._store",
        "Review": "..memory._held",
        "Scanner": "..scanner._scanner",
        "Session": "._session",
        "SkillStore": "..memory._skill_store",
        "Soul": "..soul",
        "Store": "..store._protocol",
        "Uses": "._agent",
        "compose_soul": "..soul",
        "from_dir": "._agent",
        "memory_tool": "..memory._tool",
        "recall_tool": "..conversations._recall",
        "skill_manage_tool": "..memory._skill_tool",
        "skill_tool": "._skills",
        "watch_home": "._watch",
    },
    modules={"models": ".models"},
)
