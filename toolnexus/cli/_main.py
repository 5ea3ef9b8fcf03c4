"""The `toolnexus` command line: parse arguments, call the library, print.

Each verb imports only what it needs, and only its own parser is built, so
`toolnexus soul` never loads asyncio, watchfiles, a provider SDK or (for the
default layout) jinja2, and `--help` and `--version` load neither pydantic nor
PyYAML. User mistakes end in one line on stderr and a non-zero exit, never a
traceback.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import ToolnexusError
from . import _conversations as _cli_conversations
from . import _serve as _cli_serve
from . import _skills as _cli_skills
from . import _store as _cli_store
from ._memory import ACTIONS, UsageError, check_args

if TYPE_CHECKING:
    from ..soul import Soul

__all__ = ["main"]

PROG = "toolnexus"
EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class Refused(ToolnexusError):
    """A well-formed command that cannot be carried out (no such home): exit code 1."""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line that points at --help, and a verb's options
    may come anywhere on its line (`memory ada add --user "prefers tea"`), as in git."""

    intermixed = False
    _parsing = False

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if not self.intermixed or self._parsing:
            return super().parse_known_args(args, namespace)
        # After `--` every word is a positional, even one that starts with a dash. The
        # intermixed parse does not keep that rule everywhere, so those words go in as
        # placeholders that cannot look like options, and come back after.
        words = list(sys.argv[1:] if args is None else args)
        held: dict[str, str] = {}
        if "--" in words:
            cut = words.index("--")
            tail = words[cut + 1 :]
            for k, word in enumerate(tail):
                if word.startswith("-"):
                    held[f"\x00{k}\x00"] = word
                    tail[k] = f"\x00{k}\x00"
            words = words[:cut] + tail
        self._parsing = True  # the intermixed parse calls back into this method
        try:
            parsed, extra = self.parse_known_intermixed_args(words, namespace)
        finally:
            self._parsing = False
        for name, value in vars(parsed).items():
            if isinstance(value, str) and value in held:
                setattr(parsed, name, held[value])
        return parsed, [held.get(word, word) for word in extra]


def _home_dir(value: str, *, identity: bool = True) -> Path:
    """The home `value` names; with `identity`, refused unless it holds an IDENTITY.md, so
    a verb run on the wrong folder says so and creates nothing there."""
    path = Path(value)
    if not path.exists():
        raise Refused(f"no such directory: {value}")
    if not path.is_dir():
        raise Refused(f"not a directory: {value}")
    if identity and not (path / "IDENTITY.md").is_file():
        raise Refused(
            f"{value}: not a home (it has no IDENTITY.md); make one with: "
            f"{PROG} init {shlex.quote(value)}"
        )
    return path


def _one_line(exc: BaseException) -> str:
    problems = getattr(exc, "problems", None)
    if problems:
        return "; ".join(str(p) for p in problems)
    return " ".join(str(exc).split("\n"))


# -- init ----------------------------------------------------------------------------------

_IDENTITY = """\
---
{frontmatter}---

You are {name}. Describe here who the persona is, how it speaks, and what it cares
about. This prose opens every system prompt, so keep it stable: durable facts the
persona learns go to MEMORY.md and USER.md through its `memory` tool.
"""

# Empty: the soul gives each file a heading of its own, and the history starts with the
# persona's first note, not with the scaffold.
_MEMORY = ""
_USER = ""

_SKILL = """\
---
name: example-skill
description: Shows how a skill is written. Load it to see the Agent Skills format in use.
---

# Example skill

Skills are instructions the persona loads on demand with the `skill` tool: the
system prompt lists only each skill's name and description.

1. Keep the description specific, so the model knows when to load the skill.
2. Put long material in files beside SKILL.md (for example `references/notes.md`).
"""


