"""A persona's durable memory: the `memory` tool over MEMORY.md and USER.md.

Every action reads the file under a lock (through `_files`, the one reader of
home files), applies one edit, and writes it back atomically before it returns
(see `_store`); the entry format lives in `_memfile`, the safety check in
`_safety`. Writes never touch the running session: the soul is a snapshot, so
they load from the next session on.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.config import JsonDict
from pydantic.json_schema import SkipJsonSchema

from ..errors import ArgumentError, HomeError, HomeFileError, MemoryEditError
from ..tools import Tool, define_tool
from ._files import MEMORY_FILES, Door, decode, memory_cap
from ._identity import MemoryLimits, Target, memory_limit
from ._load import find_identity
from ._memfile import (
    Block,
    MemoryDocument,
    append_entry,
    normalize_text,
    parse_memory,
    remove_entries,
    replace_entries,
)
from ._safety import scan_text
from ._store import Folder, LockLost, ReadOnlyFile, SwapConflict, locked, update

__all__ = [
    "MEMORY_FILES",
    "Block",
    "MemoryDocument",
    "MemoryStore",
    "Target",
    "memory_tool",
    "parse_memory",
]

_LOADS = "Saved now, loads next session (this session's system prompt does not change)."
_NOTHING = "Nothing written."
_LOCK_RETRIES = 20


def _clip(text: str, limit: int = 200) -> str:
    """The model's text as an error quotes it: whole up to `limit` characters, else cut with `…`."""
    return text if len(text) <= limit else text[:limit] + "\u2026"


def _quote(text: str, limit: int = 200) -> str:
    """Show text to a model unambiguously (JSON string), shortened when long."""
    return json.dumps(_clip(text, limit), ensure_ascii=False)


