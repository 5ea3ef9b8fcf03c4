"""from_dir wiring, hand-built agents, and sessions whose soul stays frozen."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from toolnexus import Tool, define_tool
from toolnexus.agents import Agent, Session, Uses, from_dir, memory_tool
from toolnexus.agents._agent import BUILTIN_TOOLS, DEFAULT_MAX_TOOL_ROUNDS
from toolnexus.agents.models import ScriptedModel, ToolCall, ToolResultMessage, call
from toolnexus.errors import AgentError, HomeError

MakeHome = Callable[..., Path]


@pytest.fixture
def make_home(tmp_path: Path) -> MakeHome:
    """Write a small home: IDENTITY.md with the given frontmatter lines, optional skills."""

    def make(*frontmatter: str, skills: tuple[str, ...] = (), name: str = "home") -> Path:
        home = tmp_path / name
        home.mkdir()
        lines = ["---", "name: Ada", *frontmatter, "---", "You are Ada, a careful assistant.", ""]
        (home / "IDENTITY.md").write_text("\n".join(lines), encoding="utf-8")
        for skill in skills:
            folder = home / "skills" / skill
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(
                f"---\nname: {skill}\ndescription: Do {skill} things.\n---\nSteps.\n",
                encoding="utf-8",
            )
        return home

    return make


@define_tool
def echo(text: str) -> str:
    """Repeat the text.

    Args:
        text: What to repeat.
    """
    return text


# -- wiring ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frontmatter", "memory", "names"),
    [
        pytest.param((), None, ("memory",), id="memory-by-default"),
        pytest.param((), False, (), id="memory-false-leaves-it-out"),
        pytest.param(("read_only: true",), None, (), id="read-only-leaves-it-out"),
        pytest.param(("read_only: true",), True, ("memory",), id="memory-true-beats-read-only"),
        pytest.param(("read_only: false",), True, ("memory",), id="memory-true"),
    ],
)
def test_memory_wiring(
    make_home: MakeHome, frontmatter: tuple[str, ...], memory: bool | None, names: tuple[str, ...]
) -> None:
    agent = from_dir(make_home(*frontmatter), memory=memory)
    assert agent.uses.names == names
    assert isinstance(agent.uses, Uses)


def test_the_memory_tool_writes_into_the_home(make_home: MakeHome) -> None:
    home = make_home()
    [tool] = from_dir(home).uses.tools
    assert (tool.name, tool.source) == ("memory", "native")
    assert tool.input_schema == memory_tool(home).input_schema


@pytest.mark.parametrize(
    ("frontmatter", "skills", "names"),
    [
        pytest.param((), ("cite",), ("skill", "memory"), id="skills-enable-skill"),
        pytest.param(("tools: [now]",), (), ("now", "memory"), id="now-builtin"),
        pytest.param(
            ("tools: [now, skill]",), ("cite",), ("skill", "now", "memory"), id="registry-order"
        ),
        pytest.param(("tools: [skill]",), ("cite",), ("skill", "memory"), id="skill-listed-too"),
    ],
)
def test_builtins_come_first_in_registry_order(
    make_home: MakeHome,
    frontmatter: tuple[str, ...],
    skills: tuple[str, ...],
    names: tuple[str, ...],
) -> None:
    assert from_dir(make_home(*frontmatter, skills=skills)).uses.names == names


def test_builtin_registry() -> None:
    assert list(BUILTIN_TOOLS) == ["skill", "recall", "now", "skill_manage"]


def test_passed_tools_come_last_in_order(make_home: MakeHome) -> None:
    @define_tool
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    agent = from_dir(make_home(skills=("cite",)), tools=[echo, shout])
    assert agent.uses.names == ("skill", "memory", "echo", "shout")
    assert agent.uses.tools[2:] == (echo, shout)


async def test_now_builtin_tells_the_time(make_home: MakeHome) -> None:
    [now, _] = from_dir(make_home("tools: [now]")).uses.tools
    result = await now.execute({})
    assert not result.is_error
    assert re.fullmatch(r"[A-Z][a-z]+day \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", result.output)


def test_unknown_builtin_names_the_file_and_the_choices(make_home: MakeHome) -> None:
    home = make_home("tools: [now, web_search]")
    with pytest.raises(HomeError) as info:
        from_dir(home)
    assert str(info.value) == (
        f"{home / 'IDENTITY.md'}: key 'tools': unknown builtin tool 'web_search' "
        "(builtins: now, recall, skill, skill_manage)"
    )


def test_memory_is_not_a_builtin_and_the_error_says_why(make_home: MakeHome) -> None:
    home = make_home("tools: [memory]")
    with pytest.raises(HomeError) as info:
        from_dir(home)
    assert str(info.value) == (
        f"{home / 'IDENTITY.md'}: key 'tools': unknown builtin tool 'memory' "
        "(builtins: now, recall, skill, skill_manage); the memory tool is wired by default: "
        "remove it from `tools:` (`read_only: true` leaves it out)"
    )


def test_skill_listed_without_skills_is_an_error(make_home: MakeHome) -> None:
    home = make_home("tools: [skill]")
    with pytest.raises(HomeError, match="no skills: the skill tool needs at least one"):
        from_dir(home)


def test_missing_identity_is_a_home_error(tmp_path: Path) -> None:
    with pytest.raises(HomeError, match=r"IDENTITY\.md: missing"):
        from_dir(tmp_path)


def test_same_name_twice_names_both_and_where_they_came_from(make_home: MakeHome) -> None:
    home = make_home()

    @define_tool(name="memory", source="mcp")
    def fake_memory(text: str) -> str:
        """Pretend to remember."""
        return text

    with pytest.raises(AgentError) as info:
        from_dir(home, tools=[echo, fake_memory])
    assert str(info.value) == (
        "2 tools are named 'memory': memory_tool(dir) (source 'native') and tools[1] "
        "(source 'mcp'): tool names must be unique; rename one (define_tool(name=...)) or "
        "leave one out (from_dir(..., memory=False) for the memory tool)"
    )
    assert from_dir(home, memory=False, tools=[fake_memory]).uses.tools == (fake_memory,)


def test_same_name_among_passed_tools(make_home: MakeHome) -> None:
    with pytest.raises(
        AgentError, match=r"^2 tools are named 'echo': tools\[0\] .* and tools\[1\]"
    ):
        from_dir(make_home(), tools=[echo, echo])


def test_a_function_is_not_a_tool(make_home: MakeHome) -> None:
    def plain(text: str) -> str:
        return text

    with pytest.raises(AgentError) as info:
        from_dir(make_home(), tools=[plain])  # type: ignore[list-item]
    assert str(info.value).endswith(", not a Tool (decorate the function with @define_tool)")


def test_from_dir_composes_no_soul(make_home: MakeHome) -> None:
    # A broken template only matters when a session composes the soul.
    home = make_home()
    (home / "soul.md.j2").write_text("{{ unclosed\n", encoding="utf-8")
    agent = from_dir(home)
    with pytest.raises(HomeError, match=r"soul\.md\.j2"):
        agent.session()


def test_agent_by_hand_uses_exactly_the_tools_given(make_home: MakeHome) -> None:
    home = make_home()
    agent = Agent(home, tools=[echo])
    assert agent.uses.tools == (echo,)
    assert agent.home.path == home
    assert agent.model is None
    assert agent.max_tool_rounds == DEFAULT_MAX_TOOL_ROUNDS
    assert repr(agent) == f"Agent(home={str(home)!r}, tools=['echo'])"
    assert agent.session().system_prompt.startswith("# Ada\n")


@pytest.mark.parametrize("rounds", [-1, 1.5, True])
def test_bad_round_cap(make_home: MakeHome, rounds: object) -> None:
    with pytest.raises(AgentError, match="max_tool_rounds must be an int >= 0"):
        from_dir(make_home(), max_tool_rounds=rounds)  # type: ignore[arg-type]


# -- sessions ----------------------------------------------------------------------


async def test_sessions_are_frozen_across_memory_writes_made_through_the_loop(
    make_home: MakeHome,
) -> None:
    home = make_home()
    model = ScriptedModel(
        [
            call("memory", action="add", text="the user's cat is called Miso"),
            call("memory", {"action": "add", "target": "user", "text": "prefers metric units"}),
            "Noted both.",
            "Anything else?",
            "Your cat is Miso.",
        ]
    )
    agent = from_dir(home, model=model)
    first = agent.session()
    soul, prompt = first.soul, first.system_prompt
    assert prompt == soul.text
    assert not first.stale

    assert await first.send("My cat is Miso, and use metric please.") == "Noted both."
    # Written to disk at once...
    assert "Miso" in (home / "MEMORY.md").read_text(encoding="utf-8")
    assert "prefers metric units" in (home / "USER.md").read_text(encoding="utf-8")
    # ...but the session keeps its snapshot, and every request saw the same prompt.
    assert first.soul is soul
    assert first.system_prompt == prompt
    assert "Miso" not in prompt
    assert first.stale
    assert await first.send("ok") == "Anything else?"
    assert {request.system for request in model.requests} == {prompt}
    assert first.system_prompt == prompt

    second = agent.session()
    assert "- the user's cat is called Miso" in second.system_prompt
    assert "- prefers metric units" in second.system_prompt
    assert second.soul.memory_entries == ("the user's cat is called Miso",)
    assert not second.stale
    assert second.messages == ()
    assert await second.send("What is my cat called?") == "Your cat is Miso."
    assert model.requests[-1].system == second.system_prompt
    assert first.system_prompt == prompt


def test_stale_flips_on_a_write_and_the_snapshot_stays(make_home: MakeHome) -> None:
    home = make_home()
    session = from_dir(home).session()
    digest = session.soul.digest
    assert not session.stale
    (home / "MEMORY.md").write_text("- written by hand\n", encoding="utf-8")
    assert session.stale
    assert session.soul.digest == digest
    assert "written by hand" not in session.system_prompt


async def test_session_needs_a_model(make_home: MakeHome) -> None:
    session = from_dir(make_home()).session()
    with pytest.raises(AgentError) as info:
        await session.send("hi")
    assert str(info.value) == (
        "this session has no model: pass model= to from_dir(...), Agent(...) or "
        "agent.session(...) (ScriptedModel for tests, OpenAIModel for an endpoint)"
    )
    assert session.messages == ()


async def test_session_model_and_cap_override_the_agents(make_home: MakeHome) -> None:
    agent = from_dir(make_home(), model=ScriptedModel(["from the agent"]), max_tool_rounds=3)
    mine = ScriptedModel(["from the session"])
    session = agent.session(model=mine, max_tool_rounds=0)
    assert (session.model, session.max_tool_rounds) == (mine, 0)
    assert await session.send("hi") == "from the session"
    assert agent.session().max_tool_rounds == 3
    assert await agent.session().send("hi") == "from the agent"


def test_session_offers_the_agents_tools(make_home: MakeHome) -> None:
    agent = from_dir(make_home(skills=("cite",)), tools=[echo])
    session = agent.session()
    assert isinstance(session, Session)
    assert session.tools == agent.uses.tools
    assert all(isinstance(tool, Tool) for tool in session.tools)
    assert repr(session) == (
        f"Session(id={session.id!r}, soul='Ada', digest={session.soul.digest!r}, messages=0)"
    )


async def test_the_skill_tool_works_through_the_loop(make_home: MakeHome) -> None:
    model = ScriptedModel([ToolCall("skill", {"name": "cite"}), "done"])
    session = from_dir(make_home(skills=("cite",)), model=model).session()
    assert "- cite: Do cite things." in session.system_prompt
    assert await session.send("cite something") == "done"
    result = session.messages[2]
    assert not getattr(result, "is_error", True)
    assert "Steps." in getattr(result, "output", "")


def test_wiring_errors_list_every_problem_in_the_home(make_home: MakeHome) -> None:
    home = make_home("colour: blue", skills=("cite",))
    bad = home / "skills" / "Bad_Name"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: Bad_Name\n---\nbody\n", encoding="utf-8")
    with pytest.raises(HomeError) as info:
        from_dir(home)
    problems = info.value.problems
    assert len(problems) > 1
    assert any("unknown key 'colour'" in p for p in problems)
    assert any("Bad_Name" in p for p in problems)


def test_bad_skills_fail_strict_wiring_and_are_skipped_when_tolerant(make_home: MakeHome) -> None:
    home = make_home(skills=("cite",))
    (home / "skills" / "empty").mkdir()
    with pytest.raises(HomeError, match=r"empty: no SKILL\.md"):
        from_dir(home)
    agent = from_dir(home, strict=False)
    assert agent.uses.names == ("skill", "memory")
    session = agent.session()
    assert any("empty" in warning for warning in session.soul.warnings)


def test_a_model_name_is_not_a_model(make_home: MakeHome) -> None:
    with pytest.raises(AgentError) as info:
        from_dir(make_home(), model="gpt-4o")  # type: ignore[arg-type]
    assert str(info.value) == (
        "model must be a Model (an object with `async def complete(request)`), got 'gpt-4o'; "
        "for a model name use OpenAIModel('gpt-4o')"
    )
    with pytest.raises(AgentError, match="model must be a Model"):
        from_dir(make_home(name="other")).session(model=object())  # type: ignore[arg-type]


# -- the skill tool follows each session's soul ------------------------------------


def add_skill(home: Path, name: str) -> None:
    folder = home / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Do {name} things.\n---\nSteps for {name}.\n",
        encoding="utf-8",
    )


def skill_enum(session: Session) -> list[str] | None:
    """The names the session's skill tool accepts, or None when it has no skill tool."""
    tool = next((tool for tool in session.tools if tool.name == "skill"), None)
    return None if tool is None else tool.input_schema["properties"]["name"]["enum"]


