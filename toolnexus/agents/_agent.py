"""Agents and sessions: `from_dir` wires a home's tools, a session freezes its soul and talks.

An `Agent` is the long-lived part: a home, its tools, a model. A `Session` is
one conversation: it composes the soul once and keeps that text as its system
prompt to the end, whatever the tools write meanwhile (writes load in the next
session), so the prompt stays byte-stable and provider prompt caches stay warm.
A session's tools are frozen with its soul, and agree with it: for an agent
from `from_dir`, each session's `skill` tool serves exactly the skills its own
soul lists (so skills added or removed since `from_dir` show up in both).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from ..conversations._chatfile import new_session_id
from ..conversations._recall import recall_tool
from ..conversations._saved import Conversations, Transcript
from ..errors import ConversationError, HomeError
from ..home._door import MEMORY_FILES
from ..home._identity import IdentityConfig
from ..home._load import valid_skills
from ..memory._skill_tool import skill_manage_tool
from ..memory._tool import memory_tool
from ..models import Message, Model
from ..scanner._scanner import Classifier, Scanner
from ..soul import compose_soul
from ..tools import Tool, define_tool, home_reader
from ._home import Home
from ._session import DEFAULT_MAX_TOOL_ROUNDS, Session, check_model, check_rounds, check_tools
from ._skills import serve_skills

__all__ = [
    "BUILTIN_TOOLS",
    "DEFAULT_MAX_TOOL_ROUNDS",
    "Agent",
    "Session",
    "Uses",
    "from_dir",
]


logger = logging.getLogger("toolnexus.agents")

# -- builtins ----------------------------------------------------------------------


def _skill_builtin(home: Path, skills: tuple[str, ...]) -> Tool:
    return serve_skills(home, skills)


def _recall_builtin(home: Path, skills: tuple[str, ...]) -> Tool:
    return recall_tool(home)


def _now_builtin(home: Path, skills: tuple[str, ...]) -> Tool:
    # The soul carries no timestamps (it must stay byte-stable), so the time comes
    # through a tool instead.
    @define_tool(name="now")
    def now() -> str:
        """Tell the current date and time (UTC, ISO 8601, with the weekday)."""
        return datetime.now(timezone.utc).strftime("%A %Y-%m-%dT%H:%M:%SZ")

    return home_reader(now)


def _skill_manage_builtin(home: Path, skills: tuple[str, ...]) -> Tool:
    return skill_manage_tool(home)


#: Builtin tools a home can enable by name in IDENTITY.md `tools:`, in the order they
#: are wired; each builder gets the home folder and the names of its skills. `skill`
#: is also enabled whenever the home has skills, and `recall` whenever it has saved
#: conversations or memory history. The memory tool is not here: `from_dir` wires
#: it by default (see `read_only`).
BUILTIN_TOOLS: Mapping[str, Callable[[Path, tuple[str, ...]], Tool]] = {
    "skill": _skill_builtin,
    "recall": _recall_builtin,
    "now": _now_builtin,
    "skill_manage": _skill_manage_builtin,
}
#: Builtins that write the home: wired after the memory tool, and only where it could be
#: (not in a `read_only` home, unless `from_dir(memory=True)`), with the home's review.
_WRITERS = ("skill_manage",)


# -- agents ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Uses:
    """What an agent uses: its tools, in the order models see them."""

    tools: tuple[Tool, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in order."""
        return tuple(tool.name for tool in self.tools)