def _nfc(text: str) -> str:
    """The form text is compared in: NFD input ("cafe\u0301") matches an NFC entry ("caf\u00e9")."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _entries(doc: MemoryDocument) -> str:
    count = len(doc.entries)
    return f"{count} entry" if count == 1 else f"{count} entries"


def _check_text(text: str) -> str:
    """Reject blank `text`; return it unchanged. Shared by the tool schema and the store."""
    if not text.strip():
        raise ValueError(
            "must not be empty or only whitespace: for add, the note to save; "
            "for replace/remove, part of the entry to change"
        )
    return text


def _invalid(field: str, message: str) -> MemoryEditError:
    return MemoryEditError(f"invalid arguments: {field}: {message}", kind="invalid")


@dataclass(frozen=True, slots=True)
class MemoryStore:
    """One memory file (MEMORY.md or USER.md) in `dir`, edited safely and durably.

    Each edit takes the file's inter-process lock, re-reads the file from disk,
    applies the change and checks it (match, limit, safety), then replaces the
    file atomically; on any error nothing is written. `fsync=False` trades crash
    durability for speed (tests, benchmarks).

    Raises:
        ArgumentError: (a ValueError) at construction, for an unknown target or a
            limit out of range.
        TypeError: at construction, for a limit that is not an int.
    """

    dir: Path
    target: Target
    _: KW_ONLY
    limit: int
    fsync: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "dir", Path(self.dir))
        if self.target not in MEMORY_FILES:
            raise ArgumentError(
                f"target: unknown memory target {self.target!r}; use 'self' or 'user'"
            )
        memory_limit(self.limit, where="limit:")

    @property
    def path(self) -> Path:
        """Where the file lives (it may not exist yet: missing means empty)."""
        return self.dir / MEMORY_FILES[self.target]

    @property
    def name(self) -> str:
        """The file's name, as messages show it."""
        return MEMORY_FILES[self.target]

    def usage(self, doc: MemoryDocument) -> str:
        """Describe how full `doc` is, for a model deciding whether to consolidate."""
        return f"{self.name}: {_entries(doc)}, {doc.chars}/{self.limit} characters used."

    def add(self, text: str) -> str:
        """Append `text` as one entry (an exact duplicate writes nothing).

        Raises:
            MemoryEditError: `invalid`, `rejected` (safety), or `full`.
        """
        entry = self._entry_text(self._query(text), field="text")
        if len(entry) > self.limit:
            # Cheap and certain, so it comes before the safety scan of a huge text.
            raise MemoryEditError(
                f"full: text is {len(entry)} characters, more than all of {self.name} may "
                f"hold ({self.limit}). Save a shorter note. {_NOTHING}",
                kind="full",
            )
        self._scan(entry, field="text")

        def edit(doc: MemoryDocument) -> tuple[MemoryDocument | None, str]:
            if _nfc(entry) in {_nfc(e) for e in doc.entries}:
                return None, (
                    f"already in {self.name}, nothing written: the entry is saved and "
                    f"loads next session. {self.usage(doc)}"
                )
            new = append_entry(doc, entry)
            _verify(doc, new, (*doc.entries, entry))
            self._check_room(doc, new)
            return new, f"added to {self.name}. {_LOADS} {self.usage(new)}"

        return self._edit(edit)

    def replace(self, text: str, with_: str) -> str:
        """Swap the part `text` of the one matching entry for `with_`.

        Raises:
            MemoryEditError: `invalid`, `not_found`, `ambiguous`, `rejected`, `full`.
        """
        query = self._query(text)

        def edit(doc: MemoryDocument) -> tuple[MemoryDocument | None, str]:
            old = self._match(doc, text, query)
            replacement = normalize_text(with_)
            # A whole-entry match replaces the entry; otherwise every occurrence of
            # the substring inside that one entry is swapped.
            whole = _nfc(old) in (_nfc(query), _nfc(query.strip()))
            if whole:
                changed = replacement
            elif query in old:
                changed = old.replace(query, replacement)
            else:  # matched only in NFC: edit the NFC form of the entry
                changed = _nfc(old).replace(_nfc(query), replacement)
            new_text = self._entry_text(changed, field="with", empty="use action remove")
            new = replace_entries(doc, old, new_text)
            _verify(doc, new, tuple(new_text if e == old else e for e in doc.entries))
            self._check_room(doc, new)  # before the scan: a huge text fails here, cheaply
            self._scan(new_text, field="with")
            return new, (
                f"replaced in {self.name}; the entry now reads {_quote(new_text)}. "
                f"{_LOADS} {self.usage(new)}"
            )

        return self._edit(edit)

    def remove(self, text: str) -> str:
        """Delete the one entry that `text` matches.

        Raises:
            MemoryEditError: `invalid`, `not_found`, `ambiguous`.
        """
        query = self._query(text)

        def edit(doc: MemoryDocument) -> tuple[MemoryDocument | None, str]:
            old = self._match(doc, text, query)
            new = remove_entries(doc, old)
            _verify(doc, new, tuple(e for e in doc.entries if e != old))
            return new, f"removed from {self.name}: {_quote(old)}. {_LOADS} {self.usage(new)}"

        return self._edit(edit)

    # -- internals -----------------------------------------------------------------

    def _edit(self, edit: Callable[[MemoryDocument], tuple[MemoryDocument | None, str]]) -> str:
        """Run `edit` on the freshly read file under the lock; write its result, if any."""
        folder: Folder | None = None
        try:
            folder, name = Folder.of(Door(self.dir), os.fspath(self.path))
            for _ in range(_LOCK_RETRIES):
                try:
                    return self._edit_locked(folder, name, edit)
                except LockLost:
                    continue  # the lock file was deleted under us: redo the edit from disk
        except HomeFileError as exc:  # the door refused the file (a link out, a FIFO, ...)
            raise MemoryEditError(
                f"cannot write {self.name}: {exc}. {_NOTHING}", kind="io"
            ) from None
        except ReadOnlyFile as exc:
            raise MemoryEditError(
                f"cannot write {self.name}: it is {exc.strerror}: a person marked it so. Make "
                f"it writable (chmod u+w {self.name}) to let the persona write to it. {_NOTHING}",
                kind="io",
            ) from None
        except SwapConflict:
            msg = "it kept changing while being written (someone keeps saving it); try again"
            raise MemoryEditError(
                f"cannot write {self.name}: {msg}. {_NOTHING}", kind="io"
            ) from None
        except OSError as exc:
            raise MemoryEditError(
                f"cannot write {self.name}: {exc.strerror or exc} ({exc.filename or self.path}). "
                f"Check that the folder is writable and has space. {_NOTHING}",
                kind="io",
            ) from exc
        finally:
            if folder is not None:
                folder.close()
        raise MemoryEditError(
            f"cannot write {self.name}: its lock file .{name}.lock keeps being "
            f"deleted by something else. {_NOTHING}",
            kind="io",
        )

    def _edit_locked(
        self,
        folder: Folder,
        name: str,
        edit: Callable[[MemoryDocument], tuple[MemoryDocument | None, str]],
    ) -> str:
        messages: list[str] = []

        def apply(data: bytes | None) -> bytes | None:
            text = ""
            if data:
                try:
                    text = decode(data, self.name)
                except HomeFileError:
                    raise MemoryEditError(
                        f"cannot edit {self.name}: it is not UTF-8 text; a person must re-save "
                        f"it as UTF-8. {_NOTHING}",
                        kind="invalid",
                    ) from None
            doc = parse_memory(text)
            new, message = edit(doc)
            messages.append(message)
            return None if new is None else new.render().encode("utf-8")

        with locked(folder, name) as lock:
            note = update(
                folder,
                name,
                apply,
                lock=lock,
                cap=memory_cap(self.limit),
                shown=os.fspath(self.path),
                fsync=self.fsync,
            )
        message = messages[-1]
        return message if note is None else f"{message} {note}"

    def _entry_text(self, text: str, *, field: str, empty: str = "") -> str:
        """Normalize an entry's text: LF newlines, no outer blanks, not empty."""
        entry = normalize_text(text).strip()
        if not entry:
            hint = f"; {empty}" if empty else ""
            raise _invalid(field, f"the entry would be empty{hint}")
        return entry

    @staticmethod
    def _scan(entry: str, *, field: str) -> None:
        """Refuse text that is unsafe in a system prompt (see `safety`)."""
        reasons = scan_text(entry)
        if reasons:
            raise MemoryEditError(
                f"rejected: {field} breaks a safety rule: {'; '.join(reasons)}. Memory loads "
                "into every future system prompt, so it must be plain data: rephrase it as a "
                f"plain fact without that and try again. {_NOTHING}",
                kind="rejected",
            )

    @staticmethod
    def _query(text: str) -> str:
        try:
            _check_text(text)
        except ValueError as exc:
            raise _invalid("text", str(exc)) from None
        return normalize_text(text)

    @staticmethod
    def _match(doc: MemoryDocument, text: str, query: str) -> str:
        """Pick the entry `query` means: a whole-text match wins, else a unique substring.

        Entries with identical text count as one, so duplicates a person made can
        still be edited. Text is compared in NFC; the entry is returned as stored.
        """
        forms = {_nfc(e): e for e in reversed(doc.entries)}  # first one wins
        for whole in (query, query.strip()):
            if _nfc(whole) in forms:
                return forms[_nfc(whole)]
        needle = _nfc(query)
        hits = list(dict.fromkeys(e for e in doc.entries if needle in _nfc(e)))
        if not hits:
            raise MemoryEditError(f"not found: {_clip(text)}", kind="not_found")
        if len(hits) > 1:
            shown = "; ".join(_quote(e, 80) for e in hits[:5])
            more = f"; and {len(hits) - 5} more" if len(hits) > 5 else ""
            raise MemoryEditError(
                f"ambiguous: {len(hits)} entries match {_quote(text)}: {shown}{more}. Quote "
                f"more of the entry you mean (its whole text always works). {_NOTHING}",
                kind="ambiguous",
            )
        return hits[0]

    def _check_room(self, before: MemoryDocument, after: MemoryDocument) -> None:
        """Refuse growth past the limit; shrinking an over-full file is always allowed."""
        if after.chars > self.limit and after.chars > before.chars:
            raise MemoryEditError(
                f"full: {self.name} would hold {after.chars} of its {self.limit} characters "
                f"(now {_entries(before)}, {before.chars} characters). Consolidate first: merge "
                "related "
                'entries or shorten them with action "replace", drop stale ones with '
                f'"remove", then try again. {_NOTHING}',
                kind="full",
            )


