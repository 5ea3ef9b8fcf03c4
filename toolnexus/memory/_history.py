"""A home's memory history: every change to MEMORY.md and USER.md, and undoing one.

Every write of the memory tool or the command line is recorded under the
file's lock, with its source (`tool session=… call=…`, `cli`, `python`); a
version someone else wrote (an editor, `git checkout`, a sync tool) is found
and recorded whole as an `outside-edit` the next time anything writes the file,
or when the log is read. Two outside edits with no write between them are one
record. The history lives in the home's `.toolnexus/` state database and is
never part of the soul.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from ..errors import ArgumentError, HistoryError
from ..home._door import MEMORY_FILES
from ..home._identity import Target
from ..home._identity_file import resolve_limits
from ..store._config import configured_store
from ..store._protocol import Outcome, Records, Store
from ..store._records import Change, Pending, Row, digest, file_text, forgotten_texts
from ..tools import call_source
from ._document import MemoryDocument, nfc, parse_memory
from ._edit import LOADS, Op, Plan, quote
from ._tool import MemoryStore

__all__ = ["Change", "History"]


F = TypeVar("F", bound=Callable[..., Any])


def _guarded(method: F) -> F:
    """Report a store's own failures (a database busy, damaged, read-only) as a HistoryError."""

    @functools.wraps(method)
    def guarded(self: History, *args: Any, **kwargs: Any) -> Any:
        with configured_store(self.dir).failures():
            return method(self, *args, **kwargs)

    return cast(F, guarded)


