"""`Snapshot`: everything a store holds of one persona as plain rows (what push / pull copy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CHANGES", "MESSAGES", "SESSIONS", "Snapshot"]

#: The columns copied, in order: the folder's tables and the database's have them all.
CHANGES = "id, time, target, action, before, after, source, shape, digest, redacted"
SESSIONS = "id, started, ended, model, soul, title, origin, digest"
MESSAGES = (
    "session, seq, time, role, name, data, text, is_error, input_tokens, output_tokens, "
    "cache_read_tokens, cache_write_tokens"
)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything a store holds of one persona, as rows in `CHANGES` / `SESSIONS` /
    `MESSAGES` order: `memory` has a (target, bytes) pair per memory file that
    exists; `states` holds the history's file versions uncompressed; flags are bools."""

    memory: tuple[tuple[str, bytes], ...]
    changes: tuple[tuple[Any, ...], ...]
    states: tuple[tuple[str, bytes], ...]
    sessions: tuple[tuple[Any, ...], ...]
    messages: tuple[tuple[Any, ...], ...]

    @property
    def empty(self) -> bool:
        """True when there is nothing to lose: no memory file, history or conversation."""
        return not (self.memory or self.changes or self.sessions)