class Agent:
    """A persona ready to talk: a home, the tools it may call, and (optionally) a model.

    `from_dir` is the usual way to build one: its agent reads the home afresh at
    each session (see `from_dir`). Build one by hand to choose every tool
    yourself (no memory tool unless you pass `memory_tool(dir)`, and no `skill`
    tool unless you pass `skill_tool(dir)`: a hand-built agent's tools are
    exactly the ones given, in every session).

    Args:
        home: The home directory (or a `Home`).
        tools: The tools, in the order models see them.
        model: The default model for sessions (each session may override it).
        max_tool_rounds: Tool rounds allowed per `send` before `ToolRoundsExceeded`.
        strict: Compose souls strictly (`False`: bad skills become warnings).
        save: Save each session's conversation in the home (see `from_dir`).
        scanner: A classifier of your own, or a `Scanner`, for the soul's memory
            (see `compose_soul`).

    Raises:
        AgentError: when two tools share a name, or an item of `tools` is not a Tool.
    """

    __slots__ = (
        *("_home", "_max_tool_rounds", "_model", "_save", "_scanner", "_strict", "_uses"),
        "_wiring",
    )

    def __init__(
        self,
        home: Home | str | os.PathLike[str],
        *,
        tools: Sequence[Tool] = (),
        model: Model | None = None,
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
        strict: bool = True,
        save: bool = False,
        scanner: Scanner | Classifier | None = None,
    ) -> None:
        self._home = home if isinstance(home, Home) else Home(home)
        self._scanner = scanner
        self._save: bool | None = save
        self._uses = Uses(check_tools([(tool, f"tools[{i}]") for i, tool in enumerate(tools)]))
        self._model = check_model(model)
        self._max_tool_rounds = check_rounds(max_tool_rounds)
        self._strict = strict
        # Set by `from_dir` only: the home's settings are read at each session. None
        # for a hand-built agent, whose tools never change.
        self._wiring: _Wiring | None = None

    @property
    def home(self) -> Home:
        """The home this agent lives in."""
        return self._home

    @property
    def uses(self) -> Uses:
        """The tools a session started now would offer (`agent.uses.tools`), in order.

        For an agent from `from_dir` this reads the home as it is now (IDENTITY.md's
        `tools:`, `read_only` and `memory_limits`, and the skills); a running
        session keeps the tools it began with.

        Raises:
            HomeError: when the home's IDENTITY.md is now invalid or names an unknown builtin.
            AgentError: when a tool you passed now clashes with a builtin the home enables.
        """
        wiring = self._wiring
        if wiring is None:
            return self._uses
        config = self._home.identity().config
        names = tuple(s.name for s in valid_skills(self._home.path, strict=self._strict))
        return Uses(wiring.tools(self._home, config, names))

    @property
    def model(self) -> Model | None:
        """The default model of new sessions."""
        return self._model

    @property
    def max_tool_rounds(self) -> int:
        """Tool rounds allowed per `send`."""
        return self._max_tool_rounds

    def __repr__(self) -> str:
        names = [tool.name for tool in self._uses.tools]
        return f"Agent(home={str(self._home.path)!r}, tools={names!r})"

    def session(
        self,
        *,
        model: Model | None = None,
        max_tool_rounds: int | None = None,
        resume: str | None = None,
    ) -> Session:
        """Start a conversation: read the home once, compose the soul, and freeze both.

        For an agent from `from_dir`, the session's tools come from the same
        reading of the home as its soul: the builtins IDENTITY.md enables now,
        `memory` unless it is now `read_only` (or `from_dir`'s `memory=` says
        otherwise), with the `memory_limits` it has now, and a `skill` tool
        serving exactly the skills the soul lists. An edit to IDENTITY.md takes
        effect at the next session; a running session keeps what it began with.

        A `from_dir` agent's session saves its conversation in the home as it goes
        (unless `from_dir(..., save=False)` or IDENTITY.md `sessions: off`); a
        hand-built `Agent` saves only with `save=True`.
        `resume` continues a saved conversation: the session starts from a fresh
        soul of the home as it is now, followed by that conversation's messages,
        and saves under the same id.

        Args:
            model: Overrides the agent's model for this session.
            max_tool_rounds: Overrides the agent's cap for this session.
            resume: The id (or a unique prefix) of a saved conversation to continue.

        Raises:
            HomeError: when the home cannot be composed (every problem listed), or
                IDENTITY.md now names an unknown builtin.
            AgentError: when a tool you passed to `from_dir` now clashes with a
                builtin the home enables (both are named).
            ConversationError: when `resume` names no saved conversation, or several.
        """
        soul = compose_soul(self._home, strict=self._strict, scanner=self._scanner)
        tools = self._uses.tools
        save = self._save
        if self._wiring is not None:
            names = tuple(summary.name for summary in soul.skills)
            tools = self._wiring.tools(self._home, soul.config, names)
            self._uses = Uses(tools)
        if save is None:
            save = soul.config.sessions
        messages: tuple[Message, ...] = ()
        session_id = new_session_id()
        untrusted: tuple[str, ...] = ()
        if resume is not None:
            conversations = Conversations(self._home.path)
            saved = conversations.get(resume)
            session_id = saved.id
            messages = conversations.messages(session_id)
            if saved.origin == "import":  # nobody said it here: not the person's word
                untrusted = ("imported",)
        chosen = model if model is not None else self._model
        transcript = (
            Transcript(
                self._home.path,
                session=session_id,
                soul_digest=soul.digest,
                model=_model_name(chosen),
                resumed=resume is not None,
            )
            if save
            else None
        )
        return Session(
            soul=soul,
            tools=tools,
            model=chosen,
            max_tool_rounds=(self._max_tool_rounds if max_tool_rounds is None else max_tool_rounds),
            messages=messages,
            transcript=transcript,
            id=session_id,
            untrusted=untrusted,
        )