async def test_a_skill_added_after_from_dir_is_listed_and_loadable(make_home: MakeHome) -> None:
    home = make_home(skills=("cite",))
    model = ScriptedModel([ToolCall("skill", {"name": "draft"}), "done"])
    agent = from_dir(home, model=model)
    before = agent.session()
    add_skill(home, "draft")
    session = agent.session()
    assert "- draft: Do draft things." in session.system_prompt
    assert skill_enum(session) == ["cite", "draft"]
    assert [tool.name for tool in session.tools] == ["skill", "memory"]
    assert await session.send("draft something") == "done"
    result = session.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert (result.is_error, result.output) == (False, "Steps for draft.")
    # `uses` is what a session started now would offer; a running session keeps its tools
    # (the session saved its conversation, so there is something to recall now).
    assert agent.uses.names == ("skill", "recall", "memory")
    assert agent.uses.tools[0].input_schema["properties"]["name"]["enum"] == ["cite", "draft"]
    assert skill_enum(before) == ["cite"]
    assert "draft" not in before.system_prompt


def test_a_home_without_skills_gets_the_skill_tool_when_one_appears(make_home: MakeHome) -> None:
    home = make_home()
    agent = from_dir(home, tools=[echo])
    assert agent.uses.names == ("memory", "echo")
    without = agent.session()
    assert "`skill` tool" not in without.system_prompt
    assert skill_enum(without) is None
    add_skill(home, "cite")
    session = agent.session()
    assert "call the `skill` tool" in session.system_prompt
    assert [tool.name for tool in session.tools] == ["skill", "memory", "echo"]
    assert skill_enum(session) == ["cite"]
    assert agent.uses.names == ("skill", "memory", "echo")
    assert skill_enum(without) is None


