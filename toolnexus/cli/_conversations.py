"""`toolnexus chat`, `sessions` and `recall`: talk to a persona, and read what it has lived.

`chat` saves the conversation as it goes (unless `--no-save` or IDENTITY.md
`sessions: off`) and can continue one (`--continue`, `--resume ID`);
`sessions` lists, shows, exports, imports and removes saved conversations;
`recall` searches them and the memory history as the persona's tool does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._text import one_line, terminal_safe
from ._memory import UsageError

__all__ = ["SESSION_ACTIONS", "Arguments", "check_args", "recall", "sessions", "verbs"]

#: Every action of the sessions verb.
SESSION_ACTIONS = ("list", "show", "export", "import", "rm")
#: Hits `toolnexus recall` prints unless told otherwise.
CLI_RECALL_LIMIT = 10

#: Adds one verb's arguments to its parser.
Arguments = Callable[[argparse.ArgumentParser], None]


def verbs(prog: str) -> dict[str, tuple[str, str, Arguments]]:
    """The chat, sessions and recall verbs: each one's help, example and arguments."""
    return {
        "chat": (
            "Talk to a persona through a model (OpenAI-compatible or Anthropic); the "
            "conversation is saved.",
            f"OPENAI_API_KEY=... {prog} chat ada --model gpt-4o-mini\n  "
            f"ANTHROPIC_API_KEY=... {prog} chat ada --model claude-sonnet-4-5\n  "
            f"{prog} chat ada --continue",
            _chat_arguments,
        ),
        "sessions": (
            "List, show, export, import or remove a home's saved conversations.",
            f"{prog} sessions ada list --limit 5\n  {prog} sessions ada export 3f2a > talk.jsonl"
            f"\n  {prog} sessions ada import talk.jsonl",
            _sessions_arguments,
        ),
        "recall": (
            "Search a home's saved conversations and memory history.",
            f'{prog} recall ada "project codename"\n  {prog} recall ada deploy* --json',
            _recall_arguments,
        ),
    }


def _chat_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument("--model", help="model name (default: IDENTITY.md `model:` or TOOLNEXUS_MODEL)")
    p.add_argument(
        "--provider",
        choices=("openai", "anthropic"),
        help="the API to talk to (default: anthropic for a claude-* model or when only "
        "ANTHROPIC_API_KEY is set, else openai)",
    )
    p.add_argument(
        "--base-url",
        help="the API's root URL (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the "
        "provider's own)",
    )
    p.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the conversation most recently active",
    )
    p.add_argument("--resume", metavar="ID", help="continue the saved conversation ID")
    p.add_argument("--no-save", action="store_true", help="do not save this conversation")


def _sessions_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument(
        "action", choices=SESSION_ACTIONS, metavar="ACTION", help=", ".join(SESSION_ACTIONS)
    )
    p.add_argument(
        "args",
        nargs="*",
        metavar="ID|FILE",
        help="show/export/rm: a session's ID (a unique prefix will do); import: JSONL "
        "files, one conversation each (one OpenAI chat-format message per line)",
    )
    p.add_argument("--json", action="store_true", help="list: one JSON object per line")
    p.add_argument("--limit", type=int, metavar="N", help="list: the newest N sessions only")


def _recall_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument(
        "query", nargs="+", help="the words to look for (a word ending in * is a prefix)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per hit, per line")
    p.add_argument(
        "--limit",
        type=int,
        metavar="N",
        default=CLI_RECALL_LIMIT,
        help=f"at most N hits (default {CLI_RECALL_LIMIT})",
    )


def check_args(args: argparse.Namespace) -> None:
    """Refuse combinations argparse cannot express, as usage errors naming the option."""
    if args.verb == "chat":
        if args.continue_ and args.resume is not None:
            raise UsageError("--continue and --resume ID cannot go together: choose one")
        return
    if args.verb == "recall":
        if not 1 <= args.limit <= 50:
            raise UsageError(f"--limit must be between 1 and 50, not {args.limit}")
        return
    action, rest = args.action, args.args
    if action != "list":
        for option, given in (("--json", args.json), ("--limit", args.limit is not None)):
            if given:
                raise UsageError(f"{option} is not an option of sessions {action}")
    if action == "list" and rest:
        raise UsageError(f"sessions list takes no arguments ({rest[0]!r})")
    if action in ("show", "export", "rm") and len(rest) != 1:
        raise UsageError(f"sessions {action} needs exactly one session ID (see sessions list)")
    if action == "import" and not rest:
        raise UsageError("sessions import needs at least one FILE")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be 1 or more, not {args.limit}")


