"""Sessions: one conversation with a frozen soul, and the tool-calling loop.

A session composes nothing itself: it is handed a soul (by `Agent.session()`)
and keeps that text as its system prompt to the end, whatever the tools write
meanwhile, so the prompt stays byte-stable and provider prompt caches stay warm.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing

from ..conversations._chatfile import new_session_id
from ..conversations._saved import Transcript
from ..errors import AgentError, ConversationError, ModelError, ToolRoundsExceeded
from ..models import (
    AssistantMessage,
    Done,
    Event,
    Message,
    Model,
    ModelRequest,
    TextDelta,
    ToolCall,
    ToolFinished,
    ToolResultMessage,
    ToolStarted,
    Usage,
    UsageReport,
    UserMessage,
)
from ..soul import Soul
from ..tools import CallContext, Tool, calling, reads_home

__all__ = ["DEFAULT_MAX_TOOL_ROUNDS", "Session", "check_model", "check_rounds", "check_tools"]

logger = logging.getLogger("toolnexus.agents")

#: Tool rounds allowed per `send`: plenty for real work, small enough to stop a looping model.
DEFAULT_MAX_TOOL_ROUNDS = 16


def check_tools(entries: Sequence[tuple[object, str]]) -> tuple[Tool, ...]:
    """Return the tools, checking each is a Tool and no name is taken twice."""
    seen: dict[str, list[tuple[Tool, str]]] = {}
    for tool, origin in entries:
        if not isinstance(tool, Tool):
            hint = " (decorate the function with @define_tool)" if callable(tool) else ""
            raise AgentError(f"{origin} is {tool!r}, not a Tool{hint}")
        seen.setdefault(tool.name, []).append((tool, origin))
    clashes = [group for group in seen.values() if len(group) > 1]
    if clashes:
        lines = [
            f"{len(group)} tools are named {group[0][0].name!r}: "
            + " and ".join(f"{origin} (source {tool.source!r})" for tool, origin in group)
            for group in clashes
        ]
        raise AgentError(
            "; ".join(lines) + ": tool names must be unique; rename one "
            "(define_tool(name=...)) or leave one out (from_dir(..., memory=False) "
            "for the memory tool)"
        )
    return tuple(tool for tool, _ in entries if isinstance(tool, Tool))


def check_model(model: Model | None) -> Model | None:
    """Return `model`, or raise AgentError naming what was passed instead of a Model."""
    value: object = model  # callers may pass anything; check what the types promise
    if model is None or isinstance(value, Model):
        return model
    hint = f"; for a model name use OpenAIModel({model!r})" if isinstance(model, str) else ""
    raise AgentError(
        f"model must be a Model (an object with `async def complete(request)`), got {model!r}{hint}"
    )


def check_rounds(value: int) -> int:
    """Return a valid tool-round cap, or raise AgentError naming the bad value."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AgentError(f"max_tool_rounds must be an int >= 0, got {value!r}")
    return value