def _verify(before: MemoryDocument, after: MemoryDocument, expected: tuple[str, ...]) -> None:
    """Refuse to write a document that does not parse back to what the edit intended."""
    prose_before = "".join(b.raw for b in before.blocks if b.kind == "prose")
    prose_after = "".join(b.raw for b in after.blocks if b.kind == "prose")
    if after.entries != expected or prose_after.rstrip("\r\n") != prose_before.rstrip("\r\n"):
        raise MemoryEditError(
            "internal error: the edit would not read back as intended; nothing written "
            "(please report this bug)",
            kind="internal",
        )


# -- the tool ---------------------------------------------------------------------

DESCRIPTION = """\
Save durable notes that carry over to your future sessions. Two files: \
target "self" (the default) is your own memory: facts about your work, \
decisions, lessons learned, details of the environment. Target "user" is what \
you know about the user: preferences, role, habits, how they like to work.

Write good entries: one fact per entry, short (a sentence or two), stated \
plainly, and durable (still worth knowing weeks from now). Do not save \
secrets, one-off task progress, or anything easy to look up again.

Actions: "add" saves `text` as a new entry. "replace" finds the one entry \
containing `text` and swaps that part for `with`. "remove" deletes the one \
entry containing `text`. For replace and remove, quote enough of the entry to \
match only it; its whole text always works.

Writes are saved to disk at once but load NEXT SESSION: your current system \
prompt does not change, so do not add a note again because you cannot see it yet.

Each file has a character limit, and every result shows the usage. When a \
file is full, consolidate first: merge or shorten entries with "replace", drop \
stale ones with "remove", then add again."""