def test_removed_skills_leave_the_prompt_and_the_tool(make_home: MakeHome) -> None:
    home = make_home(skills=("cite", "draft"))
    agent = from_dir(home)
    assert skill_enum(agent.session()) == ["cite", "draft"]
    shutil.rmtree(home / "skills" / "draft")
    session = agent.session()
    assert "draft" not in session.system_prompt
    assert skill_enum(session) == ["cite"]
    shutil.rmtree(home / "skills")
    session = agent.session()
    assert "`skill` tool" not in session.system_prompt
    assert [tool.name for tool in session.tools] == ["memory"]


def test_unchanged_skills_reuse_the_wired_tool(make_home: MakeHome) -> None:
    agent = from_dir(make_home(skills=("cite",)))
    assert agent.session().tools[0] is agent.uses.tools[0]


def test_a_tool_of_yours_named_skill_clashes_once_skills_appear(make_home: MakeHome) -> None:
    home = make_home()

    @define_tool(name="skill")
    def my_skill(name: str) -> str:
        """My own skill tool."""
        return name

    agent = from_dir(home, tools=[my_skill])
    assert agent.session().tools[-1] is my_skill
    add_skill(home, "cite")
    with pytest.raises(AgentError, match=r"2 tools are named 'skill': builtin 'skill' .* and "):
        agent.session()


