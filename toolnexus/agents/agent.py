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

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from ..errors import HomeError
from ..tools import Tool, define_tool
from ._load import valid_skills
from .home import Home
from .memory import memory_tool
from .models import Model
from .session import DEFAULT_MAX_TOOL_ROUNDS, Session, check_model, check_rounds, check_tools
from .skills import serve_skills
from .soul import Soul, compose_soul

__all__ = [
    "BUILTIN_TOOLS",
    "DEFAULT_MAX_TOOL_ROUNDS",
    "Agent",
    "Session",
    "Uses",
    "from_dir",
]


# -- builtins ----------------------------------------------------------------------


def _skill_builtin(home: Path, skills: tuple[str, ...]) -> Tool:
    return serve_skills(home, skills)


def _now_builtin(home: Path, skills: tuple[str, ...]) -> Tool:
    # The soul carries no timestamps (it must stay byte-stable), so the time comes
    # through a tool instead.
    @define_tool(name="now")
    def now() -> str:
        """Tell the current date and time (UTC, ISO 8601, with the weekday)."""
        return datetime.now(timezone.utc).strftime("%A %Y-%m-%dT%H:%M:%SZ")

    return now


#: Builtin tools a home can enable by name in IDENTITY.md `tools:`, in the order they
#: are wired; each builder gets the home folder and the names of its skills. `skill`
#: is also enabled whenever the home has skills. The memory tool is not here:
#: `from_dir` wires it by default (see `read_only`).
BUILTIN_TOOLS: Mapping[str, Callable[[Path, tuple[str, ...]], Tool]] = {
    "skill": _skill_builtin,
    "now": _now_builtin,
}

