"""The example homes in personas_example/: each composes cleanly and exactly as reviewed.

A golden copy of each soul lives in tests/golden/<name>.soul.md. Any change to
what the persona's model would see (the home's files, the soul template, the
composer) shows up here as a diff to review. To accept a reviewed change, run
with TOOLNEXUS_UPDATE_GOLDEN=1: the goldens are rewritten and the test still
fails once, so an update can never pass unnoticed; rerun without the variable.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from toolnexus.agents import Home, compose_soul
from toolnexus.home import parse_skill
from toolnexus.memory import parse_memory

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "personas_example"
GOLDEN = Path(__file__).resolve().parent / "golden"
PERSONAS = ("language-tutor", "research-assistant", "sre-oncall")

CopyHome = Callable[[Path], Path]


def test_every_example_home_is_covered() -> None:
    """A new example home must get a golden soul (and a place in PERSONAS)."""
    homes = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())
    assert tuple(homes) == PERSONAS


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in PERSONAS])
def test_soul_matches_golden(name: str, copy_home: CopyHome) -> None:
    home = copy_home(EXAMPLES / name)
    soul = compose_soul(home, strict=True)

    assert soul.warnings == ()
    assert soul.withheld == ()
    golden = GOLDEN / f"{name}.soul.md"
    if os.environ.get("TOOLNEXUS_UPDATE_GOLDEN") == "1":
        golden.write_text(soul.text, encoding="utf-8", newline="\n")
        pytest.fail(f"rewrote {golden.name}: review `git diff tests/golden`, then rerun")
    assert soul.text == golden.read_text(encoding="utf-8")
    # Composing is deterministic: the same files give the same bytes.
    assert compose_soul(home).text == soul.text


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in PERSONAS])
def test_toolnexus_check_passes(name: str, copy_home: CopyHome) -> None:
    home = copy_home(EXAMPLES / name)
    proc = subprocess.run(
        [sys.executable, "-m", "toolnexus", "check", "--strict", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("ok (0 problems, 0 warnings)")


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in PERSONAS])
def test_memory_files_hold_entries_and_prose(name: str) -> None:
    """Each example shows the file format: a heading (prose) and several entries."""
    for file in ("MEMORY.md", "USER.md"):
        doc = parse_memory((EXAMPLES / name / file).read_text(encoding="utf-8"))
        assert len(doc.entries) >= 3, file
        assert doc.blocks[0].kind == "prose", file
        assert doc.blocks[0].text.startswith("### "), file


def _skills(name: str) -> dict[str, object]:
    found = {}
    for path in sorted((EXAMPLES / name / "skills").glob("*/SKILL.md")):
        skill, warnings = parse_skill(path.read_text(encoding="utf-8"), path=path)
        assert warnings == ()
        found[skill.name] = skill
    return found


def test_research_assistant_shows_the_skill_format() -> None:
    skills = _skills("research-assistant")
    assert len(skills) >= 3
    folder = EXAMPLES / "research-assistant" / "skills"
    assert (folder / "literature-search" / "references" / "query-patterns.md").is_file()
    meta = skills["citation-check"].meta  # type: ignore[attr-defined]
    assert meta.license == "MIT"
    assert meta.metadata == {"author": "toolnexus examples", "version": "1.2"}
    assert meta.allowed_tools == "memory skill"


def test_sre_notes_are_multi_line_entries() -> None:
    text = (EXAMPLES / "sre-oncall" / "MEMORY.md").read_text(encoding="utf-8")
    incidents = [e for e in parse_memory(text).entries if e[:4].isdigit()]
    assert len(incidents) >= 3
    assert all("\nCause:" in e and "Lesson:" in e for e in incidents)
    triage = EXAMPLES / "sre-oncall" / "skills" / "incident-triage"
    assert (triage / "references" / "runbook.md").is_file()


def test_sre_has_learned_a_skill_in_the_form_skill_manage_writes(copy_home: CopyHome) -> None:
    """The on-call persona keeps a procedure it worked out as a skill: the files are what
    its `skill_manage` tool writes, so writing them again from their parts changes nothing."""
    import asyncio

    from toolnexus.agents import from_dir, skill_manage_tool

    home = copy_home(EXAMPLES / "sre-oncall")
    assert "skill_manage" in [t.name for t in from_dir(home).uses.tools]
    folder = home / "skills" / "ledger-cache-failover"
    skill, _ = parse_skill(
        (folder / "SKILL.md").read_text(encoding="utf-8"), path=folder / "SKILL.md"
    )
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert sorted(map(str, before)) == ["SKILL.md", "references/after.md"]
    tool = skill_manage_tool(home, review="off")
    for args in (
        {"action": "remove", "name": skill.name},
        {
            "action": "create",
            "name": skill.name,
            "description": skill.description,
            "body": skill.body,
        },
        {
            "action": "write_file",
            "name": skill.name,
            "path": "references/after.md",
            "content": before[Path("references/after.md")].decode(),
        },
    ):
        result = asyncio.run(tool.execute(args))
        assert not result.is_error, result.output
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before


def test_tutor_is_writable_and_models_its_learner() -> None:
    home = EXAMPLES / "language-tutor"
    assert "read_only: false" in (home / "IDENTITY.md").read_text(encoding="utf-8")
    assert Home(home).identity().config.read_only is False
    entries = parse_memory((home / "USER.md").read_text(encoding="utf-8")).entries
    assert any(e.startswith("Level:") for e in entries)
    assert sum(e.startswith("Recurring mistake:") for e in entries) >= 2
    assert any(e.startswith("Goal:") for e in entries)
