"""The `Store` seam: one shape for where a home's memory files, history and conversations live.

Two stores have it: the home's folder (`FolderStore`: MEMORY.md and USER.md,
and SQLite in `.toolnexus/`) and a PostgreSQL database many machines share
(`PgStore`). A home's store is chosen once, at the edge (`configured_store`),
and passed down; the code above never asks which one it holds. Where they
differ, it is a documented property of the store (`keeps_trust_marks`,
`forgotten_where`), not a branch above it.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from ..home._identity import Target
from ..memory._document import MemoryDocument
from ._records import Change, Pending, Row
from ._review import Review
from ._sessions import Found, Imported, Line, Match, Meta, Record, Stored
from ._snapshot import Snapshot

__all__ = ["Edit", "Outcome", "Records", "Review", "Store", "Talk"]

#: What an edit makes of a memory file read under its lock: the bytes to write (None:
#: nothing), the message for the caller, and the changes to record.
Outcome = tuple[bytes | None, str, tuple[Pending, ...]]
#: An edit: the file's bytes as read under the lock (None: no file yet) to its outcome.
#: A pure function of those bytes, so either store can run it (and run it again).
Edit = Callable[[bytes | None], Outcome]


class Records(Protocol):
    """A store's memory history: what `memory log`, undo, restore, forget and compact read."""

    def log(self, target: str | None, *, limit: int | None, grep: str | None) -> list[Change]:
        """The records, newest first: of one file (None: both), at most `limit`, only those
        whose text holds `grep` (case-insensitive)."""
        ...

    def find_change(self, id: int) -> Row | None:
        """Record `id`, with what undo and restore need."""
        ...

    def latest_change(self, target: str) -> Row | None:
        """The newest record of a file."""
        ...

    def state_before(self, row: Row) -> bytes | None:
        """The file's bytes just before `row`'s change (None: unknown or no file)."""
        ...

    def state_bytes(self, dig: str) -> bytes | None:
        """A kept version of a file by its digest (None: not kept)."""
        ...

    def forget(self, id: int) -> tuple[Row, list[int], int] | None:
        """Blank record `id`'s texts and the kept versions holding them: the record, the
        other records holding the same text, and how many versions went."""
        ...

    def compact(self, keep_days: int) -> tuple[int, int]:
        """Drop records older than `keep_days` days (each file's latest stays): (removed, kept)."""
        ...

    def size(self) -> tuple[str, int] | None:
        """What holds the history and its bytes, where the store can tell (None: it cannot)."""
        ...


class Talk(Protocol):
    """A store's saved conversations: what `Conversations` reads and writes."""

    def save(
        self,
        *,
        session: str,
        model: str | None,
        soul: str,
        records: Sequence[Record],
        create: bool = True,
    ) -> bool:
        """Append `records` to a live session, creating it when `create`; False (nothing
        saved) when it is gone and not `create`: the conversation was removed."""
        ...

    def import_conversations(self, batch: Sequence[Imported]) -> list[tuple[str, bool]]:
        """Save whole conversations; each one's id and whether it was new."""
        ...

    def sessions(self, *, limit: int | None = None) -> list[Meta]:
        """Saved sessions, oldest start first."""
        ...

    def latest(self) -> Meta | None:
        """The session most recently active."""
        ...

    def match_ids(self, prefix: str) -> list[str]:
        """The ids starting with `prefix`."""
        ...

    def meta(self, session: str) -> Meta | None:
        """One session's row."""
        ...

    def messages(self, session: str) -> list[Stored]:
        """One session's messages in order."""
        ...

    def remove(self, session: str) -> int:
        """Delete a session; how many messages went with it."""
        ...

    def has_any(self) -> bool:
        """Whether there is anything to recall: a saved session or a memory change."""
        ...

    def corpus(self) -> tuple[int, float]:
        """How many messages recall searches, and their mean length in characters."""
        ...

    def matching(
        self, forms: Sequence[str], *, cap: int, exclude: str | None = None
    ) -> tuple[int, list[Match]]:
        """The saved messages holding any of `forms` (a word, `prefix*`, or words in order;
        never search syntax), leaving out session `exclude` and recall's own calls: how
        many, and the newest `cap` of them. What `conversations` ranks."""
        ...

    def history_matching(
        self, forms: Sequence[str], *, cap: int, exclude: str | None = None
    ) -> tuple[int, list[Found]]:
        """The memory changes holding any of `forms`, leaving out those made in session
        `exclude`: how many, and the newest `cap` of them."""
        ...

    def lines(self, keys: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Line]:
        """The saved messages at `keys` (session, seq) that exist, by key."""
        ...

    def unembedded(self, model: str, *, limit: int) -> list[tuple[tuple[str, int], str]]:
        """The newest `limit` messages recall searches with no embedding by `model` yet:
        each one's place and text (the semantic index, built as recall goes)."""
        ...

    def put_vectors(self, model: str, items: Sequence[tuple[tuple[str, int], bytes]]) -> None:
        """Keep each message's embedding by `model` (float32 bytes)."""
        ...

    def vectors(self, model: str) -> list[tuple[tuple[str, int], bytes]]:
        """Every embedding by `model`, with its message's place."""
        ...

    def sessions_holding(self, texts: Sequence[str]) -> list[str]:
        """The sessions with a message holding one of `texts`."""
        ...