class History:
    """The memory history of the home `dir`: read it, undo a change, restore a version.

    Nothing here composes a soul; every write goes through the memory files' lock
    and is itself recorded (`undo`, `restore`), so an undo can be undone.
    """

    __slots__ = ("_fsync", "dir")

    def __init__(self, dir: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.dir = Path(os.path.abspath(dir))
        self._fsync = fsync

    # -- reading -------------------------------------------------------------------

    @_guarded
    def log(
        self, target: Target | None = "self", *, limit: int | None = None, grep: str | None = None
    ) -> list[Change]:
        """Changes newest first: of one file (`None`: both), all unless `limit`, only those
        whose text contains `grep` (case-insensitive) when given.

        Looks at the file first: a version someone else wrote is recorded before the
        log is read (which creates `.toolnexus/` when there is something to record).

        Raises:
            ArgumentError: for an unknown target or a limit below 0.
            HistoryError: when the state database cannot be used.
        """
        targets = _targets(target)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError(f"limit: must be an int, not {type(limit).__name__}")
        if limit is not None and limit < 0:
            raise ArgumentError(f"limit: must be 0 or more, got {limit}")
        store = configured_store(self.dir)
        for t in targets:
            self._sync(store, t)
        records = store.records()
        if records is None:
            return []
        return records.log(target, limit=limit, grep=grep)

    def _sync(self, store: Store, target: Target) -> None:
        """Record a version of the file someone else wrote, before reading the history."""
        store.sync(target, limit=resolve_limits(self.dir).for_target(target))

    # -- writing -------------------------------------------------------------------

    @_guarded
    def undo(self, id: int | None = None, *, target: Target = "self") -> str:
        """Revert change `id` (default: the latest change of `target`'s file) by applying its
        inverse as a new change, recorded as `undo`; returns what was done.

        Raises:
            HistoryError: `not_found` (no such change), `conflict` (the entry or file
                changed since), `unavailable` (the change was forgotten).
            MemoryEditError: when the inverse cannot be written (the file is full, ...).
        """
        store = configured_store(self.dir)
        reader = self._records(store)
        if id is None:
            self._sync(store, _targets(target)[0])
            row = reader.latest_change(target)
            if row is None:
                raise HistoryError(
                    f"{MEMORY_FILES[target]} has no recorded change to undo", kind="not_found"
                )
        else:
            row = self._row(reader, id)
        file = self._file(row.change.target)
        chosen = row

        def change(doc: MemoryDocument, data: bytes | None) -> Outcome:
            if id is None:  # still the latest, now that the file is locked?
                now = reader.latest_change(chosen.change.target)
                if now is None or now.change.id != chosen.change.id:
                    raise HistoryError(
                        f"{file.name} changed while undo was starting (change "
                        f"{now.change.id if now else '?'} is the latest now); run undo again",
                        kind="conflict",
                    )
            return _undo(chosen, doc, data, file, reader.state_before(chosen))

        return file.commit(change, source=self._source(f"undo={row.change.id}"))

    @_guarded
    def restore(self, id: int) -> str:
        """Put the file back exactly as it was right after change `id`, recorded as `restore`.

        The changes of one batch share the file as it was after the whole batch.

        Raises:
            HistoryError: `not_found` (no such change), `unavailable` (that version
                was forgotten or compacted away).
        """
        reader = self._records(configured_store(self.dir))
        row = self._row(reader, id)
        kept = reader.state_bytes(row.digest)
        if kept is None:
            raise HistoryError(
                f"change {id}: the file as it was after it is no longer kept (forgotten, "
                "compacted, or too big to keep); pick another change from memory log",
                kind="unavailable",
            )
        file = self._file(row.change.target)

        def change(doc: MemoryDocument, data: bytes | None) -> Outcome:
            if data == kept or (data is None and kept == b""):
                return (
                    None,
                    (
                        f"{file.name} is already as it was after change {id}; nothing written. "
                        f"{file.usage(doc)}"
                    ),
                    (),
                )
            now = parse_memory(kept.decode("utf-8"))
            pending = Pending("restore", file_text(data), kept.decode("utf-8"), "file")
            message = (
                f"restored {file.name} to how it was after change {id} "
                f"({row.change.time}). {LOADS} {file.usage(now)}"
            )
            return kept, message, (pending,)

        return file.commit(change, source=self._source(f"restore={id}"))

    @_guarded
    def compact(self, *, keep_days: int) -> str:
        """Drop changes older than `keep_days` days (each file's latest one always stays).

        Raises:
            ArgumentError: for a negative number of days.
        """
        if isinstance(keep_days, bool) or not isinstance(keep_days, int):
            raise TypeError(f"keep_days: must be an int, not {type(keep_days).__name__}")
        if keep_days < 0:
            raise ArgumentError(f"keep_days: must be 0 or more, got {keep_days}")
        records = configured_store(self.dir).records()
        if records is None:
            return "no history yet: nothing to compact"
        before = records.size()
        removed, kept = records.compact(keep_days)
        message = (
            f"removed {removed} change{'s' if removed != 1 else ''} older than {keep_days} "
            f"days; {kept} kept."
        )
        after = records.size()
        if before is not None and after is not None:
            message += f" {before[0]}: {_kb(before[1])} -> {_kb(after[1])}."
        return message

    @_guarded
    def forget(self, id: int) -> str:
        """Blank change `id`'s texts for good (a secret written by mistake), and every kept
        version of the file that holds them; the record stays, marked redacted.

        Raises:
            HistoryError: `not_found` for no such change.
        """
        store = configured_store(self.dir)
        reader = self._records(store)
        self._row(reader, id)
        done = reader.forget(id)
        assert done is not None  # found just above; records are never deleted meanwhile
        row, others, dropped = done
        talk = store.talk()
        talks = [] if talk is None else talk.sessions_holding(forgotten_texts(row))
        versions = (
            f"the {dropped} kept version{'s' if dropped != 1 else ''} of the file that held "
            f"them {'are' if dropped != 1 else 'is'} gone too (restore cannot return to "
            f"{'them' if dropped != 1 else 'it'})"
            if dropped
            else "no kept version of the file held them"
        )
        message = (
            f"forgot change {id}: its texts are blanked ({store.forgotten_where}) and {versions}; "
            "the record keeps its id, time, target and action."
        )
        if others:
            listed = ", ".join(str(o) for o in others)
            message += f" The same text is also in change{'s' if len(others) > 1 else ''} "
            message += f"{listed}: forget {'those' if len(others) > 1 else 'it'} too."
        if talks:
            listed = ", ".join(talks)
            message += (
                f" It is also in saved conversation{'s' if len(talks) > 1 else ''} {listed}: "
                f"`toolnexus sessions HOME rm ID` deletes {'those' if len(talks) > 1 else 'it'}."
            )
        return message

    # -- parts ---------------------------------------------------------------------

    def _file(self, target: str) -> MemoryStore:
        """One memory file, written as the memory tool writes it."""
        limits = resolve_limits(self.dir)
        return MemoryStore(self.dir, target, limit=limits.for_target(target), fsync=self._fsync)  # type: ignore[arg-type]

    def _records(self, store: Store) -> Records:
        records = store.records()
        if records is None:
            raise HistoryError(
                f"{store.where}: no history yet (nothing was written through "
                "toolnexus in this home)",
                kind="not_found",
            )
        return records

    def _row(self, reader: Records, id: int) -> Row:
        if isinstance(id, bool) or not isinstance(id, int):
            raise TypeError(f"id: must be an int, not {type(id).__name__}")
        row = reader.find_change(id) if 0 < id < 2**63 else None
        if row is None:
            raise HistoryError(f"no change {id} in the history", kind="not_found")
        return row

    @staticmethod
    def _source(what: str) -> str:
        return f"{call_source('python')} {what}"


def _targets(target: Target | None) -> tuple[Target, ...]:
    if target is None:
        return tuple(MEMORY_FILES)
    if target not in MEMORY_FILES:
        raise ArgumentError(f"target: unknown memory target {target!r}; use 'self' or 'user'")
    return (target,)


def _undo(
    row: Row, doc: MemoryDocument, data: bytes | None, store: MemoryStore, prior: bytes | None
) -> Outcome:
    """The inverse of one recorded change, applied to the file as it is now.

    When the file is still exactly as the change left it and the version before
    is kept (`prior`), that version goes back byte for byte (an entry returns to
    its place); otherwise the inverse is applied entry by entry.
    """
    c = row.change
    name = store.name
    unchanged = digest(data) == row.digest
    if row.redacted:
        raise HistoryError(f"change {c.id} was forgotten: nothing left to undo", kind="unavailable")
    if row.shape == "file":
        if not unchanged:
            raise HistoryError(
                f"cannot undo change {c.id} ({c.action}): {name} has changed since; see "
                f"memory log, or restore an earlier change",
                kind="conflict",
            )
        if c.before is None:
            raise HistoryError(
                f"cannot undo change {c.id} ({c.action}): the file before it is not kept",
                kind="unavailable",
            )
        back = c.before.encode("utf-8")
        return back, _back_as_before(c, back, store), (Pending("undo", c.after, c.before, "file"),)
    present = {nfc(e) for e in doc.entries}

    def conflict(why: str) -> HistoryError:
        return HistoryError(
            f"cannot undo change {c.id} ({c.action}): {why}; see memory log", kind="conflict"
        )

    if c.after is not None and nfc(c.after) not in present:
        raise conflict(f"the entry {quote(c.after)} is no longer in {name} (changed since)")
    if c.before is not None and nfc(c.before) in present:
        raise conflict(f"the entry {quote(c.before)} is already in {name}")
    pending = _pending_undo(row)
    if prior is not None and unchanged:
        return prior, _back_as_before(c, prior, store), (pending,)
    if c.before is None:  # an add: remove it again
        assert c.after is not None
        op = Op("remove", c.after)
    elif c.after is None or row.shape == "merge":  # a remove (or a merge): add it back
        op = Op("add", c.before)
    else:  # a replace: the entry reads as before again
        op = Op("replace", c.after, c.before)
    after, message, _ = Plan([op], name=name, limit=store.limit, batch=False).apply(doc)
    if after is None:  # pragma: no cover - the checks above rule this out
        return None, message, ()
    done = f"undid change {c.id} ({c.action}): {message}"
    return after.render().encode("utf-8"), done, (pending,)


def _back_as_before(c: Change, back: bytes, store: MemoryStore) -> str:
    """The message of an undo that puts the whole file back as it was before change `c`."""
    return (
        f"undid change {c.id} ({c.action}): {store.name} is back as it was before it. {LOADS} "
        f"{store.usage(parse_memory(back.decode('utf-8')))}"
    )


def _pending_undo(row: Row) -> Pending:
    """The record of undoing an entry change: its after becomes before, and back."""
    c = row.change
    if row.shape == "merge":  # the merged-away entry comes back; its twin stays
        return Pending("undo", None, c.before)
    return Pending("undo", c.after, c.before)


def _kb(size: int) -> str:
    return f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} bytes"
