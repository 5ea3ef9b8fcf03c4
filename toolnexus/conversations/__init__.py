"""Saved conversations and recall: what a persona has lived, kept in its home.

`_saved` holds `Conversations` (list, read, export, import, remove, recall) and
the `Transcript` a session saves through; `_chatfile` translates messages to
rows and reads JSONL chat files; `_recall` is the `recall` tool.

May import: the core, `home`, `scanner`, `store` and `models`' conversation types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._recall import recall_tool
    from ._saved import Conversations, Hit, SavedSession, Transcript

__all__ = ["Conversations", "Hit", "SavedSession", "Transcript", "recall_tool"]

__getattr__, __dir__ = exports(
    __name__, {**dict.fromkeys(__all__, "._saved"), "recall_tool": "._recall"}
)