def test_a_hand_built_agent_keeps_exactly_its_tools(make_home: MakeHome) -> None:
    home = make_home()
    agent = Agent(home, tools=[echo])
    add_skill(home, "cite")
    assert agent.session().tools == (echo,)


# -- each session reads the home once, whole (SPEC §6) ----------------------------------


def set_identity(home: Path, frontmatter: str) -> None:
    (home / "IDENTITY.md").write_text(f"---\nname: Ada\n{frontmatter}---\nHi.\n", encoding="utf-8")


async def test_a_session_follows_read_only_and_limits_set_since_from_dir(
    make_home: MakeHome,
) -> None:
    home = make_home()
    agent = from_dir(home)
    first = agent.session()
    set_identity(home, "memory_limits: {self: 40}\n")
    second = agent.session()
    note = "the staging cluster is called kestrel-2 now"  # 46 characters as an entry
    [memory] = [tool for tool in second.tools if tool.name == "memory"]
    result = await memory.execute({"action": "add", "text": note})
    assert result.is_error
    assert result.output.startswith("full: this note is 46 characters; the limit is 40")
    # The first session keeps the limit it began with.
    [old_memory] = [tool for tool in first.tools if tool.name == "memory"]
    assert not (await old_memory.execute({"action": "add", "text": note})).is_error

    set_identity(home, "read_only: true\nmemory_limits: {self: 40}\n")
    third = agent.session()
    # No memory tool; the recall tool, since the memory history has a change to find.
    assert [tool.name for tool in third.tools] == ["recall"]
    assert agent.uses.names == ("recall",)
    assert "memory" in [tool.name for tool in second.tools]  # a running session keeps it


