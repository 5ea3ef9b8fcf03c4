"""The memory tool's edits as pure functions of a parsed file: match, restate, batch, room.

`Plan` checks one change or a batch of them before the lock is taken, then
applies them to a `MemoryDocument` read under the lock and returns the
document to write with the message for the model, or raises
`MemoryEditError` and nothing is written. No file is touched here: the
store (`memory.MemoryStore`) reads, locks and writes; this module decides.

A batch is applied in order to one read of the file, each change to the
result of the one before, and the limit is checked once, on the final result:
a batch can free room and use it in one call. Any refused change refuses the
batch, named by its 1-based position (`item 3`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..errors import MemoryEditError
from ..scanner._scanner import DEFAULT, Scanner
from ._document import MemoryDocument, format_entry, nfc, normalize_text, prose
from ._match import NOTHING, clip, match, quote, restate, shown
from ._splice import append_entry, drop_empty, remove_entries, replace_entries
from ._withhold import around

__all__ = [
    "LOADS",
    "NOTHING",
    "NO_CHANGE",
    "Made",
    "Op",
    "Plan",
    "check_text",
    "clip",
    "quote",
    "restate",
    "usage",
    "with_problem",
]

LOADS = "Saved now, loads next session (this session's system prompt does not change)."

Action = Literal["add", "replace", "remove"]


@dataclass(frozen=True, slots=True)
class Op:
    """One change: `add` saves `text`; `replace` swaps the part `text` of an entry for `with_`;
    `remove` deletes the entry `text` matches. `trusted`: a person vouched for an add's
    text, so the scanner does not refuse it (`toolnexus memory add --trust`)."""

    action: Action
    text: str
    with_: str | None = None
    trusted: bool = False


@dataclass(frozen=True, slots=True)
class Made:
    """One change as it was made, for the history: the entry before and after (None: none).

    `merged` is set for a replace whose new text was already another entry: the
    two became one note."""

    action: Action
    before: str | None
    after: str | None
    merged: bool = False


def _count(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def usage(doc: MemoryDocument, name: str, limit: int) -> str:
    """How full `doc` is, for a model deciding whether to consolidate."""
    return f"{name}: {_count(len(doc.entries))}, {doc.chars}/{limit} characters used."


def check_text(text: str) -> str:
    """Reject blank `text`; return it unchanged (the tool's schema and the store share it)."""
    if not text.strip():
        raise ValueError(
            "must not be empty or only whitespace: for add, the note to save; "
            "for replace/remove, part of the entry to change"
        )
    return text


#: Why a batch with no change is refused (the tool's schema says the same).
NO_CHANGE = "list at least one change"


def with_problem(action: str, with_: str | None) -> str | None:
    """What is wrong with `with` for `action` (None: nothing); shared by the tool's schema."""
    if action == "replace" and with_ is None:
        return 'required when action is "replace" (the new text)'
    if action != "replace" and with_ is not None:
        return f'only used by action "replace"; leave it out for "{action}"'
    return None


def _invalid(field: str, message: str) -> MemoryEditError:
    return MemoryEditError(f"invalid arguments: {field}: {message}", kind="invalid")


@dataclass(frozen=True, slots=True)
class _Step:
    """What one change did: the document after it, the entry it was about, how many copies."""

    doc: MemoryDocument
    action: Action
    #: The entry added, or the entry as stored that was replaced or removed.
    entry: str
    #: For replace: the entry as it now reads.
    now: str = ""
    copies: int = 1
    changed: bool = True
    #: For replace: set when the new text is an entry already there (the two are one note now).
    merged: str = ""
    #: The scanner that decides what a result may quote (`shown`).
    scanner: Scanner = DEFAULT

    def made(self) -> Made:
        """The change for the history."""
        if self.action == "add":
            return Made("add", None, self.entry)
        if self.action == "replace":
            return Made("replace", self.entry, self.now, bool(self.merged))
        return Made("remove", self.entry, None)

    def said(self) -> str:
        """This change as a batch's result lists it."""
        copies = f"{self.copies} identical entries " if self.copies > 1 else ""
        if self.action == "add":
            verb = "added" if self.changed else "already there:"
            return f"{verb} {quote(self.entry)}"
        if self.action == "replace":
            was = shown(self.entry, 80, self.scanner)
            return f"replaced {copies}{was}, now {quote(self.now)}{self.merged}"
        return f"removed {copies}{shown(self.entry, scanner=self.scanner)}"

    def said_alone(self, name: str) -> str:
        """This change as the result of a call that made only it."""
        copies = f" {self.copies} identical entries" if self.copies > 1 else ""
        if self.action == "add":
            return f"added to {name}."
        if self.action == "replace":
            return (
                f"replaced{copies} in {name}; the entry now reads {quote(self.now)}{self.merged}."
            )
        return f"removed{copies} from {name}: {shown(self.entry, scanner=self.scanner)}."


class _Batch:
    """Apply changes one after another to one file's document; raise on the first refusal."""

    def __init__(self, name: str, limit: int, many: bool, scanner: Scanner) -> None:
        self.name = name
        self.limit = limit
        self.many = many
        self.scanner = scanner

    def fail(self, item: int, exc: MemoryEditError) -> MemoryEditError:
        """Name the item of a batch that was refused; a single change keeps its message."""
        if not self.many:
            return exc
        message = exc.message
        if not message.endswith(NOTHING):
            message += f". {NOTHING}" if message[-1:] not in ".)" else f" {NOTHING}"
        return MemoryEditError(f"item {item}: {message}", kind=exc.kind)

    def check(self, op: Op) -> Op:
        """What can be checked without the file: text given, a new entry's size and safety.

        Runs before the lock is taken, so a call that could never succeed waits for
        nobody and creates nothing. Returns the change with an add's text as its entry.
        """
        if op.action not in ("add", "replace", "remove"):
            raise _invalid("action", f"{op.action!r} is not one of add, replace, remove")
        if not isinstance(op.text, str):
            raise _invalid("text", f"must be a string, not {type(op.text).__name__}")
        if op.with_ is not None and not isinstance(op.with_, str):
            raise _invalid("with", f"must be a string, not {type(op.with_).__name__}")
        problem = with_problem(op.action, op.with_)
        if problem is not None:
            raise _invalid("with", problem)
        if op.action == "add":
            entry = _entry_text(_query(op.text), field="text")
            self.fits(entry)
            if not op.trusted:
                _scan(self.scanner, entry, field="text")
            return Op("add", entry, trusted=op.trusted)
        _query(op.text)
        return op

    def step(self, doc: MemoryDocument, op: Op) -> _Step:
        if op.action == "add":
            return self.add(doc, op.text, trusted=op.trusted)
        if op.action == "replace":
            assert op.with_ is not None  # checked by `check`
            return self.replace(doc, op.text, op.with_)
        return self.remove(doc, op.text)

    def add(self, doc: MemoryDocument, entry: str, *, trusted: bool = False) -> _Step:
        if doc.note(entry) is not None:
            return _Step(doc, "add", entry, changed=False, scanner=self.scanner)
        new = append_entry(doc, entry)
        _verify(doc, new, (*doc.entries, entry))
        if not trusted:
            self.neighbours(entry, "text", new)
        return _Step(new, "add", entry, scanner=self.scanner)

    def replace(self, doc: MemoryDocument, text: str, with_: str) -> _Step:
        query = _query(text)
        old, copies = match(doc, text, query, self.scanner)
        changed = restate(old, query, normalize_text(with_))
        new_text = _entry_text(changed, field="with", empty="use action remove")
        if len(new_text) > len(old):  # shrinking an over-full file is always allowed
            self.fits(new_text)
        _scan(self.scanner, new_text, field="with")
        entries, at = doc.entries, doc.entries.index(old)
        if nfc(new_text) != nfc(old) and doc.note(new_text) is not None:
            # The entry now says what another already says: one note, the other copy stays.
            new = remove_entries(doc, old)
            _verify(doc, new, entries[:at] + entries[at + 1 :])
            merged = " (the same as an entry already there, so they are one note now)"
            return _Step(
                new,
                "replace",
                old,
                now=new_text,
                copies=copies,
                merged=merged,
                scanner=self.scanner,
            )
        new = replace_entries(doc, old, new_text)
        _verify(doc, new, (*entries[:at], new_text, *entries[at + 1 :]))
        self.neighbours(new_text, "with", new)
        return _Step(new, "replace", old, now=new_text, copies=copies, scanner=self.scanner)

    def remove(self, doc: MemoryDocument, text: str) -> _Step:
        query = _query(text)
        old, copies = match(doc, text, query, self.scanner)
        new = remove_entries(doc, old)
        at = doc.entries.index(old)
        _verify(doc, new, doc.entries[:at] + doc.entries[at + 1 :])
        return _Step(new, "remove", old, copies=copies, scanner=self.scanner)

    def neighbours(self, entry: str, field: str, doc: MemoryDocument) -> None:
        """Refuse `entry` when it reads as unsafe with a neighbouring unit of `doc` (the
        file as it would be written): a split instruction."""
        before, after = around(doc, entry)
        found = self.scanner.beside(entry, before=before, after=after)
        if found is not None:
            where, other, reasons = found
            raise MemoryEditError(
                f"rejected: {field} breaks a safety rule when read with the entry {where} it "
                f"({quote(other, 80)}): {'; '.join(reasons)}. Memory loads into every future "
                "system prompt, where neighbouring notes are read together: rephrase it as a "
                f"plain fact and try again. {NOTHING}",
                kind="rejected",
            )

    def fits(self, entry: str) -> None:
        """Refuse a note that could never fit, whatever else the file held."""
        size = len(format_entry(entry))
        if size > self.limit:
            raise MemoryEditError(
                f"full: this note is {size} characters; the limit is {self.limit} "
                f"(all of {self.name}). Save a shorter note. {NOTHING}",
                kind="full",
            )

    def room(self, before: MemoryDocument, after: MemoryDocument) -> None:
        """Refuse growth past the limit, showing what is there; shrinking is always allowed."""
        if after.chars <= self.limit or after.chars <= before.chars:
            return
        listed = "\n".join(
            f"{i}. {shown(e, 10**9, self.scanner)}" for i, e in enumerate(before.entries, 1)
        )
        raise MemoryEditError(
            f"full: {self.name} would hold {after.chars} of its {self.limit} characters "
            f"(now {_count(len(before.entries))}, {before.chars} characters). "
            f"Its entries now:\n{listed or '(none: the file holds only prose)'}\n"
            'Try again with one call that frees room and adds: "operations", a list of '
            'changes applied together, e.g. [{"action": "remove", "text": "<a stale entry>"}, '
            '{"action": "replace", "text": "<an entry>", "with": "<shorter>"}, '
            '{"action": "add", "text": "<the new note>"}]; the limit is checked on the '
            f"result. {NOTHING}",
            kind="full",
        )


class Plan:
    """Changes to one file, checked as far as they can be without reading it.

    Build it before taking the lock (`MemoryEditError` for a call that can never
    succeed), then `apply` it to the document read under the lock.
    """

    def __init__(
        self,
        ops: Sequence[Op],
        *,
        name: str,
        limit: int,
        batch: bool,
        scanner: Scanner = DEFAULT,
    ) -> None:
        if batch and not ops:
            raise _invalid("operations", NO_CHANGE)
        self._edit = _Batch(name, limit, many=batch, scanner=scanner)
        self.batch = batch
        checked: list[Op] = []
        for item, op in enumerate(ops, 1):
            try:
                checked.append(self._edit.check(op))
            except MemoryEditError as exc:
                raise self._edit.fail(item, exc) from None
        self.ops = tuple(checked)

    def apply(self, doc: MemoryDocument) -> tuple[MemoryDocument | None, str, tuple[Made, ...]]:
        """Apply the changes to `doc` in order, all or nothing; return the document to
        write (None: nothing changed), the result message and the changes made.

        Raises:
            MemoryEditError: the first refusal (in a batch, naming the item), or `full`
                when the final result overflows.
        """
        edit, name, limit = self._edit, self._edit.name, self._edit.limit
        steps: list[_Step] = []
        now = doc
        for item, op in enumerate(self.ops, 1):
            try:
                step = edit.step(now, op)
            except MemoryEditError as exc:
                raise edit.fail(item, exc) from None
            steps.append(step)
            now = step.doc
        if not any(s.changed for s in steps):
            what = "the entry is" if len(steps) == 1 else "every note of the batch is"
            return (
                None,
                (
                    f"already in {name}, nothing written: {what} saved and loads next session. "
                    f"{usage(doc, name, limit)}"
                ),
                (),
            )
        edit.room(doc, now)
        empties = now.empties
        now = drop_empty(now)
        if now.render() == doc.render():
            if not self.batch:
                return (
                    None,
                    (
                        f"already in {name}, nothing written: the entry already reads "
                        f"{quote(steps[0].now)}. {usage(doc, name, limit)}"
                    ),
                    (),
                )
            listed = "; ".join(f"{i}. {s.said()}" for i, s in enumerate(steps, 1))
            return (
                None,
                (
                    f"nothing written: the changes cancel out and leave {name} as it was: "
                    f"{listed}. {usage(doc, name, limit)}"
                ),
                (),
            )
        if self.batch:
            listed = "; ".join(f"{i}. {s.said()}" for i, s in enumerate(steps, 1))
            count = sum(s.changed for s in steps)
            done = f"applied {count} change{'s' if count > 1 else ''} to {name}: {listed}."
        else:
            done = steps[0].said_alone(name)
        if empties:
            done += (
                f" Also dropped {_count(empties).replace('entr', 'empty entr')} "
                '("- " alone on a line: no note).'
            )
        made = tuple(s.made() for s in steps if s.changed)
        return now, f"{done} {LOADS} {usage(now, name, limit)}", made


# -- the parts of a change -------------------------------------------------------------


def _query(text: str) -> str:
    try:
        check_text(text)
    except ValueError as exc:
        raise _invalid("text", str(exc)) from None
    return normalize_text(text)


def _entry_text(text: str, *, field: str, empty: str = "") -> str:
    """An entry's text: LF newlines, no outer blanks, not empty."""
    entry = normalize_text(text).strip()
    if not entry:
        hint = f"; {empty}" if empty else ""
        raise _invalid(field, f"the entry would be empty{hint}")
    return entry


def _scan(scanner: Scanner, entry: str, *, field: str) -> None:
    """Refuse text that is unsafe in a system prompt (see `scanner`)."""
    reasons = tuple(str(f) for f in scanner.vet(entry))
    if reasons:
        raise MemoryEditError(
            f"rejected: {field} breaks a safety rule: {'; '.join(reasons)}. Memory loads "
            "into every future system prompt, so it must be plain data: rephrase it as a "
            f"plain fact without that and try again. {NOTHING}",
            kind="rejected",
        )


def _verify(before: MemoryDocument, after: MemoryDocument, expected: tuple[str, ...]) -> None:
    """Refuse to write a document that does not parse back to what the edit intended."""
    if after.entries != expected or prose(after).rstrip("\n") != prose(before).rstrip("\n"):
        raise MemoryEditError(
            "internal error: the edit would not read back as intended; nothing written "
            "(please report this bug)",
            kind="internal",
        )
