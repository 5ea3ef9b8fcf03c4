"""Skills: SKILL.md validation (every rule), other clients' formats, and the `skill` tool."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from toolnexus.agents import Home, skill_tool
from toolnexus.agents import _skills as skills_module
from toolnexus.errors import HomeError
from toolnexus.home import Skill, SkillFrontmatter, parse_skill

P = Path("skills/demo/SKILL.md")


def skill_text(*lines: str, body: str = "Body.\n") -> str:
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n" + body


def problems_of(text: str, path: Path = P) -> tuple[str, ...]:
    with pytest.raises(HomeError) as info:
        parse_skill(text, path=path)
    return info.value.problems


# -- parsing ---------------------------------------------------------------------------


def test_minimal_skill() -> None:
    skill, warnings = parse_skill(
        skill_text("name: demo", "description: Does a demo.", body="\n# Demo\n\nSteps.\n\n"),
        path=P,
    )
    assert warnings == ()
    assert skill.name == "demo"
    assert skill.description == "Does a demo."
    assert skill.body == "# Demo\n\nSteps."
    assert skill.folder == Path("skills/demo")
    assert skill.meta == SkillFrontmatter(name="demo", description="Does a demo.")


def test_all_spec_fields() -> None:
    skill, warnings = parse_skill(
        skill_text(
            "name: demo",
            "description: Does a demo.",
            "license: MIT",
            "compatibility: Needs git.",
            "metadata: {author: me, version: '1.0'}",
            "allowed-tools: Read Bash(git:*)",
        ),
        path=P,
    )
    assert warnings == ()
    assert skill.meta.license == "MIT"
    assert skill.meta.compatibility == "Needs git."
    assert skill.meta.metadata == {"author": "me", "version": "1.0"}
    assert skill.meta.allowed_tools == "Read Bash(git:*)"
    assert skill.meta.model_extra == {}


def test_skill_from_another_client_loads_unchanged() -> None:
    lines = (
        "name: demo",
        "description: Does a demo.",
        "allowed-tools: [Read, Bash]",
        "when_to_use: When a demo is asked for.",
        "user-invocable: true",
        "argument-hint: '[file]'",
        "disable-model-invocation: false",
        "model: some-model",
    )
    skill, warnings = parse_skill(skill_text(*lines), path=P)
    assert warnings == ()
    assert skill.meta.allowed_tools == ["Read", "Bash"]
    assert skill.meta.model_extra == {
        "when_to_use": "When a demo is asked for.",
        "user-invocable": True,
        "argument-hint": "[file]",
        "disable-model-invocation": False,
        "model": "some-model",
    }
    # Round trip: every key comes back exactly as written.
    assert skill.meta.model_dump(by_alias=True, exclude_unset=True) == {
        "name": "demo",
        "description": "Does a demo.",
        "allowed-tools": ["Read", "Bash"],
        "when_to_use": "When a demo is asked for.",
        "user-invocable": True,
        "argument-hint": "[file]",
        "disable-model-invocation": False,
        "model": "some-model",
    }


def test_sample_home_with_foreign_skills(copy_home: Callable[[str], Path]) -> None:
    skills = Home(copy_home("foreign-skills")).skills()
    assert [s.name for s in skills] == ["pdf-tools", "web-search"]
    pdf, web = skills
    assert pdf.meta.allowed_tools == ["Read", "Bash"]
    assert pdf.meta.metadata == {"author": "example-org", "version": "1.2"}
    assert pdf.meta.model_extra == {
        "when_to_use": "When a PDF is attached to the conversation.",
        "user-invocable": True,
        "argument-hint": "[file]",
    }
    assert web.meta.allowed_tools == "WebSearch WebFetch"
    assert web.meta.model_extra == {"disable-model-invocation": False}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("a", id="one-char"),
        pytest.param("x" * 64, id="64-chars"),
        pytest.param("pdf-2-text", id="digits-and-hyphens"),
        pytest.param("123", id="digits-only"),
    ],
)
def test_valid_names(name: str) -> None:
    skill, _ = parse_skill(
        skill_text(f"name: '{name}'", "description: d"), path=Path(f"skills/{name}/SKILL.md")
    )
    assert skill.name == name


NAMING = (
    "breaks the naming rule: lowercase letters, digits and single hyphens, "
    "not starting or ending with a hyphen"
)


@pytest.mark.parametrize(
    ("lines", "folder", "expected"),
    [
        pytest.param(
            ("description: d",),
            "demo",
            ["skills/demo/SKILL.md:2: missing required key 'name' (set it to the folder's name)"],
            id="name-missing",
        ),
        pytest.param(
            ("name: ''", "description: d"),
            "demo",
            ["skills/demo/SKILL.md:2: key 'name' is empty (set it to the folder's name)"],
            id="name-empty",
        ),
        pytest.param(
            (f"name: {'x' * 65}", "description: d"),
            "x" * 65,
            [f"skills/{'x' * 65}/SKILL.md:2: name is 65 characters, the limit is 64"],
            id="name-too-long",
        ),
        pytest.param(
            ('name: "abc\\n"', "description: d"),
            "abc\n",
            [f"skills/abc\n/SKILL.md:2: name 'abc\\n' {NAMING}"],
            id="name-trailing-newline",
        ),
        pytest.param(
            ("name: Demo", "description: d"),
            "Demo",
            [f"skills/Demo/SKILL.md:2: name 'Demo' {NAMING}"],
            id="name-uppercase",
        ),
        pytest.param(
            ("name: my_skill", "description: d"),
            "my_skill",
            [f"skills/my_skill/SKILL.md:2: name 'my_skill' {NAMING}"],
            id="name-underscore",
        ),
        pytest.param(
            ("name: -demo", "description: d"),
            "-demo",
            [f"skills/-demo/SKILL.md:2: name '-demo' {NAMING}"],
            id="name-leading-hyphen",
        ),
        pytest.param(
            ("name: demo-", "description: d"),
            "demo-",
            [f"skills/demo-/SKILL.md:2: name 'demo-' {NAMING}"],
            id="name-trailing-hyphen",
        ),
        pytest.param(
            ("name: de--mo", "description: d"),
            "de--mo",
            [f"skills/de--mo/SKILL.md:2: name 'de--mo' {NAMING}"],
            id="name-double-hyphen",
        ),
        pytest.param(
            ("name: other", "description: d"),
            "demo",
            [
                "skills/demo/SKILL.md:2: name 'other' differs from its folder's name 'demo': "
                "make them equal"
            ],
            id="name-differs-from-folder",
        ),
        pytest.param(
            ("name: 12", "description: d"),
            "demo",
            ["skills/demo/SKILL.md:2: key 'name' must be a string"],
            id="name-not-a-string",
        ),
        pytest.param(
            ("name: demo",),
            "demo",
            [
                "skills/demo/SKILL.md:2: missing required key 'description' "
                "(say what the skill does and when to use it)"
            ],
            id="description-missing",
        ),
        pytest.param(
            ("name: demo", "description: '  '"),
            "demo",
            ["skills/demo/SKILL.md:3: key 'description' is empty"],
            id="description-blank",
        ),
        pytest.param(
            ("name: demo", "description: [a, b]"),
            "demo",
            ["skills/demo/SKILL.md:3: key 'description' must be a string"],
            id="description-not-a-string",
        ),
        pytest.param(
            ("name: demo", "description: d", "license: 3"),
            "demo",
            ["skills/demo/SKILL.md:4: key 'license' must be a string"],
            id="license-not-a-string",
        ),
        pytest.param(
            ("name: demo", "description: d", "compatibility: ''"),
            "demo",
            ["skills/demo/SKILL.md:4: key 'compatibility' is empty (remove it)"],
            id="compatibility-empty",
        ),
        pytest.param(
            ("name: demo", "description: d", "metadata: {version: 1.0}"),
            "demo",
            [
                "skills/demo/SKILL.md:4: key 'metadata.version' must map strings to strings "
                "(quote values such as '1.0')"
            ],
            id="metadata-value-not-a-string",
        ),
        pytest.param(
            ("name: demo", "description: d", "metadata: [a]"),
            "demo",
            [
                "skills/demo/SKILL.md:4: key 'metadata' must map strings to strings "
                "(quote values such as '1.0')"
            ],
            id="metadata-not-a-map",
        ),
        pytest.param(
            ("name: demo", "description: d", "allowed-tools: 3"),
            "demo",
            [
                "skills/demo/SKILL.md:4: key 'allowed-tools' must be a space-separated string "
                "of tool names, or a list of them"
            ],
            id="allowed-tools-wrong-type",
        ),
        pytest.param(
            ("name: Bad_Name",),
            "demo",
            [
                f"skills/demo/SKILL.md:2: name 'Bad_Name' {NAMING}",
                "skills/demo/SKILL.md:2: name 'Bad_Name' differs from its folder's name "
                "'demo': make them equal",
                "skills/demo/SKILL.md:2: missing required key 'description' "
                "(say what the skill does and when to use it)",
            ],
            id="every-problem-at-once",
        ),
    ],
)
def test_rule_breaks(lines: tuple[str, ...], folder: str, expected: list[str]) -> None:
    assert list(problems_of(skill_text(*lines), Path(f"skills/{folder}/SKILL.md"))) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "# Demo\n",
            "skills/demo/SKILL.md:1: no YAML frontmatter: the file must start with a '---' "
            "line, then YAML keys, then a closing '---' line",
            id="no-frontmatter",
        ),
        pytest.param(
            "---\nname: demo\n",
            "skills/demo/SKILL.md:1: frontmatter is never closed: add a '---' line after "
            "the YAML keys",
            id="unclosed",
        ),
        pytest.param(
            "---\n- a list\n---\n",
            "skills/demo/SKILL.md:2: frontmatter must be a YAML mapping of keys, got list",
            id="not-a-mapping",
        ),
    ],
)
def test_unparseable_frontmatter(text: str, expected: str) -> None:
    assert problems_of(text) == (expected,)


def test_bad_yaml_names_file_and_line() -> None:
    # The wording after the colon comes from the YAML library (C or pure-Python loader).
    (problem,) = problems_of("---\nname: demo\ndescription: [oops\n---\n")
    assert problem.startswith("skills/demo/SKILL.md:4: invalid YAML in frontmatter: ")


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(("description: " + "d" * 1024,), (), id="description-1024-ok"),
        pytest.param(
            ("description: " + "d" * 1025,),
            (
                "skills/demo/SKILL.md:3: description is 1025 characters, over the Agent Skills "
                "limit of 1024: it loads, but shorten it",
            ),
            id="description-1025-warns",
        ),
        pytest.param(("description: d", "compatibility: " + "c" * 500), (), id="compat-500-ok"),
        pytest.param(
            ("description: d", "compatibility: " + "c" * 501),
            (
                "skills/demo/SKILL.md:4: compatibility is 501 characters, over the Agent Skills "
                "limit of 500: it loads, but shorten it",
            ),
            id="compat-501-warns",
        ),
    ],
)
def test_soft_limits_warn(lines: tuple[str, ...], expected: tuple[str, ...]) -> None:
    skill, warnings = parse_skill(skill_text("name: demo", *lines), path=P)
    assert isinstance(skill, Skill)
    assert warnings == expected


# -- the skill tool --------------------------------------------------------------------


@pytest.fixture
def home(copy_home: Callable[[str], Path]) -> Path:
    return copy_home("basic")


def test_tool_definition(home: Path) -> None:
    tool = skill_tool(Home(home))
    assert tool.name == "skill"
    assert tool.source == "native"
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "name": {
                "description": "The skill to load.",
                "enum": ["cite-sources", "summarize-paper"],
                "type": "string",
            },
            "path": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Optional: a file inside the skill's folder, relative to it "
                "(for example references/guide.md). Omit to load SKILL.md.",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    assert tool.description.endswith("Skills:\n- cite-sources\n- summarize-paper")


async def test_loads_body_and_lists_files(home: Path) -> None:
    result = await skill_tool(home).execute({"name": "summarize-paper"})
    assert not result.is_error
    assert result.output == (
        "# Summarizing a paper\n\n"
        "Read the abstract and the conclusion first. Then follow\n"
        "references/checklist.md.\n\n"
        "Files in this skill (load one with the skill tool, name='summarize-paper' "
        "and path=...):\n"
        "- references/checklist.md"
    )
    plain = await skill_tool(home).execute({"name": "cite-sources"})
    assert plain.output == (
        "# Citing sources\n\n"
        "1. Give the author, title, year and a link.\n"
        "2. Quote sparingly; paraphrase and cite."
    )


async def test_loads_a_file_by_relative_path(home: Path) -> None:
    tool = skill_tool(home)
    result = await tool.execute({"name": "summarize-paper", "path": "references/checklist.md"})
    expected = (home / "skills/summarize-paper/references/checklist.md").read_text("utf-8")
    assert result.output == expected
    assert not result.is_error


async def test_reads_from_disk_on_each_call(home: Path) -> None:
    tool = skill_tool(home)
    (home / "skills/cite-sources/SKILL.md").write_text(
        "---\nname: cite-sources\ndescription: d\n---\nNew body.\n", encoding="utf-8"
    )
    assert (await tool.execute({"name": "cite-sources"})).output == "New body."


async def test_unknown_and_removed_skills(home: Path) -> None:
    tool = skill_tool(home)
    unknown = await tool.execute({"name": "nope"})
    assert unknown.is_error
    assert unknown.output.startswith("invalid arguments: name: ")
    assert "'cite-sources' or 'summarize-paper'" in unknown.output
    (home / "skills/cite-sources/SKILL.md").unlink()
    gone = await tool.execute({"name": "cite-sources"})
    assert (gone.output, gone.is_error) == (
        "skill 'cite-sources' is gone: its SKILL.md was removed",
        True,
    )


def _link(link: Path, target: Path) -> None:
    try:
        os.symlink(target, link)
    except OSError as exc:  # pragma: no cover - platforms without symlinks
        pytest.skip(f"symlinks unavailable: {exc}")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(
            "../cite-sources/SKILL.md",
            "path '../cite-sources/SKILL.md' leaves the skill's folder ('..' is not allowed)",
            id="dot-dot",
        ),
        pytest.param(
            "references/../../../IDENTITY.md",
            "path 'references/../../../IDENTITY.md' leaves the skill's folder "
            "('..' is not allowed)",
            id="dot-dot-inside",
        ),
        pytest.param(
            "..\\..\\IDENTITY.md",
            "path '..\\\\..\\\\IDENTITY.md' leaves the skill's folder ('..' is not allowed)",
            id="dot-dot-backslash",
        ),
        pytest.param(
            "/etc/passwd",
            "path '/etc/passwd' is absolute: give a path relative to the skill's folder",
            id="absolute",
        ),
        pytest.param(
            "C:\\Windows\\win.ini",
            "path 'C:\\\\Windows\\\\win.ini' is absolute: give a path relative to the "
            "skill's folder",
            id="absolute-windows",
        ),
        pytest.param(
            "",
            "path is empty: omit it to load SKILL.md, or name a file in the skill",
            id="empty",
        ),
        pytest.param(
            "references",
            "path 'references' is a directory: name a file inside it",
            id="directory",
        ),
        pytest.param(
            "references/missing.md",
            "no file 'references/missing.md' in skill 'summarize-paper'",
            id="missing",
        ),
        pytest.param(
            "out-file",
            "path 'out-file' points outside the skill's folder (through a symlink)",
            id="symlink-file-out",
        ),
        pytest.param(
            "out-dir/IDENTITY.md",
            "path 'out-dir/IDENTITY.md' points outside the skill's folder (through a symlink)",
            id="symlink-dir-out",
        ),
        pytest.param(
            "binary.bin",
            "path 'binary.bin' is not a UTF-8 text file",
            id="not-text",
        ),
        pytest.param(
            "references/a\x00b.md",
            "path 'references/a\\x00b.md' contains a NUL byte: name a file in the skill's folder",
            id="nul-byte",
        ),
    ],
)
async def test_refused_paths(home: Path, path: str, expected: str) -> None:
    folder = home / "skills/summarize-paper"
    _link(folder / "out-file", home / "IDENTITY.md")
    _link(folder / "out-dir", home)
    (folder / "binary.bin").write_bytes(b"\xff\xfe\x00")
    result = await skill_tool(home).execute({"name": "summarize-paper", "path": path})
    assert (result.output, result.is_error) == (expected, True)
    assert result.exception is None


async def test_symlink_inside_the_folder_is_served_and_listed(home: Path) -> None:
    folder = home / "skills/summarize-paper"
    _link(folder / "alias.md", folder / "references/checklist.md")
    _link(folder / "escape.md", home / "IDENTITY.md")
    tool = skill_tool(home)
    result = await tool.execute({"name": "summarize-paper", "path": "alias.md"})
    assert result.output.startswith("# Checklist")
    listing = (await tool.execute({"name": "summarize-paper"})).output
    assert listing.endswith("- alias.md\n- references/checklist.md")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
@pytest.mark.parametrize("path", [pytest.param("pipe", id="file"), pytest.param(None, id="body")])
async def test_named_pipe_is_refused_not_read(home: Path, path: str | None) -> None:
    # Reading a FIFO blocks until a writer comes: the tool must refuse it, not hang.
    folder = home / "skills/summarize-paper"
    fifo = folder / ("pipe" if path else "SKILL.md")
    tool = skill_tool(home)
    if path is None:
        fifo.unlink()
    os.mkfifo(fifo)
    try:
        result = await asyncio.wait_for(
            tool.execute({"name": "summarize-paper", "path": path}), timeout=5
        )
    finally:
        # Should the tool be blocked on the pipe, a writer coming and going releases it.
        with contextlib.suppress(OSError):  # no reader waiting: nothing to release
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    expected = (
        "path 'pipe' in skill 'summarize-paper' is not a regular file (a pipe, device or socket)"
        if path
        else "skill 'summarize-paper' cannot be loaded: its SKILL.md is not a regular file"
    )
    assert (result.output, result.is_error) == (expected, True)


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skills_module, "MAX_FILE_CHARS", 10)
    monkeypatch.setattr(skills_module, "MAX_FILE_BYTES", 10 * 4 + 4)


@pytest.mark.usefixtures("small_limit")
@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            # Invalid bytes past the read limit are never read, let alone decoded.
            b"x" * 200 + b"\xff",
            "xxxxxxxxxx\n\n[truncated: the file has 201 bytes; shown its first 10 characters]",
            id="reads-a-bounded-prefix",
        ),
        pytest.param(
            # The 44-byte limit falls inside the 22nd "é" (2 bytes): not a decoding error.
            "a" + "é" * 100,
            "aééééééééé\n\n[truncated: the file has 201 bytes; shown its first 10 characters]",
            id="cut-inside-a-character",
        ),
        pytest.param("é" * 10, "é" * 10, id="at-the-limit"),
        pytest.param(b"x" * 20 + b"\xc3", "path 'big.txt' is not a UTF-8 text file", id="bad-end"),
    ],
)
async def test_large_files_are_read_in_part(home: Path, data: str | bytes, expected: str) -> None:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    (home / "skills/summarize-paper/big.txt").write_bytes(raw)
    result = await skill_tool(home).execute({"name": "summarize-paper", "path": "big.txt"})
    assert result.output == expected


def test_no_skills_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text("---\nname: A\n---\n", encoding="utf-8")
    with pytest.raises(HomeError) as info:
        skill_tool(tmp_path)
    assert str(info.value) == f"{tmp_path / 'skills'}: no skills: the skill tool needs at least one"


def test_tool_is_strict_by_default(copy_home: Callable[[str], Path]) -> None:
    home = copy_home("bad-skills")
    with pytest.raises(HomeError):
        skill_tool(home)
    tool = skill_tool(home, strict=False)
    assert tool.input_schema["properties"]["name"]["enum"] == ["good"]
