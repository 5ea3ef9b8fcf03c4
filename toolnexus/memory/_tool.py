"""A persona's durable memory: the `memory` tool over MEMORY.md and USER.md.

Every action applies one edit to the file as read under its lock, in the store
the home keeps it in (its folder, or a database: `store/`), and returns once it
is written; the entry format lives in `_document`, the edits in `_edit`, the
safety check in `scanner/`. Writes never touch the running session: the soul
is a snapshot, so they load from the next session on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from ..errors import ArgumentError, HomeError, HomeFileError, MemoryEditError, StoreError
from ..home._door import MEMORY_FILES, decode
from ..home._identity import ReviewMode, Target, memory_limit
from ..home._identity_file import find_identity, resolve_limits
from ..home._load import home_scanner
from ..home._lock import WriteCancelled
from ..scanner._scanner import DEFAULT, Classifier, Scanner
from ..store._config import home_store
from ..store._protocol import Outcome
from ..store._records import Pending
from ..tools import Tool, call_source, define_tool, home_reader
from ._args import DESCRIPTION, MemoryArgs
from ._document import Block, MemoryDocument, parse_memory
from ._edit import NOTHING, Op, Plan, usage
from ._review import hold, tool_review, write_or_hold
from ._trusted_write import check_trustable, mark_trusted

__all__ = [
    "MEMORY_FILES",
    "Block",
    "MemoryDocument",
    "MemoryStore",
    "Op",
    "Target",
    "memory_tool",
    "parse_memory",
]

#: The last version of each memory file this process read or wrote, as bytes and parsed:
#: the next write to the file starts from it instead of parsing again. Keyed by the bytes,
#: so it is never stale: a file someone else changed is parsed afresh. The files written
#: longest ago are let go, so a process serving many homes stays small.
_parsed: dict[str, tuple[bytes, MemoryDocument]] = {}
_PARSED_MAX = 64


_parsed_lock = threading.Lock()


def _remember(key: str, data: bytes, doc: MemoryDocument) -> None:
    with _parsed_lock:  # writers of several files run in threads at once
        _parsed.pop(key, None)
        _parsed[key] = (data, doc)
        while len(_parsed) > _PARSED_MAX:
            _parsed.pop(next(iter(_parsed)), None)


#: An edit of the file as read under the lock, given it parsed and as bytes (None: no
#: file): the store's `Edit`, with the parse this process keeps of the bytes.
FileEdit = Callable[[MemoryDocument, bytes | None], Outcome]


@dataclass(frozen=True, slots=True)
class MemoryStore:
    """One memory file (MEMORY.md or USER.md) in `dir`, edited safely and durably.

    Each edit takes the file's inter-process lock, re-reads the file from disk,
    applies the change and checks it (match, limit, safety), then replaces the
    file atomically; on any error nothing is written. `scanner` checks new text
    (default: the built-in scanner, nothing switched off; `memory_tool` uses the
    home's). `fsync=False` trades crash durability for speed (tests, benchmarks).

    Raises:
        ArgumentError: (a ValueError) at construction, for an unknown target or a
            limit out of range.
        TypeError: at construction, for a limit that is not an int.
    """

    dir: Path
    target: Target
    _: KW_ONLY
    limit: int
    scanner: Scanner = DEFAULT
    fsync: bool = True
    #: The file's path as a string, made once (every write names it several times).
    _file: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dir", Path(self.dir))
        object.__setattr__(self, "_file", os.path.join(self.dir, MEMORY_FILES.get(self.target, "")))
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
        return usage(doc, self.name, self.limit)

    def add(self, text: str, *, trust: bool = False) -> str:
        """Append `text` as one entry (an exact duplicate writes nothing).

        `trust=True` is for a person overriding a false positive, never for a
        model: the entry is written whatever the scanner says and marked trusted
        (`.toolnexus/`), so the soul shows it; the history records the source
        with ` trusted`. Marking an entry already there writes only the mark.

        Raises:
            MemoryEditError: `invalid`, `rejected` (safety), `full`, `io`.
        """
        if not trust:
            return self._run([Op("add", text)], batch=False)
        source = call_source("python") + " trusted"
        return self._run([Op("add", text, trusted=True)], batch=False, source=source, trust=True)

    def replace(self, text: str, with_: str) -> str:
        """Swap the part `text` of the one matching entry for `with_` (SPEC §3's rule).

        Raises:
            MemoryEditError: `invalid`, `not_found`, `ambiguous`, `rejected`, `full`, `io`.
        """
        return self._run([Op("replace", text, with_)], batch=False)

    def remove(self, text: str) -> str:
        """Delete the one entry that `text` matches (with its identical copies).

        Raises:
            MemoryEditError: `invalid`, `not_found`, `ambiguous`, `io`.
        """
        return self._run([Op("remove", text)], batch=False)

    def apply(self, ops: Sequence[Op], *, cancel: threading.Event | None = None) -> str:
        """Apply a batch: every change in order to one read of the file, all or nothing.

        The limit is checked on the final result only, so a batch can free room
        and use it. `cancel`, once set, stops a call that has not written yet
        (`MemoryEditError` of kind `cancelled`); a write that has begun finishes.

        Raises:
            MemoryEditError: the first refusal, naming its item (`item 3: ...`).
        """
        if any(op.trusted for op in ops):
            raise MemoryEditError(
                "invalid arguments: operations: a trusted entry is written only by "
                f"MemoryStore.add(text, trust=True), which marks it. {NOTHING}",
                kind="invalid",
            )
        return self._run(ops, batch=True, cancel=cancel)

    def hold(self, ops: Sequence[Op], *, batch: bool, source: str, why: str) -> str:
        """Hold a write for a person's review instead of applying it (see `Review`): the
        same checks as a write first (a refused write is refused, not held); the message.

        Raises:
            MemoryEditError: `invalid`, `rejected`, or `io` when it cannot be kept.
        """
        plan = Plan(ops, name=self.name, limit=self.limit, batch=batch, scanner=self.scanner)
        return hold(self.dir, self.target, plan.ops, batch=batch, source=source, why=why)

    # -- internals -----------------------------------------------------------------

    def _run(
        self,
        ops: Sequence[Op],
        *,
        batch: bool,
        cancel: threading.Event | None = None,
        source: str = "python",
        trust: bool = False,
    ) -> str:
        plan = Plan(  # before the lock
            ops, name=self.name, limit=self.limit, batch=batch, scanner=self.scanner
        )

        kept: list[MemoryDocument] = []

        def change(doc: MemoryDocument, data: bytes | None) -> Outcome:
            if trust:
                check_trustable(self.dir, self.target)
            new, message, made = plan.apply(doc)
            kept[:] = [new or doc]
            pending = tuple(
                Pending(m.action, m.before, m.after, "merge" if m.merged else "entry") for m in made
            )
            if new is None:
                return None, message, pending
            raw = new.render().encode("utf-8")
            _remember(self._file, raw, new)
            return raw, message, pending

        def then() -> str:  # under the lock, once the file is in place
            return mark_trusted(
                self.dir, self.target, plan.ops[0].text, kept[-1], self.scanner, fsync=self.fsync
            )

        return self.commit(
            change, source=source, cancel=cancel, then=then if trust else None, trust=trust
        )

    def commit(
        self,
        change: FileEdit,
        *,
        source: str,
        cancel: threading.Event | None = None,
        then: Callable[[], str] | None = None,
        trust: bool = False,
    ) -> str:
        """Run `change` on this file as read under its lock, in the store the home keeps it
        in (chosen from its settings now), and record it with `source`; its message.

        What add / replace / remove, undo and restore share: the same edit, limits
        and messages in any store. `then` runs once the file is in place; `trust`
        refuses a store that keeps no trust marks.

        Raises:
            MemoryEditError: what `change` raises, or `io` when the store refuses the
                write; `cancelled` when `cancel` was set first. Nothing is written.
        """
        try:
            store = home_store(self.dir, find_identity(self.dir))
            if trust and not store.keeps_trust_marks:
                raise StoreError(f"{store.where} keeps no trust marks", kind="unsupported")
            return store.edit(
                self.target,
                lambda data: change(self._parse(data), data),
                source=source,
                limit=self.limit,
                fsync=self.fsync,
                cancel=cancel,
                then=then,
            )
        except WriteCancelled:
            raise _cancelled(self.name) from None
        except (HomeError, StoreError) as exc:
            tail = "" if "may or may not" in str(exc) else f" {NOTHING}"
            back = (
                " The session goes on; try again once it is back."
                if isinstance(exc, StoreError) and exc.kind == "unreachable"
                else ""
            )
            raise MemoryEditError(
                f"cannot write {self.name}: {exc}.{back}{tail}", kind="io"
            ) from None

    def _parse(self, data: bytes | None) -> MemoryDocument:
        """The file's bytes as a document: the last one this process saw when they match."""
        if not data:
            return parse_memory("")
        last = _parsed.get(self._file)
        if last is not None and last[0] == data:
            return last[1]
        try:
            doc = parse_memory(decode(data, self.name))
        except HomeFileError:
            raise MemoryEditError(
                f"cannot edit {self.name}: it is not UTF-8 text; a person must re-save "
                f"it as UTF-8. {NOTHING}",
                kind="invalid",
            ) from None
        _remember(self._file, data, doc)
        return doc


def _cancelled(name: str) -> MemoryEditError:
    return MemoryEditError(
        f"cancelled: the call was given up before anything was written to {name}. {NOTHING}",
        kind="cancelled",
    )


def memory_tool(
    dir: str | Path,
    *,
    limits: Mapping[str, int] | None = None,
    scanner: Scanner | Classifier | None = None,
    review: ReviewMode | None = None,
) -> Tool:
    """Build the `memory` tool: add / replace / remove entries in `dir`'s memory files.

    Args:
        dir: an existing home folder; MEMORY.md and USER.md are created there
            on the first write.
        limits: characters per file, `{"self": ..., "user": ...}` (either key may
            be left out). Defaults: IDENTITY.md's `memory_limits` when `dir` has
            one, else the package defaults.
        scanner: a classifier of your own (or a `Scanner`), run on new text after the built-in
            scanner (`toolnexus.scanner`): what it flags is refused. The
            categories IDENTITY.md's `scanner: {off: [...]}` names are not checked.
        review: which writes wait for a person's review instead of being applied
            (`Review` lists them): `"untrusted"`, those made after untrusted text
            reached the model (the call's `CallContext.untrusted`); `"all"`; `"off"`.
            Default: IDENTITY.md's `memory_review`, else `"untrusted"`.

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
    resolved = resolve_limits(home, limits)
    checker = home_scanner(home, scanner)
    mode = tool_review(home, review)
    stores = {
        t: MemoryStore(home, t, limit=resolved.for_target(t), scanner=checker) for t in MEMORY_FILES
    }

    async def handle(args: MemoryArgs) -> str:
        store = stores[args.target]
        batch = args.operations is not None
        return await write_or_hold(
            mode,
            lambda source, cancel: store._run(
                args.ops(), batch=batch, cancel=cancel, source=source
            ),
            lambda source, why: store.hold(args.ops(), batch=batch, source=source, why=why),
        )

    tool = define_tool(
        name="memory", description=DESCRIPTION, input_model=MemoryArgs, handler=handle
    )
    return home_reader(tool)  # its results are the home's own files