def test_from_dir_arguments_win_over_the_file_at_every_session(make_home: MakeHome) -> None:
    home = make_home()
    forced = from_dir(home, memory=True)
    never = from_dir(home, memory=False, tools=[echo])
    set_identity(home, "read_only: true\n")
    assert forced.session().tools[0].name == "memory"
    assert [tool.name for tool in never.session().tools] == ["echo"]
    set_identity(home, "tools: [now]\n")
    assert [tool.name for tool in forced.session().tools] == ["now", "memory"]
    assert never.uses.names == ("now", "echo")


def test_builtins_follow_the_file_and_a_clash_names_both(make_home: MakeHome) -> None:
    home = make_home()

    @define_tool(name="now")
    def my_now() -> str:
        """My own clock."""
        return "noon"

    agent = from_dir(home, tools=[my_now])
    assert agent.session().tools[-1] is my_now
    set_identity(home, "tools: [now]\n")
    with pytest.raises(
        AgentError, match=r"2 tools are named 'now': builtin 'now' .* and tools\[0\]"
    ):
        agent.session()
    set_identity(home, "tools: [nope]\n")
    with pytest.raises(HomeError, match=r"key 'tools': unknown builtin tool 'nope'"):
        agent.session()


def test_an_unchanged_home_reuses_the_memory_tool(make_home: MakeHome) -> None:
    home = make_home()
    agent = from_dir(home)
    first, second = agent.session(), agent.session()
    assert first.tools[0] is second.tools[0]
    set_identity(home, "memory_limits: {self: 500}\n")
    assert agent.session().tools[0] is not first.tools[0]