@runtime_checkable
class Store(Protocol):
    """Where a home's memory files, history and conversations live."""

    @property
    def where(self) -> str:
        """The store as messages name it."""
        ...

    @property
    def keeps_trust_marks(self) -> bool:
        """Whether a person's trust marks (`memory add --trust`) can be kept here."""
        ...

    @property
    def forgotten_where(self) -> str:
        """Where the text `forget` blanks goes, as its message says."""
        ...

    @property
    def announces_changes(self) -> bool:
        """Whether `notifications` tells of writes made elsewhere (a folder is watched as
        files instead)."""
        ...

    def read(self, target: Target) -> bytes | None:
        """A memory file's bytes (None: no file yet)."""
        ...

    def memory_file(self, target: Target, *, limit: int) -> tuple[str, MemoryDocument] | None:
        """A memory file's content hash and parse (None: no file yet), memoised by content;
        `limit` (characters) sets the folder's byte cap."""
        ...

    def edit(
        self,
        target: Target,
        edit: Edit,
        *,
        source: str,
        limit: int,
        fsync: bool = True,
        cancel: threading.Event | None = None,
        then: Callable[[], str] | None = None,
    ) -> str:
        """Apply `edit` to a memory file atomically, with its history; the edit's message.

        `then` runs once the new bytes are in place, inside the write; what it
        returns ends the message.
        """
        ...

    def sync(self, target: Target, *, limit: int) -> None:
        """Record a version of the file someone wrote behind the store's back."""
        ...

    def records(self) -> Records | None:
        """The memory history (None: none kept yet)."""
        ...

    def talk(self, *, create: bool = False) -> Talk | None:
        """The saved conversations (None: none kept yet, and not `create`)."""
        ...

    def review(self, *, create: bool = False) -> Review | None:
        """The memory writes held for a person's review (None: none kept yet, and not
        `create`)."""
        ...

    def health(self) -> list[str]:
        """What a person must repair before this store keeps a history again, each with its
        repair (empty: nothing). Reads only; `toolnexus check` reports it."""
        ...

    def failures(self) -> AbstractContextManager[None]:
        """Around a use of `records()` or `talk()`: the store's own failures (a database
        that is busy, damaged or read-only) come out as `HistoryError` (kind `state`)
        naming it, whichever store it is."""
        ...

    def snapshot(self) -> Snapshot:
        """Everything held, as rows."""
        ...

    def replace(self, snapshot: Snapshot) -> None:
        """Make the store hold exactly `snapshot`."""
        ...

    def notifications(self) -> AsyncIterator[None]:
        """Yield whenever another machine commits a change (once as soon as it listens);
        end at once where there is nothing to listen to (a folder is watched as files)."""
        ...
