"""`toolnexus chat HOME`: talk to a persona, streamed, through a chat that survives errors.

The answer is printed as it arrives; each tool call is one line on stderr with
its arguments and how it went. A provider error (after the SDK's own retries,
with backoff, honouring `Retry-After`) or a turn that reaches the tool-round cap
ends that turn with one line, and the prompt comes back with the conversation
kept. Ctrl-C cancels the turn in flight; Ctrl-C at the prompt ends the chat.
`/usage` prints the tokens the session has cost and how much came from the cache;
a memory write held for review is named as it happens, and `/pending`, `/approve
ID` and `/reject ID` let the person decide at once;
`/help` lists the commands, `/quit` and `/exit` end the chat. The exit code is 1 when
every turn failed (no key, no server), so a script notices.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import sys
import threading
from contextlib import aclosing, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._text import terminal_safe
from ._memory import UsageError

if TYPE_CHECKING:
    from ..agents._session import Session
    from ..models import Model, ToolFinished, Usage

__all__ = ["PROVIDERS", "chat", "describe_usage", "pick_provider", "tool_line"]

PROVIDERS = ("openai", "anthropic")
#: Retries of a failed request (429, 5xx, timeouts, lost connections) before a turn
#: gives up; the SDKs back off between them and honour `Retry-After`.
CHAT_RETRIES = 3
#: Tool-call arguments are shown whole up to this many characters.
ARGUMENTS_SHOWN = 120
#: The start of a memory or skill write's result when it was held for review (`memory/_review`).
_HELD = re.compile(r"held for review \(#(\d+)\)")
EXIT_INTERRUPTED = 130


def pick_provider(explicit: str | None, model_name: str, base_url: str | None = None) -> str:
    """The provider: `--provider`, else `anthropic` for a `claude…` model name, else
    `openai` with a `--base-url`, else `anthropic` when only `ANTHROPIC_API_KEY` is set,
    else `openai`."""
    if explicit:
        return explicit
    if model_name.lower().startswith("claude"):
        return "anthropic"
    if base_url:  # a server of one's own speaks the OpenAI protocol, as a rule
        return "openai"
    if os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get("OPENAI_API_KEY"):
        return "anthropic"
    return "openai"


def build_model(provider: str, name: str, base_url: str | None) -> Model:
    """The provider's model, retrying failed requests a few times before giving up."""
    if provider == "anthropic":
        from ..models._anthropic import AnthropicModel

        return AnthropicModel(model=name, base_url=base_url, max_retries=CHAT_RETRIES)
    from ..models._openai import OpenAIModel

    return OpenAIModel(model=name, base_url=base_url, max_retries=CHAT_RETRIES)


def tool_line(event: ToolFinished) -> str:
    """One line for a finished tool call: its name, its arguments, how it went."""
    shown = json.dumps(dict(event.call.arguments), ensure_ascii=False, separators=(",", ":"))
    if len(shown) > ARGUMENTS_SHOWN:
        shown = shown[: ARGUMENTS_SHOWN - 1] + "…"
    result = event.result
    if not result.is_error:
        writes = event.call.name in ("memory", "skill_manage")
        held = _HELD.match(result.output) if writes else None
        if held is not None:  # a person must see it now, and can decide at once
            id = held.group(1)
            decide = f"/approve {id} or /reject {id}"
            return f"  [{event.call.name}] {shown} -> held for review #{id}: {decide}"
        return f"  [{event.call.name}] {shown} -> ok"
    first = (result.output.splitlines() or [""])[0]
    return f"  [{event.call.name}] {shown} -> error: {first[:100]}"


def describe_usage(usage: Usage) -> str:
    """The session's tokens, and the share of its prompt tokens read from the cache."""
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    rate = f"{100 * usage.cache_read_tokens / prompt:.0f}%" if prompt else "n/a"
    return (
        f"input {usage.input_tokens:,} · output {usage.output_tokens:,} · "
        f"cache read {usage.cache_read_tokens:,} · cache write {usage.cache_write_tokens:,} · "
        f"cache hit rate {rate}"
    )


