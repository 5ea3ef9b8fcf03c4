"""`toolnexus memory HOME ACTION`: edit the memory files and read or rewind their history.

add / replace / remove run through the very tool a model uses (same rules,
same messages); log / undo / restore / compact / forget through
`memory.History`; pending / approve / reject through `memory.Review`. Every
change made here is recorded with source `cli`, and none is ever held for review.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._text import one_line, terminal_safe

if TYPE_CHECKING:
    from ..home._identity import Target
    from ..memory._held import HeldWrite
    from ..memory._history import Change

__all__ = ["ACTIONS", "UsageError", "check_args", "held_text", "run"]

#: Every action of the memory verb.
ACTIONS = (
    "show",
    "add",
    "replace",
    "remove",
    "log",
    "undo",
    "restore",
    "compact",
    "forget",
    "pending",
    "approve",
    "reject",
)
_EDITS = ("add", "replace", "remove")
_NEEDS_ID = ("restore", "forget")
_REVIEW = ("approve", "reject")


class UsageError(Exception):
    """The command line itself is malformed: printed as one line, exit code 2 (every verb)."""


def check_args(args: argparse.Namespace) -> None:
    """Refuse combinations argparse cannot express, as usage errors naming the option."""
    action = args.action
    only = {
        "--with": (args.with_ is not None, ("replace",)),
        "--json": (args.json, ("log", "pending")),
        "--limit": (args.limit is not None, ("log",)),
        "--grep": (args.grep is not None, ("log",)),
        "--keep-days": (args.keep_days is not None, ("compact",)),
        "--user": (args.user, ("show", *_EDITS, "log", "undo")),
        "--trust": (args.trust, ("add",)),
        "--file": (args.file is not None, _EDITS),
    }
    for option, (given, actions) in only.items():
        if given and action not in actions:
            raise UsageError(f"{option} is not an option of memory {action}")
    more = getattr(args, "more", None) or []
    if more and action not in _REVIEW:
        raise UsageError(f"memory {action} takes one TEXT, not {len(more) + 1}: quote it")
    if action in _REVIEW:
        if args.text is None:
            raise UsageError(f"memory {action} needs the ID of a held write (see memory pending)")
        ids = []
        for value in [args.text, *more]:
            try:
                ids.append(int(value))
            except ValueError:
                raise UsageError(
                    f"memory {action}: {value!r} is not the ID of a held write (a number from "
                    "memory pending)"
                ) from None
        args.ids = list(dict.fromkeys(ids))
        return
    if args.file is not None:
        if args.text is not None:
            raise UsageError(f"memory {action}: give TEXT or --file, not both")
        args.text = _read_text(args.file)
    elif action in _EDITS and args.text == "-":
        args.text = _read_text("-")
    if action in ("show", "log", "compact", "pending") and args.text is not None:
        raise UsageError(f"memory {action} takes no TEXT ({args.text!r})")
    if action in _EDITS and args.text is None:
        raise UsageError(f"memory {action} needs TEXT")
    if action == "replace" and args.with_ is None:
        raise UsageError("memory replace needs --with TEXT")
    if action in _NEEDS_ID and args.text is None:
        raise UsageError(f"memory {action} needs the ID of a change (see memory log)")
    if action in ("undo", *_NEEDS_ID) and args.text is not None:
        try:
            args.text = int(args.text)
        except ValueError:
            raise UsageError(
                f"memory {action}: {args.text!r} is not the ID of a change (a number from "
                "memory log)"
            ) from None
    if action == "undo" and args.text is not None and args.user:
        raise UsageError("memory undo ID undoes that change in its own file: drop --user")
    if action == "compact" and args.keep_days is None:
        raise UsageError("memory compact needs --keep-days N")
    for option, value in (("--limit", args.limit), ("--keep-days", args.keep_days)):
        if value is not None and value < 0:
            raise UsageError(f"{option} must be 0 or more, not {value}")


#: The most a TEXT read from a file or standard input may be (the largest memory file
#: allowed holds 10,000,000 characters).
_TEXT_CAP = 64 * 2**20


def _read_text(source: str) -> str:
    """TEXT from a file, or standard input for `-`: UTF-8, its final line break dropped."""
    shown = "standard input" if source == "-" else f"--file {source}"
    try:
        if source == "-":
            data = sys.stdin.buffer.read(_TEXT_CAP + 1)
        else:
            with open(source, "rb") as file:
                data = file.read(_TEXT_CAP + 1)
    except OSError as exc:
        raise UsageError(f"{shown}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > _TEXT_CAP:
        raise UsageError(f"{shown}: over {_TEXT_CAP:,} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{shown}: not UTF-8 text (byte {exc.start + 1:,})") from None
    return text.removesuffix("\n").removesuffix("\r")


def run(args: argparse.Namespace, home: Path, prog: str) -> int:
    """Run one memory action; 0 when done, 1 when refused (the reason on stderr)."""
    from ..tools import CallContext, calling

    with calling(CallContext("cli")):
        if args.action == "show":
            return _show(home, args)
        if args.action in _EDITS:
            return _edit(home, args, prog)
        if args.action == "pending" or args.action in _REVIEW:
            return _review(home, args, prog)
        return _history(home, args)


def _show(home: Path, args: argparse.Namespace) -> int:
    from ..home._door import MEMORY_FILES, decode
    from ..store._config import configured_store

    # The file's bytes exactly as its store holds them: in a folder through the door
    # every read takes (a FIFO, a link out, a file over its cap: exit 1); text that is
    # not UTF-8 is refused as every reader refuses it.
    target: Target = "user" if args.user else "self"
    data = configured_store(home).read(target) or b""
    decode(data, str(home / MEMORY_FILES[target]))
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def _edit(home: Path, args: argparse.Namespace, prog: str) -> int:
    import asyncio

    from ..memory._tool import memory_tool

    if args.trust:
        return _trusted(home, args, prog)
    call: dict[str, Any] = {
        "action": args.action,
        "target": "user" if args.user else "self",
        "text": args.text,
    }
    if args.action == "replace":
        call["with"] = args.with_
    result = asyncio.run(memory_tool(home).execute(call))
    if result.is_error:
        print(f"{prog} memory: {result.output}", file=sys.stderr)
        return 1
    print(result.output)
    return 0


def _trusted(home: Path, args: argparse.Namespace, prog: str) -> int:
    """`add --trust`: the entry written whatever the scanner says, and marked trusted."""
    from ..errors import MemoryEditError
    from ..home._identity_file import resolve_limits
    from ..home._load import home_scanner
    from ..memory._tool import MemoryStore

    target: Target = "user" if args.user else "self"
    limit = resolve_limits(home).for_target(target)
    store = MemoryStore(home, target, limit=limit, scanner=home_scanner(home))
    try:
        print(store.add(args.text, trust=True))
    except MemoryEditError as exc:
        print(f"{prog} memory: {exc.message}", file=sys.stderr)
        return 1
    return 0


def _history(home: Path, args: argparse.Namespace) -> int:
    from ..memory._history import History

    history = History(home)
    target: Target = "user" if args.user else "self"
    if args.action == "log":
        changes = history.log(target, limit=args.limit, grep=args.grep)
        if args.json:
            for change in changes:
                print(change.to_json())
        else:
            print("\n".join(_shown(c) for c in changes) or "(no recorded changes)")
        return 0
    if args.action == "undo":
        print(history.undo(args.text, target=target))
    elif args.action == "restore":
        print(history.restore(args.text))
    elif args.action == "compact":
        print(history.compact(keep_days=args.keep_days))
    else:
        print(history.forget(args.text))
    return 0


def _review(home: Path, args: argparse.Namespace, prog: str) -> int:
    """pending / approve ID… / reject ID…: the writes held for a person's review.

    Each ID is decided on its own, in order: one refused (not held, or refused by the
    rules now) is reported and the rest still go; exit 1 if any was refused.
    """
    import json

    from ..errors import HistoryError, MemoryEditError
    from ..memory._held import Review

    review = Review(home)
    if args.action == "pending":
        held = review.pending()
        if args.json:
            for write in held:
                print(json.dumps(write.to_dict(), ensure_ascii=False))
        else:
            print("\n".join(held_text(w) for w in held) or "(no writes held for review)")
            if held:
                print("(approve ID... saves a write under the usual rules; reject ID... drops it)")
        return 0
    decide = review.approve if args.action == "approve" else review.reject
    code = 0
    for id in args.ids:
        try:
            print(terminal_safe(decide(id)))
        except (HistoryError, MemoryEditError) as exc:
            print(f"{prog} memory: {args.action} {id}: {terminal_safe(str(exc))}", file=sys.stderr)
            code = 1
    return code


def held_text(write: HeldWrite) -> str:
    """One held write as `memory pending` (and chat's `/pending`) prints it: a header line,
    then every change whole, a replace's new text included, safe for a terminal."""
    from ..home._door import MEMORY_FILES, SKILL_FILE, SKILLS_DIR

    if write.target == "skill":
        op = write.operations[0]
        name = f"{SKILLS_DIR}/{op.name}/{op.path or SKILL_FILE}"
    else:
        name = MEMORY_FILES["user" if write.target == "user" else "self"]
    head = f"{write.id}  {write.time}  {one_line(name)}  {write.action}  {one_line(write.source)}"
    lines: list[str] = []
    for op in write.operations:
        if op.description is not None:
            lines += _labelled("description:", op.description)
        label = {"create": "body:", "write_file": "content:", "remove": "remove the skill"}
        skill = write.target == "skill"
        lines += _labelled(
            label.get(op.action, f"{op.action}:") if skill else f"{op.action}:", op.text
        )
        if op.with_ is not None:
            lines += _labelled("  with:", op.with_)
    return "\n".join([head, *(f"    {terminal_safe(line)}" for line in lines)])


def _labelled(label: str, text: str) -> list[str]:
    """`text` after `label`, its further lines indented under it."""
    first, *rest = text.split("\n")
    return [f"{label} {first}".rstrip(), *(f"  {line}" for line in rest)]


def _shown(change: Change) -> str:
    """One change as `memory log` prints it: a header line, then what it changed."""
    source = one_line(change.source)
    head = f"{change.id}  {change.time}  {change.target}  {change.action}  {source}"
    if change.before is None and change.after is None:
        return head
    lines: list[str] = []
    if change.action in ("outside-edit", "restore") or _is_file(change):
        import difflib

        diff = difflib.unified_diff(
            (change.before or "").splitlines(), (change.after or "").splitlines(), lineterm="", n=0
        )
        lines = [d for d in diff if d[:3] not in ("---", "+++") and not d.startswith("@@")]
    else:
        for mark, text in (("-", change.before), ("+", change.after)):
            if text is not None:
                lines += _labelled(mark, text)
    return "\n".join([head, *(f"    {terminal_safe(line)}" for line in lines)])


def _is_file(change: Change) -> bool:
    """An undo of a whole-file change shows as a diff too (its texts are whole files)."""
    texts = [t for t in (change.before, change.after) if t is not None]
    return change.action == "undo" and any(t.endswith("\n") for t in texts)
