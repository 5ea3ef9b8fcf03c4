"""`toolnexus skills`: a home's skills, and the history of those the persona writes.

`list` shows each skill; `log`, `undo` and `restore` read and rewind the
changes `skill_manage` (or an approval) made, through `memory.SkillStore`.
Writes held for review are listed and decided with the memory ones:
`toolnexus memory HOME pending | approve ID… | reject ID…`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from .._text import one_line, terminal_safe

__all__ = ["ACTIONS", "HELP", "arguments", "example", "skills", "verb"]

HELP = (
    "List a home's skills; read, undo or restore the changes the persona made to them "
    "(held ones are reviewed with `memory HOME pending`)."
)
ACTIONS = ("list", "log", "undo", "restore")


class _Usage(Exception):
    pass


def example(prog: str) -> str:
    return f"{prog} skills ada log release-checklist\n  {prog} skills ada undo 4"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument("action", choices=ACTIONS, metavar="ACTION", help=", ".join(ACTIONS))
    p.add_argument(
        "what",
        nargs="?",
        help="log: a skill's name (default: every skill); undo: a change's ID (default: "
        "the newest); restore: a change's ID",
    )
    p.add_argument("--json", action="store_true", help="list, log: one JSON object per line")
    p.add_argument("--limit", type=int, metavar="N", help="log: the newest N changes only")


def verb(
    prog: str, home_dir: Callable[[str], Path]
) -> tuple[
    Callable[[argparse.Namespace], int], str, str, Callable[[argparse.ArgumentParser], None]
]:
    """The verb's entry in the command line's table: handler, help, example, arguments."""
    return (lambda args: skills(args, home_dir(args.dir), prog), HELP, example(prog), arguments)


def check_args(args: argparse.Namespace) -> None:
    """Refuse what argparse cannot express, naming the option (a usage error: exit 2)."""
    from ._memory import UsageError

    action = args.action
    if args.json and action not in ("list", "log"):
        raise UsageError(f"--json is not an option of skills {action}")
    if args.limit is not None and action != "log":
        raise UsageError(f"--limit is not an option of skills {action}")
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit must be 0 or more, not {args.limit}")
    if action == "list" and args.what is not None:
        raise UsageError(f"skills list takes no argument ({args.what!r})")
    if action == "restore" and args.what is None:
        raise UsageError("skills restore needs the ID of a change (see skills log)")
    if action in ("undo", "restore") and args.what is not None:
        try:
            args.what = int(args.what)
        except ValueError:
            raise UsageError(
                f"skills {action}: {args.what!r} is not the ID of a change (a number from "
                "skills log)"
            ) from None


def skills(args: argparse.Namespace, home: Path, prog: str) -> int:
    """Run one skills action; what it did on stdout."""
    from ..memory._skill_store import SkillStore
    from ..tools import CallContext, calling

    check_args(args)
    store = SkillStore(home)
    with calling(CallContext("cli")):
        if args.action == "list":
            return _list(home, args)
        if args.action == "log":
            changes = store.log(args.what, limit=args.limit)
            if args.json:
                for change in changes:
                    print(json.dumps(change.to_dict(), ensure_ascii=False))
            else:
                print("\n".join(_shown(c) for c in changes) or "(no recorded skill changes)")
            return 0
        if args.action == "undo":
            print(terminal_safe(store.undo(args.what)))
        else:
            print(terminal_safe(store.restore(args.what)))
    return 0


def _list(home: Path, args: argparse.Namespace) -> int:
    from ..home._load import scan_skills

    scan = scan_skills(home)
    for skill in scan.skills:
        if args.json:
            print(
                json.dumps(
                    {"name": skill.name, "description": skill.description, "path": str(skill.path)},
                    ensure_ascii=False,
                )
            )
        else:
            print(f"{skill.name}: {one_line(skill.description)}")
    if not scan.skills and not args.json:
        print("(no skills)")
    for problem in scan.problems:
        print(f"problem: {terminal_safe(problem)}")
    return 1 if scan.problems else 0


def _shown(change: object) -> str:
    from ..memory._skill_store import SkillChange

    assert isinstance(change, SkillChange)
    files = ", ".join(change.paths)
    return (
        f"{change.id}  {change.time}  {one_line(change.skill)}  {change.action}  "
        f"{one_line(files)}  {one_line(change.source)}"
    )