# -- sessions ------------------------------------------------------------------------------


def sessions(args: argparse.Namespace, home: Path, prog: str) -> int:
    """Run one sessions action; 0 when done (a refusal raises, exit 1)."""
    import json  # like every import a verb needs, here: the other verbs start without it

    from ..conversations._saved import Conversations

    conversations = Conversations(home)
    action = args.action
    if action == "list":
        found = conversations.list(limit=args.limit)
        if not found and not args.json:
            print(f"no saved conversations in {home}", file=sys.stderr)
        for s in found:
            if args.json:
                print(json.dumps(s.to_json(), ensure_ascii=False))
            else:
                count = f"{s.messages} message{'' if s.messages == 1 else 's'}"
                title = one_line(s.title) if s.title else "(untitled)"
                print(f"{s.id}  {_when(s.started)}  {count:>13}  {title}")
        return 0
    if action == "import":
        return _import(conversations, args.args)
    [id] = args.args
    if action == "rm":
        removed, n = conversations.remove(id)
        print(f"removed conversation {removed} ({n} message{'' if n == 1 else 's'})")
        return 0
    if action == "export":
        for message in conversations.export(id):
            sys.stdout.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
        return 0
    return _show(conversations, id)


def _when(time: str) -> str:
    return time[:19].replace("T", " ")


def _import(conversations: Any, files: list[str]) -> int:
    # Every file is checked before any is saved: one bad file means nothing is imported.
    done = conversations.import_files(files)
    for file, (id, new) in zip(files, done, strict=True):
        if new:
            count = conversations.get(id).messages
            print(f"imported {file} as conversation {id} ({count} messages)")
        else:
            print(f"{file}: already imported as conversation {id}; nothing to do")
    return 0


def _show(conversations: Any, id: str) -> int:
    saved = conversations.get(id)
    print(f"conversation {saved.id}: {one_line(saved.title) if saved.title else '(untitled)'}")
    facts = [f"started {_when(saved.started)}", f"last {_when(saved.ended)}"]
    if saved.model:
        facts.append(f"model {one_line(saved.model)}")
    facts.append(f"{saved.messages} messages" + (" (imported)" if saved.origin == "import" else ""))
    print(" · ".join(facts))
    names: dict[str, str] = {}
    for message in conversations.export(saved.id):
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        # Everything here came from a model, a tool or an imported file: shown escaped.
        text = terminal_safe(str(content or ""))
        role = one_line(str(role))
        if role == "tool":
            name = names.get(str(message.get("tool_call_id")), "tool")
            print(f"\n[{name}] {text}")
            continue
        if text:
            print(f"\n{role}> {text}")
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            name = one_line(str(function.get("name")))
            names[str(call.get("id"))] = name
            arguments = one_line(str(function.get("arguments") or "{}"))
            print(f"\n{role}> calls {name} {arguments}")
    return 0


# -- recall --------------------------------------------------------------------------------


def recall(args: argparse.Namespace, home: Path, prog: str) -> int:
    """Print the best hits for the query (text, or one JSON object per line)."""
    import json  # like every import a verb needs, here: the other verbs start without it

    from ..conversations._recall import format_hits
    from ..conversations._saved import Conversations

    query = " ".join(args.query)
    hits, notes = Conversations(home).recall_noted(query, limit=args.limit)
    for note in notes:  # the hits still come: one line on stderr says what is missing
        print(f"{prog} recall: {note}", file=sys.stderr)
    if args.json:
        for hit in hits:
            print(json.dumps(hit.to_json(), ensure_ascii=False))
        if not hits:
            print(f"{prog} recall: nothing found for {query!r}", file=sys.stderr)
        return 0
    print(format_hits(query, hits))
    return 0