def _model_name(model: Model | None) -> str | None:
    """What a saved conversation says it talked to: the model's name, else its class."""
    if model is None:
        return None
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else type(model).__name__


class _Wiring:
    """How a `from_dir` agent turns the home as it is into tools.

    Built tools are kept while what they were built from is unchanged (the skill
    names, the memory limits), so sessions of an unchanged home share them.
    """

    __slots__ = ("_built", "memory", "mine", "recall", "scanner")

    def __init__(
        self,
        *,
        memory: bool | None,
        recall: bool | None,
        mine: tuple[Tool, ...],
        scanner: Scanner | Classifier | None = None,
    ) -> None:
        self.memory = memory
        self.recall = recall
        self.mine = mine
        self.scanner = scanner
        self._built: dict[object, Tool] = {}

    def tools(self, home: Home, config: IdentityConfig, names: tuple[str, ...]) -> tuple[Tool, ...]:
        """The tools for `config` and the skills `names`: builtins, memory, then yours.

        Raises:
            HomeError: when `config` names an unknown builtin.
            AgentError: when two tools share a name (both are named).
        """
        unknown = [name for name in config.tools if name not in BUILTIN_TOOLS]
        if unknown:
            raise HomeError(
                f"{home.identity_path}: key 'tools': "
                + ", ".join(_unknown_builtin(name) for name in unknown)
            )
        enabled = set(config.tools)
        if names:
            enabled.add("skill")
        if self.recall is False:
            enabled.discard("recall")
        elif self.recall or _has_past(home):
            enabled.add("recall")
        entries: list[tuple[Tool, str]] = [
            (self._build((name, names), partial(build, home.path, names)), f"builtin {name!r}")
            for name, build in BUILTIN_TOOLS.items()
            if name in enabled and name not in _WRITERS
        ]
        writes = self.memory is True or (self.memory is None and not config.read_only)
        if writes:
            limits: dict[str, int] = {t: config.memory_limits.for_target(t) for t in MEMORY_FILES}
            key = ("memory", tuple(limits.items()), config.scanner, config.memory_review)
            make = partial(
                memory_tool,
                home.path,
                limits=limits,
                scanner=self.scanner,
                review=config.memory_review,
            )
            tool = self._build(key, make)
            entries.append((tool, "memory_tool(dir)"))
        if writes and "skill_manage" in enabled:
            writer = partial(
                skill_manage_tool, home.path, scanner=self.scanner, review=config.memory_review
            )
            built = self._build(("skill_manage", config.scanner, config.memory_review), writer)
            entries.append((built, "builtin 'skill_manage'"))
        entries.extend((tool, f"tools[{i}]") for i, tool in enumerate(self.mine))
        return check_tools(entries)

    def _build(self, key: object, make: Callable[[], Tool]) -> Tool:
        tool = self._built.get(key)
        if tool is None:
            if len(self._built) >= 64:  # a home edited for months: keep the recent ones
                self._built.clear()
            tool = self._built[key] = make()
        return tool