def _drop_description(schema: JsonDict) -> None:
    """Keep the schema to the fields: the tool's description already explains the tool."""
    schema.pop("description", None)


def _drop_default(schema: JsonDict) -> None:
    """Keep `with` a plain optional string in the schema (its None default is internal)."""
    schema.pop("default", None)


class MemoryArgs(BaseModel):
    """The arguments of the memory tool; the schema property is literally `with`."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, json_schema_extra=_drop_description
    )

    action: Literal["add", "replace", "remove"] = Field(
        description="add: save a new entry. replace: change part of one entry. "
        "remove: delete one entry."
    )
    target: Target = Field(
        default="self",
        description='"self": your own notes (MEMORY.md). "user": what you know about '
        "the user (USER.md).",
    )
    text: str = Field(
        description="add: the note to save. replace/remove: a part of the existing entry "
        "that matches only it (its whole text always works)."
    )
    with_: str | SkipJsonSchema[None] = Field(
        default=None,
        alias="with",
        description="replace only: the text that takes the place of `text` in the entry.",
        json_schema_extra=_drop_default,
    )

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, text: str) -> str:
        return _check_text(text)

    @field_validator("with_", mode="before")
    @classmethod
    def _with_is_text(cls, value: object) -> object:
        # One plain message instead of one per member of `str | None`.
        if value is not None and not isinstance(value, str):
            raise ValueError("Input should be a valid string")
        return value

    @model_validator(mode="after")
    def _with_matches_action(self) -> MemoryArgs:
        if self.action == "replace" and self.with_ is None:
            raise ValueError('with: required when action is "replace" (the new text)')
        if self.action != "replace" and self.with_ is not None:
            raise ValueError(
                f'with: only used by action "replace"; leave it out for "{self.action}"'
            )
        return self


def _resolve_limits(home: Path, limits: Mapping[str, int] | None) -> MemoryLimits:
    """Lay `limits` over IDENTITY.md's `memory_limits` (or the package defaults)."""
    found = find_identity(home)
    base = found[1].config.memory_limits if found is not None else MemoryLimits()
    return base if limits is None else base.merged(limits)


def memory_tool(dir: str | Path, *, limits: Mapping[str, int] | None = None) -> Tool:
    """Build the `memory` tool: add / replace / remove entries in `dir`'s memory files.

    Args:
        dir: an existing home folder; MEMORY.md and USER.md are created there
            on the first write.
        limits: characters per file, `{"self": ..., "user": ...}` (either key may
            be left out). Defaults: IDENTITY.md's `memory_limits` when `dir` has
            one, else the package defaults.

    Raises:
        HomeError: when `dir` is not a folder, or its IDENTITY.md is invalid.
        ArgumentError: (a ValueError) when `limits` has an unknown key or a value
            out of range.
        TypeError: when `limits` is not a mapping, or a value is not an int.
    """
    home = Path(dir)
    if not home.is_dir():
        raise HomeError(
            f"{home}: not a folder: memory_tool needs an existing home folder "
            "(it creates MEMORY.md and USER.md in it, never folders)"
        )
    resolved = _resolve_limits(home, limits)
    stores = {t: MemoryStore(home, t, limit=resolved.for_target(t)) for t in MEMORY_FILES}

    def handle(args: MemoryArgs) -> str:
        store = stores[args.target]
        if args.action == "add":
            return store.add(args.text)
        if args.action == "replace":
            assert args.with_ is not None  # checked by MemoryArgs
            return store.replace(args.text, args.with_)
        return store.remove(args.text)

    return define_tool(
        name="memory", description=DESCRIPTION, input_model=MemoryArgs, handler=handle
    )
