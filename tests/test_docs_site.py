"""Keep the documentation site honest: fences that render, pages that keep their shape.

The code in the pages runs under pytest-markdown-docs (see pyproject); these
tests check what running it cannot: that fence options use the syntax Material
renders, that every reference page keeps the structure readers rely on, that the
CLI page covers every verb and option, and that no page leaks a local path.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolnexus.cli._main import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>`{3,}|~{3,})(?P<info>[^\n`]*)$", re.MULTILINE)
PAGE_PARAMS = [pytest.param(p, id=p.relative_to(DOCS).as_posix()) for p in PAGES]
REFERENCE = [
    "memory_tool",
    "compose_soul",
    "from_dir",
    "define_tool",
    "home",
    "soul",
    "agent",
    "session",
]


def _fence_infos(text: str) -> list[str]:
    """The info strings of the opening fences in `text` (closing fences skipped)."""
    infos, open_ticks = [], None
    for match in FENCE.finditer(text):
        ticks, info = match["ticks"], match["info"].strip()
        if open_ticks is None:
            infos.append(info)
            open_ticks = ticks
        elif ticks.startswith(open_ticks) and not info:
            open_ticks = None
    return infos


def test_pages_exist() -> None:
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    required = {
        "index.md",
        "getting-started.md",
        "tutorials/long-lived-persona.md",
        "tutorials/skills.md",
        "tutorials/tools-by-hand.md",
        "home-format.md",
        "cli.md",
        "security.md",
        "performance.md",
        "reference/api.md",
        *(f"reference/{name}.md" for name in REFERENCE),
    }
    assert required <= names


@pytest.mark.parametrize("page", PAGE_PARAMS)
def test_fence_options_use_the_brace_syntax(page: Path) -> None:
    """`python notest` breaks under superfences; `{.python notest}` renders and is skipped."""
    for info in _fence_infos(page.read_text(encoding="utf-8")):
        if " " in info:
            assert info.startswith("{."), info
            assert info.endswith("}"), info
        if info.startswith("{"):
            options = info.strip("{}").split()
            assert options[0] in (".python", ".text", ".sh")
            assert set(options[1:]) <= {"notest", "continuation"}, info


@pytest.mark.parametrize("name", REFERENCE)
def test_reference_pages_follow_the_seed_structure(name: str) -> None:
    text = (DOCS / "reference" / f"{name}.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings[:3] == ["When to use it", "Why this and not the alternative", "Examples"]
    assert headings[-1] == "See also"
    assert "Options" in headings or "Fields" in headings
    runnable = [info for info in _fence_infos(text) if info == "python"]
    assert len(runnable) >= 2, "a reference page needs runnable examples"


def test_memory_tool_page_carries_the_seed_examples() -> None:
    text = (DOCS / "reference" / "memory_tool.md").read_text(encoding="utf-8")
    for title in (
        "### 1. add — append an entry to MEMORY.md",
        "### 2. replace and remove — a missing substring is a loud error, never a silent no-op",
        '### 3. target: "user" writes USER.md instead of MEMORY.md',
    ):
        assert title in text
    assert 'assert missed.output == "not found: prefers metric units"' in text


def test_cli_page_covers_every_verb_and_option() -> None:
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    verbs = next(a for a in parser._actions if a.dest == "verb").choices
    assert verbs
    for verb, sub in verbs.items():
        assert f"## {verb}" in text, verb
        for action in sub._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert flag in text, f"{verb} {flag}"


@pytest.mark.parametrize("page", PAGE_PARAMS)
def test_no_local_paths(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for leak in (str(ROOT), "/home/", "/root/", "/Users/", "C:\\"):
        assert leak not in text, leak


PYTHON_BLOCK = re.compile(r"^```(python|\{\.python[^}]*\})\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", PAGE_PARAMS)
def test_examples_run_as_plain_scripts(page: Path) -> None:
    """No top-level `await`: every example runs as a script would (the sync forms,
    or `asyncio.run`), not only in a runner that allows awaiting outside a function."""
    for info, code in PYTHON_BLOCK.findall(page.read_text(encoding="utf-8")):
        if "notest" in info:
            continue
        try:
            compile(code, str(page), "exec")
        except SyntaxError as exc:
            raise AssertionError(f"{page.name}: {exc.msg} in:\n{code[:300]}") from None


def test_wide_shell_sessions_wrap_instead_of_being_cut_off() -> None:
    config = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")
    assert "stylesheets/extra.css" in config
    css = (DOCS / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert "white-space: pre-wrap" in css
