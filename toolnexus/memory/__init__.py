"""A persona's durable memory: MEMORY.md and USER.md, the `memory` tool, and their history.

The file format and its edits are pure (`_document`, `_splice`, `_match`,
`_edit`, `_withhold`: what a soul shows of a file); `_tool` runs an edit under
the file's lock through the home's store and is the tool a model calls
(`_args`: its schema); `_review` holds a write made after untrusted text reached
the model and `_held` lists, approves and rejects the held writes; `_history`
reads, undoes and restores changes; `_trust`
and `_trusted_write` keep the entries a person vouched for.

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
    from ._tool import MemoryStore, memory_tool

__all__ = [
    "Block",
    "Change",
    "HeldWrite",
    "History",
    "MemoryDocument",
    "MemoryStore",
    "Review",
    "memory_tool",
    "parse_memory",
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
        "memory_tool": "._tool",
        "parse_memory": "._document",
    },
)