def cmd_init(args: argparse.Namespace) -> int:
    """Scaffold a new home that passes `check` at once; never overwrite anything."""
    import yaml

    if not args.dir.strip():
        raise Refused("the home's folder: give it a name (toolnexus init ada)")
    home = Path(args.dir)
    if home.exists() and not home.is_dir():
        raise Refused(f"not a directory: {home}")
    name = args.name or home.resolve().name
    frontmatter = yaml.safe_dump(
        {"name": name, "description": f"{name}, a long-lived persona."},
        sort_keys=False,
        allow_unicode=True,
    )
    files = {
        "IDENTITY.md": _IDENTITY.format(frontmatter=frontmatter, name=name),
        "MEMORY.md": _MEMORY,
        "USER.md": _USER,
        "skills/example-skill/SKILL.md": _SKILL,
    }
    existing = [rel for rel in files if (home / rel).exists()]
    if existing:
        raise Refused(f"refusing to overwrite an existing home: {home / existing[0]} exists")
    for rel, text in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    print(f"created home {home} (persona {name!r}); next: {PROG} soul {shlex.quote(str(home))}")
    return EXIT_OK


# -- soul ----------------------------------------------------------------------------------


def _soul_json(soul: Soul) -> str:
    # by_alias: keys as the home's files spell them (memory_limits.self, not self_).
    return soul.model_dump_json(indent=2, by_alias=True) + "\n"


def cmd_soul(args: argparse.Namespace) -> int:
    """Print the composed system prompt, its JSON form, or re-render on every change."""
    from ..soul import compose_soul

    home = _home_dir(args.dir, identity=False)  # compose names what is missing
    if args.watch:
        return _watch_soul(home, as_json=args.json, strict=not args.tolerant)
    soul = compose_soul(home, strict=not args.tolerant)
    _print_warnings(soul)
    sys.stdout.write(_soul_json(soul) if args.json else soul.text)
    return EXIT_OK


def _print_warnings(soul: Soul) -> None:
    """The soul's warnings on stderr (withheld memory among them): stdout stays the soul."""
    for line in soul.warnings:
        print(f"{PROG} soul: warning: {line}", file=sys.stderr)
    sys.stderr.flush()


def _watch_soul(home: Path, *, as_json: bool, strict: bool) -> int:
    import asyncio
    import difflib

    from ..agents._watch import watch_home
    from ..errors import HomeError

    async def run() -> None:
        last: str | None = None
        warned: tuple[str, ...] | None = None
        broken = False
        # initial=True: the first soul comes from the running watcher, so no write is missed.
        async for soul in watch_home(home, strict=strict, initial=True):
            if isinstance(soul, HomeError):
                print(f"{PROG} soul: {_one_line(soul)}", file=sys.stderr, flush=True)
                warned = None
                broken = True
                continue
            if broken:
                print(
                    f"{PROG} soul: recovered: the home composes again ({soul.digest})",
                    file=sys.stderr,
                    flush=True,
                )
                broken = False
            if soul.warnings != warned:
                _print_warnings(soul)
                warned = soul.warnings
            text = _soul_json(soul) if as_json else soul.text
            if last is None:
                sys.stdout.write(text)
            elif text != last:
                print(f"=== soul changed: {soul.digest}", flush=True)
                sys.stdout.writelines(
                    difflib.unified_diff(
                        last.splitlines(keepends=True),
                        text.splitlines(keepends=True),
                        fromfile="before",
                        tofile="after",
                    )
                )
            sys.stdout.flush()
            last = text

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_OK


# -- memory --------------------------------------------------------------------------------


def cmd_memory(args: argparse.Namespace) -> int:
    """Edit MEMORY.md / USER.md with the tool's rules, or read and rewind their history."""
    from . import _memory as _cli_memory

    return _cli_memory.run(args, _home_dir(args.dir), PROG)


