"""A persona's durable memory: MEMORY.md and USER.md, the `memory` tool, and their history.

The file format and its edits are pure (`_document`, `_splice`, `_match`,
`_edit`, `_withhold`: what a soul shows of a file); `_tool` runs an edit under
the file's lock through the home's store and is the tool a model calls
(`_args`: its schema); `_review` holds a write made after untrusted text reached
the model and `_held` lists, approves and rejects the held writes; `_history`
reads, undoes and restores changes; `_trust`
and `_trusted_write` keep the entries a person vouched for. Skills the persona
writes are procedural memory under the same contract: `_skill_edit` (the
change and its rules, pure), `_skill_store` (the write under the skill's lock,
its history, undo and restore) and `_skill_tool` (`skill_manage`).

May import: the core, `scanner`, `home`, and `store` (the tool and the history
write through it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._document import Block, MemoryDocument, parse_memory
    from ._held import HeldWrite, Review
    from ._history import Change, History
    from ._skill_store import SkillChange, SkillOp, SkillStore
    from ._skill_tool import skill_manage_tool
    from ._tool import MemoryStore, memory_tool

__all__ = [
    "Block",
    "Change",
    "HeldWrite",
    "History",
    "MemoryDocument",
    "MemoryStore",
    "Review",
    "SkillChange",
    "SkillOp",
    "SkillStore",
    "memory_tool",
    "parse_memory",
    "skill_manage_tool",
]

__getattr__, __dir__ = exports(
    __name__,
    {
        "Block": "._document",
        "Change": "._history",
        "HeldWrite": "._held",
        "History": "._history",
        "MemoryDocument": "._document",
        "MemoryStore": "._tool",
        "Review": "._held",
        "SkillChange": "._skill_store",
        "SkillOp": "._skill_store",
        "SkillStore": "._skill_store",
        "memory_tool": "._tool",
        "parse_memory": "._document",
        "skill_manage_tool": "._skill_tool",
    },
)