class Session:
    """One conversation with a frozen soul: the system prompt never changes during it.

    Build one with `agent.session()`. `messages` is the whole history so far.
    `untrusted` names text the conversation holds from its start that no person
    wrote here (`imported`: a resumed imported conversation); with the results of
    tools read since the person's last message, it is what the memory tool's
    writes are judged by (`untrusted`).
    When `send` raises, the messages up to the failure stay in the history (the
    tools that ran did run); the unanswered tool calls that hit the round cap
    are left out, so the history stays valid to send again. When a `send` is
    cancelled (or a tool raises past `Tool.execute`) while a round of tool calls
    runs, every call of that round still gets a result: the ones that did not
    finish get an error result saying so, and the cancellation propagates.

    With a `transcript`, every message is saved as soon as it exists (the
    person's before the model is asked, each round of tool calls with its
    results), so a crash loses at most the turn in flight. A new conversation
    is created by its first answered turn: a first attempt that fails leaves
    nothing saved. A save that fails
    does not stop the conversation: it is logged, kept in `save_error`, and
    retried with the next save.
    """

    __slots__ = (
        "_busy",
        "_by_name",
        "_first",
        "_id",
        "_max_tool_rounds",
        "_messages",
        "_model",
        "_save_error",
        "_save_lock",
        "_saved",
        "_soul",
        "_standing",
        "_tools",
        "_transcript",
        "_untrusted",
        "_usage",
    )

    def __init__(
        self,
        *,
        soul: Soul,
        tools: Sequence[Tool] = (),
        model: Model | None = None,
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
        messages: Sequence[Message] = (),
        transcript: Transcript | None = None,
        id: str | None = None,
        untrusted: Sequence[str] = (),
    ) -> None:
        self._soul = soul
        self._tools = check_tools([(tool, f"tools[{i}]") for i, tool in enumerate(tools)])
        self._by_name = {tool.name: tool for tool in self._tools}
        self._model = check_model(model)
        self._max_tool_rounds = check_rounds(max_tool_rounds)
        self._messages: list[Message] = list(messages)
        self._first = self._saved = len(self._messages)  # earlier messages are saved already
        self._busy = False
        self._id = id or (transcript.session if transcript is not None else new_session_id())
        self._transcript = transcript
        self._save_error: ConversationError | None = None
        self._save_lock = threading.Lock()
        self._usage = Usage()
        #: Sources in the conversation from its start (an imported one): never cleared.
        self._standing = tuple(untrusted)
        #: Where untrusted text that reached the model since the person's last message came
        #: from (tool names, in order): provenance for the memory tool's writes.
        self._untrusted: dict[str, None] = dict.fromkeys(self._standing)

    @property
    def untrusted(self) -> tuple[str, ...]:
        """Where text that neither the person nor the home wrote came from, since the
        person's last message: the tools (other than `memory`, `skill`, `now`) whose
        results the model read. A memory write made now is judged by it (SPEC §3)."""
        return tuple(self._untrusted)

    @property
    def id(self) -> str:
        """This session's id: the memory history names it as the source of each change made
        here (`tool session=<id> call=<call id>`)."""
        return self._id

    @property
    def soul(self) -> Soul:
        """The soul composed when the session started; it never changes."""
        return self._soul

    @property
    def system_prompt(self) -> str:
        """The system prompt of every request in this session (`soul.text`)."""
        return self._soul.text

    @property
    def stale(self) -> bool:
        """Tell whether the home on disk now differs from this session's snapshot.

        The snapshot itself never changes: start a new session to pick up the changes.
        """
        return self._soul.is_stale()

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools offered to the model."""
        return self._tools

    @property
    def model(self) -> Model | None:
        """The model this session talks to."""
        return self._model

    @property
    def max_tool_rounds(self) -> int:
        """Tool rounds allowed per `send`."""
        return self._max_tool_rounds

    @property
    def messages(self) -> tuple[Message, ...]:
        """The conversation so far, oldest first (a snapshot: later sends do not change it).

        A resumed session starts with the messages of the conversation it resumes.
        """
        return tuple(self._messages)

    @property
    def usage(self) -> Usage:
        """The tokens this session's model responses cost so far, summed (what the
        provider reported, including a response the tool-round cap turned away; a
        resumed conversation's earlier turns are not counted)."""
        return self._usage

    @property
    def transcript(self) -> Transcript | None:
        """Where this session saves its messages, or None when it saves nothing."""
        return self._transcript

    @property
    def save_error(self) -> ConversationError | None:
        """Why the last save failed (None: every message so far is saved, or none are kept)."""
        return self._save_error

    async def _save(self) -> None:
        """Save the messages not saved yet, in a worker thread (the database may be busy
        with another process); a failure is logged and retried with the next save."""
        transcript = self._transcript
        if transcript is None or self._saved == len(self._messages):
            return
        import asyncio  # here, not at the top: the command line's start stays light

        await asyncio.to_thread(self._save_now, transcript)

    def _save_now(self, transcript: Transcript) -> None:
        # Under a lock, and counting what was saved here: a save still running after a
        # cancelled send and the next send's save never save a message twice.
        with self._save_lock:
            pending = self._messages[self._saved :]
            if not pending:
                return
            try:
                transcript.save(pending)
            except Exception as exc:  # saving must never break the conversation
                error = (
                    exc
                    if isinstance(exc, ConversationError)
                    else ConversationError(f"saving failed unexpectedly: {exc!r}", kind="state")
                )
                if self._save_error is None:
                    logger.warning(
                        "session %s: the conversation is not being saved: %s", self._id, error
                    )
                self._save_error = error
                return
            self._saved += len(pending)
            self._save_error = None

    def __repr__(self) -> str:
        return (
            f"Session(id={self._id!r}, soul={self._soul.name!r}, digest={self._soul.digest!r}, "
            f"messages={len(self._messages)})"
        )

    async def send(self, text: str) -> str:
        """Say `text` to the persona and return its answer, running the tools it calls.

        Each round sends the system prompt, the history and the tool specs; tool
        calls run in order, and every outcome (including an unknown tool or bad
        arguments) goes back to the model as a result it can read.

        Raises:
            AgentError: when the session has no model, or a send is already running.
            ModelError: when the model fails or answers something unusable.
            ToolRoundsExceeded: when the model still calls tools after
                `max_tool_rounds` rounds.
        """
        answer = ""
        async with aclosing(self._turn(text, streaming=False)) as events:
            async for event in events:
                if isinstance(event, Done):
                    answer = event.text
        return answer

    async def stream(self, text: str) -> AsyncGenerator[Event, None]:
        """`send`, reporting the turn as it happens: `TextDelta`s as the model writes
        (in one piece from a model that does not stream), `ToolStarted` and
        `ToolFinished` around each tool call, a `UsageReport` per model response,
        and `Done` with the final text, last.

        It raises what `send` raises, when the turn reaches that point. To leave the
        loop early, close the stream (`async with contextlib.aclosing(session.stream(
        text)) as events:`): the turn ends there, what was said and done so far is
        kept, and the session is free for the next message.
        """
        # Each nested generator is closed when its consumer stops early (aclosing), so
        # leaving a stream ends the turn at once and frees the session.
        async with aclosing(self._turn(text, streaming=True)) as events:
            async for event in events:
                yield event

    async def _turn(self, text: str, *, streaming: bool) -> AsyncGenerator[Event, None]:
        model = self._check_ready()
        self._busy = True
        try:
            async with aclosing(self._converse(model, text, streaming=streaming)) as events:
                async for event in events:
                    yield event
        finally:
            self._busy = False

    def send_sync(self, text: str) -> str:
        """`send` for plain code (a script, a notebook): the same turn, waited for here.

        Every sync call of the process runs on one background event loop, so a
        provider's client keeps its connections from one turn to the next. It
        raises what `send` raises.
        """
        from .._sync import run_sync

        return run_sync(self.send(text))

    def _check_ready(self) -> Model:
        model = self._model
        if model is None:
            raise AgentError(
                "this session has no model: pass model= to from_dir(...), Agent(...) or "
                "agent.session(...) (ScriptedModel for tests, OpenAIModel for an endpoint)"
            )
        if self._busy:
            raise AgentError(
                "this session is already answering a message: await that send first "
                "(one conversation per session; start another session to talk in parallel)"
            )
        return model

    async def _converse(
        self, model: Model, text: str, *, streaming: bool
    ) -> AsyncGenerator[Event, None]:
        self._messages.append(UserMessage(text))
        # The person spoke: provenance starts again (but for what the conversation began with).
        self._untrusted = dict.fromkeys(self._standing)
        if self._saved:
            # Before the model is asked: a crash keeps what the person said. A conversation
            # not saved yet is created by its first answered turn, so a first attempt that
            # fails (no key, no server) leaves no one-message conversation behind.
            await self._save()
        rounds = 0
        while True:
            request = ModelRequest(
                system=self._soul.text, messages=tuple(self._messages), tools=self._tools
            )
            reply: object = None
            async with aclosing(_ask(model, request, streaming=streaming)) as answer:
                async for item in answer:
                    if isinstance(item, TextDelta):
                        yield item
                    else:
                        reply = item
            if not isinstance(reply, AssistantMessage):
                raise ModelError(
                    f"{model!r} answered {type(reply).__name__}: Model.complete must "
                    "return an AssistantMessage"
                )
            if reply.usage is not None:
                self._usage = self._usage + reply.usage
                yield UsageReport(reply.usage)
            if not reply.tool_calls:
                self._messages.append(reply)
                await self._save()
                yield Done(reply.text, self.usage)
                return
            if rounds >= self._max_tool_rounds:
                wanted = ", ".join(tc.name for tc in reply.tool_calls)
                raise ToolRoundsExceeded(
                    f"the model still called tools ({wanted}) after {rounds} tool rounds "
                    f"(max_tool_rounds={self._max_tool_rounds}); raise max_tool_rounds "
                    "(from_dir(..., max_tool_rounds=...) or agent.session(max_tool_rounds=...)) "
                    "if the task needs more, or check why the model keeps calling tools"
                )
            rounds += 1
            results: list[ToolResultMessage] = []
            try:
                for call in reply.tool_calls:
                    yield ToolStarted(call)
                    results.append(await self._run(call))
                    yield ToolFinished(call, results[-1])
            finally:
                # Even when cancelled (a timeout) mid-round, the history gets the calls
                # together with one result each: providers reject a call left unanswered.
                self._messages.append(reply)
                self._messages.extend(results)
                self._messages.extend(_interrupted(reply.tool_calls, len(results)))
                await self._save()

    async def _run(self, call: ToolCall) -> ToolResultMessage:
        """Run one tool call; every outcome becomes a result the model can read."""
        if call.arguments_error is not None:
            return ToolResultMessage(
                call_id=call.id, name=call.name, output=call.arguments_error, is_error=True
            )
        tool = self._by_name.get(call.name)
        if tool is None:
            names = ", ".join(self._by_name) or "none"
            return ToolResultMessage(
                call_id=call.id,
                name=call.name,
                output=f"unknown tool {call.name!r}: the tools are {names}",
                is_error=True,
            )
        context = CallContext("tool", self._id, call.id, untrusted=tuple(self._untrusted))
        try:
            with calling(context):
                result = await tool.execute(call.arguments)
        finally:
            if not reads_home(tool):
                # Its result (or what it began to return) is text from outside the home.
                self._untrusted[tool.name] = None
        if result.exception is not None:
            # The model reads only the message; the developer gets the traceback.
            logger.warning(
                "tool %r failed unexpectedly: %s",
                call.name,
                result.output,
                exc_info=result.exception,
            )
        return ToolResultMessage(
            call_id=call.id,
            name=call.name,
            output=result.output,
            is_error=result.is_error,
            exception=result.exception,
        )


async def _ask(
    model: Model, request: ModelRequest, *, streaming: bool
) -> AsyncGenerator[object, None]:
    """The model's answer as `TextDelta`s then the message: streamed when asked and the
    model can."""
    stream = getattr(model, "stream", None) if streaming else None
    if stream is None:
        reply = await model.complete(request)
        if isinstance(reply, AssistantMessage) and reply.text:
            yield TextDelta(reply.text)
        yield reply
        return
    async with aclosing(stream(request)) as answer:
        async for item in answer:
            yield item


def _interrupted(calls: Sequence[ToolCall], done: int) -> list[ToolResultMessage]:
    """Error results for the calls of a round that was cut short after `done` of them."""
    return [
        ToolResultMessage(
            call_id=call.id,
            name=call.name,
            output=(
                "cancelled: the tool call was interrupted before it finished"
                if n == done
                else "cancelled: the tool call did not run"
            ),
            is_error=True,
        )
        for n, call in enumerate(calls[done:], start=done)
    ]