def chat(args: argparse.Namespace, home: Path, prog: str) -> int:
    """Talk to the persona one line at a time; save the conversation unless told not to."""
    from ..agents._agent import from_dir
    from ..agents._home import Home
    from ..conversations._saved import Conversations
    from ..errors import ConversationError

    configured = Home(home).identity().config.model
    model_name = args.model or configured or os.environ.get("TOOLNEXUS_MODEL")
    if not model_name:
        raise UsageError(
            "no model configured: pass --model NAME, set `model:` in IDENTITY.md, or set "
            "TOOLNEXUS_MODEL (plus the provider's key: OPENAI_API_KEY or ANTHROPIC_API_KEY)"
        )
    _check_base_url(args.base_url)
    resume = args.resume
    if args.continue_:
        latest = Conversations(home).latest()
        if latest is None:
            raise ConversationError(
                f"no saved conversation to continue in {home}: start one with `{prog} chat {home}`",
                kind="not_found",
            )
        resume = latest.id
    elif resume is not None:
        resume = Conversations(home).get(resume).id  # an unknown id is named before the key
    provider = pick_provider(args.provider, model_name, args.base_url)
    _check_key(provider, args.base_url)
    model = build_model(provider, model_name, args.base_url)
    agent = from_dir(home, model=model, save=False if args.no_save else None)
    session = agent.session(resume=resume)
    name = session.soul.name
    where = f"{name} ({provider}: {model_name})"
    if resume is not None:
        where = f"conversation {session.id} ({len(session.messages)} messages) with {where}"
        print(f"resuming {where}; /help for commands, Ctrl-D to end", file=sys.stderr)
    else:
        print(f"chatting with {where}; /help for commands, Ctrl-D to end", file=sys.stderr)
    talk = _Chat(session, prog)
    try:
        code = asyncio.run(talk.run())
    except (KeyboardInterrupt, asyncio.CancelledError):
        print(f"\n{prog} chat: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    transcript = session.transcript
    if transcript is not None and transcript.started and session.save_error is None:
        print(f"saved as conversation {session.id}", file=sys.stderr)
    return code


#: The chat's own commands (a line that is one of them never goes to the model).
COMMANDS = {
    "/help": "this list",
    "/usage": "the tokens this session has cost, and how much came from the cache",
    "/pending": "the memory and skill writes held for your review (made after untrusted text)",
    "/approve": "/approve ID...: save held writes (they load next session)",
    "/reject": "/reject ID...: drop held writes",
    "/quit": "end the chat (so do /exit, Ctrl-D and Ctrl-C at the prompt)",
    "/exit": "end the chat",
}
_KEYS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def _check_base_url(url: str | None) -> None:
    """A `--base-url` must be an http(s) address with a host."""
    if url is None:
        return
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        ok = False
    if not ok:
        raise UsageError(
            f"--base-url {url!r}: not an http(s) address (e.g. http://localhost:8000/v1)"
        )


def _check_key(provider: str, base_url: str | None) -> None:
    """The provider's key must be set, named as a shell sets it."""
    from ..errors import ModelError

    env = _KEYS[provider]
    if os.environ.get(env):
        return
    hint = f"; a server that checks no key still wants one: export {env}=none" if base_url else ""
    raise ModelError(f"no API key for {provider}: export {env}=<your key>{hint}")


class _Chat:
    """The read-answer loop: one turn at a time, each a task Ctrl-C can cancel."""

    def __init__(self, session: Session, prog: str) -> None:
        self.session = session
        self.prog = prog
        self.name = session.soul.name
        self.turn: asyncio.Task[None] | None = None
        self.main: asyncio.Task[Any] | None = None
        self.quit = False
        self.stopping = False  # the turn in flight was asked to stop: Ctrl-C again quits
        self.answered = False  # the turn's answer is shown: Ctrl-C now is at the prompt
        self.warned = False
        self.succeeded = self.failed = 0

    async def run(self) -> int:
        from ..errors import ModelError, ToolRoundsExceeded

        loop = asyncio.get_running_loop()
        self.main = asyncio.current_task()
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        threading.Thread(target=_read_lines, args=(loop, lines), daemon=True).start()
        # Where a loop takes no signal handlers, Ctrl-C simply ends the chat.
        with suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
        tty = sys.stdin.isatty()
        while True:
            if tty:
                sys.stderr.write("you> ")
                sys.stderr.flush()
            line = await lines.get()
            command = line.strip() if line is not None else "/quit"
            if command in ("/quit", "/exit"):
                if tty and line is None:
                    print(file=sys.stderr)
                # Every turn failed (no key, no server): say so to a script.
                return 1 if self.failed and not self.succeeded else 0
            assert line is not None
            if not command:
                continue
            if command == "/usage":
                print(f"usage this session: {describe_usage(self.session.usage)}", flush=True)
                continue
            if command.split()[0] in ("/pending", "/approve", "/reject"):
                self._review(command)
                continue
            if command == "/help":
                width = max(map(len, COMMANDS))
                for name, what in COMMANDS.items():
                    print(f"  {name:<{width}}  {what}", flush=True)
                continue
            self.turn = asyncio.create_task(self._one_turn(line))
            self.stopping = self.answered = False
            try:
                await self.turn
                self.succeeded += 1
            except asyncio.CancelledError:
                if not self.quit:
                    print(f"{self.prog} chat: interrupted: turn cancelled", file=sys.stderr)
                    continue
                raise
            except ToolRoundsExceeded as exc:
                self.failed += 1
                print(f"{self.prog} chat: the turn ended: {_one_line(exc)}", file=sys.stderr)
            except ModelError as exc:  # after the retries: the conversation so far is kept
                self.failed += 1
                print(f"{self.prog} chat: {_one_line(exc)}", file=sys.stderr)
            except Exception as exc:  # never a traceback: the turn ends, the chat goes on
                self.failed += 1
                print(f"{self.prog} chat: the turn failed: {_one_line(exc)}", file=sys.stderr)
            finally:
                self.turn = None
            self._warn_unsaved()

    def _review(self, command: str) -> None:
        """/pending, /approve ID..., /reject ID...: the person decides on held writes."""
        from ..errors import ToolnexusError
        from ..memory._held import Review
        from ..tools import CallContext, calling
        from ._memory import held_text

        name, *ids = command.split()
        review = Review(self.session.soul.home)
        where = f"{self.prog} chat"
        try:
            if name == "/pending":
                if ids:
                    print(f"{where}: /pending takes no ID", file=sys.stderr)
                    return
                held = review.pending()
                for write in held:  # every change whole, as `memory HOME pending` shows it
                    print("\n".join(f"  {line}" for line in held_text(write).split("\n")))
                if not held:
                    print("  (no writes held for review)")
                sys.stdout.flush()
                return
            if not ids:
                print(
                    f"{where}: {name} needs the ID of a held write (see /pending)", file=sys.stderr
                )
                return
            decide = review.approve if name == "/approve" else review.reject
            for raw in ids:
                try:
                    with calling(CallContext("chat", self.session.id)):
                        print(terminal_safe(decide(int(raw.lstrip("#")))), flush=True)
                except ValueError:
                    shown = terminal_safe(repr(raw))
                    print(f"{where}: {shown} is not the ID of a held write", file=sys.stderr)
                except ToolnexusError as exc:
                    why = terminal_safe(_one_line(exc))
                    print(f"{where}: {name[1:]} {raw}: {why}", file=sys.stderr)
        except ToolnexusError as exc:
            print(f"{where}: {terminal_safe(_one_line(exc))}", file=sys.stderr)

    def _interrupt(self) -> None:
        """Ctrl-C: cancel the turn in flight; again (or at the prompt, or once the answer
        is shown), end the chat."""
        turn = self.turn
        if turn is not None and not turn.done() and not self.answered and not self.stopping:
            self.stopping = True
            turn.cancel()
        elif self.main is not None:
            self.quit = True
            self.main.cancel()

    async def _one_turn(self, line: str) -> None:
        out = sys.stdout
        open_line = False
        try:
            async with aclosing(self.session.stream(line)) as events:
                async for event in events:
                    open_line = self._show(event, open_line)
        finally:
            if open_line:  # a turn cut short still ends its line
                out.write("\n")
                out.flush()

    def _show(self, event: object, open_line: bool) -> bool:
        """Print one event; whether an answer's line is left open."""
        from ..models import Done, TextDelta, ToolFinished, ToolStarted

        out = sys.stdout
        if isinstance(event, TextDelta):
            if not open_line:
                out.write(f"{self.name}> ")
            out.write(event.text)
            out.flush()
            return True
        if isinstance(event, ToolStarted) and open_line:
            out.write("\n")
            out.flush()
            return False
        if isinstance(event, ToolFinished):
            print(tool_line(event), file=sys.stderr, flush=True)
        elif isinstance(event, Done):
            out.write(("" if open_line else f"{self.name}> ") + "\n")
            out.flush()
            self.answered = True
            return False
        return open_line

    def _warn_unsaved(self) -> None:
        error = self.session.save_error
        if error is not None and not self.warned:  # once, and again only after a recovery
            print(f"{self.prog} chat: warning: not saving: {error}", file=sys.stderr)
        self.warned = error is not None


def _read_lines(loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[str | None]) -> None:
    """Feed stdin's lines to the loop (a daemon thread: a chat that ends never waits on it).

    It reads the descriptor itself: a buffered reader's lock held by a thread still
    reading would stop the interpreter's exit. Bytes that are not UTF-8 become
    U+FFFD; whatever happens, the end is signalled.
    """

    def put(raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        loop.call_soon_threadsafe(lines.put_nowait, line)

    try:
        fd = sys.stdin.fileno()
        pending = b""
        while chunk := os.read(fd, 65536):
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                put(raw)
        if pending:
            put(pending)
    except (OSError, ValueError):
        pass  # stdin went away (or has no descriptor): that is the end of the input
    finally:
        with suppress(RuntimeError):  # the loop may be closed already
            loop.call_soon_threadsafe(lines.put_nowait, None)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 400 else text[:397] + "..."