# -- check ---------------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    """Validate homes; list every problem and warning; exit 0 only when clean."""
    from ..agents._agent import from_dir
    from ..agents._home import Home
    from ..errors import AgentError, HomeError
    from ..soul import withheld_warning
    from ..store._config import configured_store

    failed = False
    for value in args.dirs:
        problems: list[str] = []
        warnings: list[str] = []
        try:
            home = Home(_home_dir(value, identity=False))  # compose names what is missing
            # Compose first: it reports every identity and skill problem at once;
            # wiring the agent then checks what only from_dir knows (builtin tools).
            soul = home.compose(strict=True)
            from_dir(home.path)
        except Refused as exc:
            problems.append(str(exc))
        except HomeError as exc:
            problems.extend(exc.problems)
        except AgentError as exc:
            problems.append(str(exc))
        else:
            # A withheld unit is a warning on the soul, and a problem here.
            held = [withheld_warning(w) for w in soul.withheld]
            known = set(held)
            warnings.extend(w for w in soul.warnings if w not in known)
            problems.extend(held)
            # A history that cannot be kept: writes land unrecorded until it is repaired.
            problems.extend(f"history: {p}" for p in configured_store(home.path).health())
        if args.strict:
            problems, warnings = problems + warnings, []
        for line in problems:
            print(f"{PROG} check: error: {line}")
        for line in warnings:
            print(f"{PROG} check: warning: {line}")
        failed = failed or bool(problems)
        status = "FAILED" if problems else "ok"
        print(
            f"{value}: {status} ({_count(len(problems), 'problem')}, "
            f"{_count(len(warnings), 'warning')})"
        )
    return EXIT_FAIL if failed else EXIT_OK


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# -- tools ---------------------------------------------------------------------------------


def cmd_tools(args: argparse.Namespace) -> int:
    """Print the agent's tool specs as JSON in a provider's format."""
    import json

    from ..agents._agent import from_dir

    agent = from_dir(_home_dir(args.dir))
    render: Callable[[Any], dict[str, Any]] = {
        "openai": lambda t: t.to_openai(),
        "anthropic": lambda t: t.to_anthropic(),
        "mcp": lambda t: t.to_mcp(),
    }[args.format]
    print(json.dumps([render(t) for t in agent.uses.tools], indent=2, ensure_ascii=False))
    return EXIT_OK


# -- chat, sessions, recall -----------------------------------------------------------------


def cmd_chat(args: argparse.Namespace) -> int:
    """Talk to the persona through a model, streamed; the conversation is saved."""
    from . import _chat as _cli_chat

    return _cli_chat.chat(args, _home_dir(args.dir), PROG)


def cmd_sessions(args: argparse.Namespace) -> int:
    """List, show, export, import or remove saved conversations."""
    return _cli_conversations.sessions(args, _home_dir(args.dir), PROG)


