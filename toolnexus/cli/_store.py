"""`toolnexus store`: a home's database store: create or upgrade its schema, push, pull."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["ACTIONS", "HELP", "arguments", "example", "store", "verb"]

HELP = "Move a home's memory, history and conversations to or from its PostgreSQL store."
ACTIONS = ("migrate", "push", "pull")


def example(prog: str) -> str:
    return (
        f"TOOLNEXUS_STORE=postgresql://app@db/personas {prog} store ada migrate\n  "
        f"{prog} store ada push\n  "
        f"{prog} store ada pull --force"
    )


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument(
        "action",
        choices=ACTIONS,
        metavar="ACTION",
        help="migrate (create or upgrade the schema; idempotent), push (folder to "
        "database) or pull (database to folder)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="push/pull: replace what the destination holds even when it differs",
    )
    p.add_argument(
        "--claim",
        action="store_true",
        help="migrate: make this IDENTITY.md the owner of the persona's key in the store",
    )


def verb(
    prog: str, home_dir: Callable[[str], Path]
) -> tuple[
    Callable[[argparse.Namespace], int], str, str, Callable[[argparse.ArgumentParser], None]
]:
    """The verb's entry in the command line's table: handler, help, example, arguments."""
    return (lambda args: store(args, home_dir(args.dir), prog), HELP, example(prog), arguments)


def store(args: argparse.Namespace, home: Path, prog: str) -> int:
    """Run one store action; print what it did on stdout."""
    from ..store._config import database_store
    from ..store._copy import copy
    from ..store.folder._store import FolderStore

    database = database_store(home)
    if args.action == "migrate":
        ran = database.migrate(claim=args.claim)
        done = f"{ran} migration(s) applied" if ran else "the schema is up to date"
        print(f"{database.where}: {done}; the key belongs to this IDENTITY.md")
        return 0
    folder = FolderStore(home)
    source, destination = (folder, database) if args.action == "push" else (database, folder)
    snapshot = copy(source, destination, force=args.force)
    print(
        f"{args.action}: {destination.where} now holds exactly what {source.where} holds: "
        f"{len(snapshot.memory)} memory file(s), {len(snapshot.changes)} history record(s), "
        f"{len(snapshot.sessions)} conversation(s) with {len(snapshot.messages)} message(s)",
        file=sys.stdout,
    )
    if args.action == "push":
        _left_behind(home)
    return 0


def _left_behind(home: Path) -> None:
    """Say so when the folder holds trust marks: the database keeps none, so the scanner's
    verdict stands for those entries there."""
    from ..home._door import STATE_DIR
    from ..memory._trust import read_trust

    marks = sum(len(read_trust(home, target)[1]) for target in ("self", "user"))
    if marks:
        print(
            f"note: {marks} trust mark(s) stay in {STATE_DIR}/: a database store keeps "
            "none, so the scanner judges those entries there like any other"
        )