_SKILL_ORIGIN = "builtin 'skill'"


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

    `from_dir` is the usual way to build one; build it by hand to choose every
    tool yourself (no memory tool unless you pass `memory_tool(dir)`, and no
    `skill` tool unless you pass `skill_tool(dir)`: a hand-built agent's tools
    are exactly the ones given, in every session).

    Args:
        home: The home directory (or a `Home`).
        tools: The tools, in the order models see them.
        model: The default model for sessions (each session may override it).
        max_tool_rounds: Tool rounds allowed per `send` before `ToolRoundsExceeded`.
        strict: Compose souls strictly (`False`: bad skills become warnings).

    Raises:
        AgentError: when two tools share a name, or an item of `tools` is not a Tool.
    """

    __slots__ = ("_home", "_max_tool_rounds", "_model", "_skill", "_strict", "_uses")

    def __init__(
        self,
        home: Home | str | os.PathLike[str],
        *,
        tools: Sequence[Tool] = (),
        model: Model | None = None,
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
        strict: bool = True,
    ) -> None:
        self._home = home if isinstance(home, Home) else Home(home)
        self._uses = Uses(check_tools([(tool, f"tools[{i}]") for i, tool in enumerate(tools)]))
        self._model = check_model(model)
        self._max_tool_rounds = check_rounds(max_tool_rounds)
        self._strict = strict
        # Set by `from_dir` only (the builtin skill tool follows each session's soul);
        # None for a hand-built agent, whose tools never change.
        self._skill: _SkillFollow | None = None

    @property
    def home(self) -> Home:
        """The home this agent lives in."""
        return self._home

    @property
    def uses(self) -> Uses:
        """The agent's tools (`agent.uses.tools`), as wired when the agent was built.

        For an agent from `from_dir`, the `skill` tool here serves the skills the
        home had then; each session offers one built from its own soul instead.
        """
        return self._uses

    @property
    def model(self) -> Model | None:
        """The default model of new sessions."""
        return self._model

    @property
    def max_tool_rounds(self) -> int:
        """Tool rounds allowed per `send`."""
        return self._max_tool_rounds

    def __repr__(self) -> str:
        return f"Agent(home={str(self._home.path)!r}, tools={list(self._uses.names)!r})"

    def session(self, *, model: Model | None = None, max_tool_rounds: int | None = None) -> Session:
        """Start a conversation: compose the soul now and freeze it, and the tools, for the session.

        The tools are `agent.uses.tools`, except that for an agent from `from_dir`
        the `skill` tool follows the session's soul: it is offered exactly when the
        soul lists skills, and its `name` enum is those skills. So a skill added
        after `from_dir` is both listed and loadable in the next session, and a
        removed one is in neither.

        Args:
            model: Overrides the agent's model for this session.
            max_tool_rounds: Overrides the agent's cap for this session.

        Raises:
            HomeError: when the home cannot be composed (every problem listed).
            AgentError: when skills appeared since `from_dir` and one of your
                tools is also named `skill`.
        """
        soul, tools = self._compose()
        return Session(
            soul=soul,
            tools=tools,
            model=model if model is not None else self._model,
            max_tool_rounds=(self._max_tool_rounds if max_tool_rounds is None else max_tool_rounds),
        )

    def _compose(self) -> tuple[Soul, tuple[Tool, ...]]:
        """Compose the soul, and the tools that agree with it."""
        soul = compose_soul(self._home, strict=self._strict)
        follow = self._skill
        if follow is None:
            return soul, self._uses.tools
        entries: list[tuple[Tool, str]] = []
        names = tuple(summary.name for summary in soul.skills)
        if names:
            tool = follow.tool
            if tool is None or names != follow.names:
                tool = serve_skills(soul.home, names)
                self._skill = replace(follow, names=names, tool=tool)
            entries.append((tool, _SKILL_ORIGIN))
        entries += [
            (tool, f"agent.uses.tools[{i}]")
            for i, tool in enumerate(self._uses.tools)
            if tool is not follow.wired
        ]
        return soul, check_tools(entries)


@dataclass(frozen=True, slots=True, kw_only=True)
class _SkillFollow:
    """How a `from_dir` agent's skill tool follows its sessions' souls."""

    #: The skill tool in `agent.uses.tools` (None when the home had no skills then).
    wired: Tool | None
    #: The last skill tool a session got, and the skills it serves: reused while they match.
    tool: Tool | None
    names: tuple[str, ...]


def from_dir(
    dir: str | os.PathLike[str],
    *,
    memory: bool | None = None,
    tools: Sequence[Tool] = (),
    model: Model | None = None,
    max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    strict: bool = True,
) -> Agent:
    """Point at a home directory and get an agent wired with its tools.

    Reads IDENTITY.md (and the skills, to build the `skill` tool) but composes
    no soul: that happens in `agent.session()`. Tools, in order: the builtins the
    home enables (`skill` whenever it has skills, plus the names in `tools:`, in
    `BUILTIN_TOOLS` order), then `memory_tool(dir)`, then `tools`.

    `agent.uses.tools` is that list as of now. The `skill` tool alone follows the
    home afterwards: each session builds it from the skills its soul lists (and
    leaves it out when there are none), so its prompt and its tools agree.

    Args:
        dir: The home directory.
        memory: `None` (default): wire the memory tool unless IDENTITY.md says
            `read_only: true`. `False`: never. `True`: always, even when read-only.
        tools: Your own tools, after the home's.
        model: The default model for sessions.
        max_tool_rounds: Tool rounds allowed per `send`.
        strict: `False` skips bad skills (as soul warnings) instead of raising.

    Raises:
        HomeError: when IDENTITY.md is missing or invalid, names an unknown
            builtin, or a skill breaks a rule.
        AgentError: when two tools share a name (both are named, with where they
            came from).
    """
    home = Home(dir)
    try:
        entries, names = _home_tools(home, memory=memory, strict=strict)
    except HomeError as exc:
        every = _every_problem(home, exc, strict=strict)
        if every is exc:
            raise
        raise every from exc
    wired = next((tool for tool, origin in entries if origin == _SKILL_ORIGIN), None)
    entries.extend((tool, f"tools[{i}]") for i, tool in enumerate(tools))
    agent = Agent(
        home,
        tools=check_tools(entries),
        model=model,
        max_tool_rounds=max_tool_rounds,
        strict=strict,
    )
    agent._skill = _SkillFollow(wired=wired, tool=wired, names=names if wired else ())
    return agent


def _home_tools(
    home: Home, *, memory: bool | None, strict: bool
) -> tuple[list[tuple[Tool, str]], tuple[str, ...]]:
    """Build the tools the home enables, each with where it came from; and the skill names."""
    config = home.identity().config
    unknown = [name for name in config.tools if name not in BUILTIN_TOOLS]
    if unknown:
        raise HomeError(
            f"{home.identity_path}: key 'tools': "
            + ", ".join(_unknown_builtin(name) for name in unknown)
        )
    names = tuple(skill.name for skill in valid_skills(home.path, strict=strict))
    enabled = set(config.tools)
    if names:
        enabled.add("skill")
    entries: list[tuple[Tool, str]] = [
        (build(home.path, names), f"builtin {name!r}")
        for name, build in BUILTIN_TOOLS.items()
        if name in enabled
    ]
    if memory is True or (memory is None and not config.read_only):
        entries.append((memory_tool(home.path), "memory_tool(dir)"))
    return entries, names


def _every_problem(home: Home, exc: HomeError, *, strict: bool) -> HomeError:
    """Widen a wiring error to every problem composing would find: fix them all in one go."""
    try:
        compose_soul(home, strict=strict)
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