_WARNED: set[str] = set()


def _has_past(home: Home) -> bool:
    """Whether the home has anything to recall (an unusable database has nothing)."""
    try:
        return Conversations(home.path).has_any()
    except ConversationError as exc:
        if str(exc) not in _WARNED:  # once per problem, not at every session
            _WARNED.add(str(exc))
            logger.warning("%s: no recall tool: %s", home.path, exc)
        return False


def from_dir(
    dir: str | os.PathLike[str],
    *,
    memory: bool | None = None,
    recall: bool | None = None,
    save: bool | None = None,
    tools: Sequence[Tool] = (),
    model: Model | None = None,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    strict: bool = True,
    scanner: Scanner | Classifier | None = None,
) -> Agent:
    """Point at a home directory and get an agent wired with its tools.

    Reads IDENTITY.md (and the skills) to check the wiring now, but composes no
    soul: that happens in `agent.session()`. Tools, in order: the builtins the
    home enables (`skill` whenever it has skills, `recall` whenever it has saved
    conversations or memory history, plus the names in `tools:`, in
    `BUILTIN_TOOLS` order), then `memory_tool(dir)`, then `tools`. Each session
    saves its conversation in the home unless `save=False` or `sessions: off`.

    The home is read again at every session: a session's soul, which builtins
    it offers, whether `memory` is offered (`read_only`) and the memory limits
    all come from the home as it is when the session starts, so a long-lived
    agent follows edits to IDENTITY.md. `memory=` still wins over the file.
    `agent.uses.tools` is what a session started now would offer.

    Args:
        dir: The home directory.
        memory: `None` (default): wire the memory tool unless IDENTITY.md says
            `read_only: true`. `False`: never. `True`: always, even when read-only.
        recall: `None` (default): wire the `recall` tool when the home has saved
            conversations or memory history. `False`: never. `True`: always.
        save: `None` (default): save each session's conversation in the home
            unless IDENTITY.md says `sessions: off`. `False`: never. `True`: always.
        tools: Your own tools, after the home's.
        model: The default model for sessions.
        max_tool_rounds: Tool rounds allowed per `send`.
        strict: `False` skips bad skills (as soul warnings) instead of raising.
        scanner: A classifier of your own (or a `Scanner`), added to the memory scanner for both
            the memory tool's writes and the soul (see `toolnexus.scanner`).

    Raises:
        HomeError: when IDENTITY.md is missing or invalid, names an unknown
            builtin, or a skill breaks a rule.
        AgentError: when two tools share a name (both are named, with where they
            came from).
    """
    home = Home(dir)
    wiring = _Wiring(memory=memory, recall=recall, mine=tuple(tools), scanner=scanner)
    try:
        config = home.identity().config
        names = tuple(skill.name for skill in valid_skills(home.path, strict=strict))
        wired = wiring.tools(home, config, names)
    except HomeError as exc:
        every = _every_problem(home, exc, strict=strict, scanner=scanner)
        if every is exc:
            raise
        raise every from exc
    agent = Agent(
        home,
        tools=wired,
        model=model,
        max_tool_rounds=max_tool_rounds,
        strict=strict,
        scanner=scanner,
    )
    agent._wiring = wiring
    agent._save = save  # None: each session follows IDENTITY.md `sessions:`
    return agent


def _every_problem(
    home: Home, exc: HomeError, *, strict: bool, scanner: Scanner | Classifier | None = None
) -> HomeError:
    """Widen a wiring error to every problem composing would find: fix them all in one go."""
    try:
        compose_soul(home, strict=strict, scanner=scanner)
    except HomeError as full:
        problems = list(dict.fromkeys([*full.problems, *exc.problems]))
        if problems != list(exc.problems):
            return HomeError.of(problems)
    return exc


def _unknown_builtin(name: str) -> str:
    hint = f"unknown builtin tool {name!r} (builtins: {', '.join(sorted(BUILTIN_TOOLS))})"
    if name == "memory":
        hint += (
            "; the memory tool is wired by default: remove it from `tools:` "
            "(`read_only: true` leaves it out)"
        )
    return hint