def cmd_recall(args: argparse.Namespace) -> int:
    """Search saved conversations and the memory history."""
    return _cli_conversations.recall(args, _home_dir(args.dir), PROG)


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the home to MCP clients."""
    return _cli_serve.serve(args, _home_dir(args.dir), PROG)


_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "chat": cmd_chat,
    "sessions": cmd_sessions,
    "recall": cmd_recall,
}


# -- the parser ----------------------------------------------------------------------------


def _verb(
    sub: Any, name: str, handler: Callable[[argparse.Namespace], int], help: str, example: str
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        allow_abbrev=False,  # `--wi` is not `--with`: scripts stay unambiguous
        help=help,
        description=help,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=handler)
    parser.intermixed = True  # type: ignore[attr-defined]
    return parser


def _init_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory to create")
    p.add_argument("--name", help="the persona's name (default: the directory's name)")


def _soul_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument("--json", action="store_true", help="print the whole soul as JSON")
    p.add_argument("--watch", action="store_true", help="re-render on every change (Ctrl-C ends)")
    p.add_argument("--tolerant", action="store_true", help="skip bad skills, with warnings")


def _memory_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument("action", choices=ACTIONS, metavar="ACTION", help=", ".join(ACTIONS))
    p.add_argument(
        "text",
        nargs="?",
        help="add: the entry; replace/remove: the text to match; undo/restore/forget: a "
        "change's ID (from log); approve/reject: held writes' IDs (from pending); - reads "
        "it from standard input",
    )
    p.add_argument("more", nargs="*", help=argparse.SUPPRESS)  # approve / reject: more IDs
    p.add_argument(
        "--file",
        "-F",
        metavar="FILE",
        help="add/replace/remove: read TEXT from FILE (- for standard input), for a text "
        "too long or too awkward to quote",
    )
    p.add_argument("--with", dest="with_", metavar="TEXT", help="the replacement (replace)")
    p.add_argument("--user", action="store_true", help="USER.md instead of MEMORY.md")
    p.add_argument(
        "--trust",
        action="store_true",
        help="add: write the entry even if the scanner flags it, and keep it in the soul "
        "(a person overriding a false positive)",
    )
    p.add_argument("--json", action="store_true", help="log, pending: one JSON object per line")
    p.add_argument("--limit", type=int, metavar="N", help="log: the newest N changes only")
    p.add_argument("--grep", metavar="TEXT", help="log: changes whose text contains TEXT")
    p.add_argument(
        "--keep-days", type=int, metavar="N", help="compact: keep the last N days of history"
    )


def _check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dirs", nargs="+", metavar="dir", help="home directories")
    p.add_argument("--strict", action="store_true", help="treat warnings as problems")


def _tools_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument("--format", choices=["openai", "anthropic", "mcp"], default="openai")


Handler = Callable[[argparse.Namespace], int]

#: Every verb, in the order --help lists them: handler, help, example, arguments.
VERBS: dict[str, tuple[Handler, str, str, _cli_conversations.Arguments]] = {
    "init": (cmd_init, "Create a new home.", f"{PROG} init ada --name Ada", _init_arguments),
    "soul": (
        cmd_soul,
        "Print a home's system prompt.",
        f"{PROG} soul ada --watch",
        _soul_arguments,
    ),
    "memory": (
        cmd_memory,
        "Show or edit MEMORY.md / USER.md with the memory tool's rules; read, undo or "
        "restore their history; review the writes held for a person.",
        f'{PROG} memory ada replace "metric units" --with "SI units" --user\n  '
        f"{PROG} memory ada log --grep tea\n  "
        f"{PROG} memory ada pending\n  "
        f"{PROG} memory ada approve 3",
        _memory_arguments,
    ),
    "skills": _cli_skills.verb(PROG, _home_dir),
    "check": (cmd_check, "Validate homes.", f"{PROG} check ada personas/*", _check_arguments),
    "tools": (
        cmd_tools,
        "Print a home's tool specs.",
        f"{PROG} tools ada --format mcp",
        _tools_arguments,
    ),
    **{
        name: (_HANDLERS[name], help, example, arguments)
        for name, (help, example, arguments) in _cli_conversations.verbs(PROG).items()
    },
    "serve": (cmd_serve, _cli_serve.HELP, _cli_serve.example(PROG), _cli_serve.arguments),
    "store": _cli_store.verb(PROG, _home_dir),
}


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, verb by verb; with `verb`, that verb alone.

    A line that starts with a verb is parsed by that verb's parser alone (the
    others would go unused), so `main` builds only that one: the same parse, help
    and errors, with less to build at start-up.
    """
    parser = _Parser(
        prog=PROG,
        allow_abbrev=False,
        description="Long-lived AI-agent personas that live in a directory.",
        epilog=f"example:\n  {PROG} init my-persona && {PROG} soul my-persona",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True, parser_class=_Parser)
    for name, (handler, help, example, arguments) in VERBS.items():
        if verb is None or name == verb:
            arguments(_verb(sub, name, handler, help, example))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    words = sys.argv[1:] if argv is None else list(argv)
    if words and not words[0].startswith("-") and words[0] not in VERBS:
        import difflib

        close = difflib.get_close_matches(words[0], VERBS, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"the verbs: {', '.join(VERBS)}"
        print(
            f"{PROG}: error: invalid choice: {words[0]!r} is not a verb; {hint} "
            f"(see `{PROG} --help`)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    parser = build_parser(words[0] if words and words[0] in VERBS else None)
    args, extra = parser.parse_known_args(words)
    where = f"{PROG} {args.verb}"
    if extra:  # named with the verb, whose --help lists its options
        print(
            f"{where}: error: unrecognized arguments: {' '.join(extra)} (see `{where} --help`)",
            file=sys.stderr,
        )
        return EXIT_USAGE

    try:
        if args.verb == "memory":
            check_args(args)  # what argparse cannot express
        elif args.verb in _HANDLERS:
            _cli_conversations.check_args(args)
        code: int = args.handler(args)
    except UsageError as exc:
        print(f"{where}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Refused as exc:
        print(f"{where}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except ToolnexusError as exc:
        print(f"{where}: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAIL
    except OSError as exc:
        print(f"{where}: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's code for SIGINT
        print(f"{where}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return code
