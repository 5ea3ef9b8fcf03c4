"""Home: paths, loaders that never create anything, the skills folder."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from toolnexus.agents import Home
from toolnexus.errors import HomeError

CopyHome = Callable[[str], Path]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_paths(tmp_path: Path) -> None:
    home = Home(tmp_path)
    assert home.path == tmp_path
    assert home.identity_path == tmp_path / "IDENTITY.md"
    assert home.memory_path == tmp_path / "MEMORY.md"
    assert home.user_path == tmp_path / "USER.md"
    assert home.skills_dir == tmp_path / "skills"
    assert home.template_path == tmp_path / "soul.md.j2"


def test_relative_dir_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert Home("ada").path == tmp_path / "ada"
    assert Home("ada") == Home(tmp_path / "ada")


def test_home_is_immutable(tmp_path: Path) -> None:
    home = Home(tmp_path)
    with pytest.raises(AttributeError):
        home.path = tmp_path / "x"  # type: ignore[misc]


def test_loaders_never_create_anything(tmp_path: Path) -> None:
    write(tmp_path / "IDENTITY.md", "---\nname: Ada\n---\n")
    home = Home(tmp_path)
    assert home.memory().entries == ()
    assert home.user().entries == ()
    assert home.skills() == ()
    home.compose()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["IDENTITY.md"]


def test_missing_home_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(HomeError) as info:
        Home(missing).compose()
    assert str(info.value) == (
        f"{missing}: does not exist: a home is a folder with an IDENTITY.md in it"
    )
    assert not missing.exists()


def test_loads_sample_home(copy_home: CopyHome) -> None:
    home = Home(copy_home("basic"))
    assert home.identity().config.name == "Ada"
    assert home.memory().entries == (
        "The team wiki lives at wiki.example.org.",
        "Prefer primary sources\nover summaries.",
    )
    assert home.user().entries == (
        "Name: Sam. Works on compilers.",
        "Likes answers as bullet points.",
    )
    assert [s.name for s in home.skills()] == ["cite-sources", "summarize-paper"]


# -- identity errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            None,
            "{p}: missing: every home needs an IDENTITY.md with at least `name:` in its "
            "frontmatter",
            id="missing",
        ),
        pytest.param(
            "You are Ada.\n",
            "{p}:1: no YAML frontmatter: the file must start with a '---' line, then YAML "
            "keys, then a closing '---' line",
            id="no-frontmatter",
        ),
        pytest.param(
            "---\nname: Ada\n",
            "{p}:1: frontmatter is never closed: add a '---' line after the YAML keys",
            id="unclosed",
        ),
        pytest.param(
            "---\nname: [Ada\n---\n",
            "{p}:3: invalid YAML in frontmatter: ",
            id="bad-yaml",
        ),
        pytest.param(
            "---\nname: Ada\nmood: happy\n---\n",
            "{p}:3: unknown key 'mood' (allowed: name, description, read_only, "
            "memory_limits, memory_review, tools, model, sessions, scanner, store, store_key)",
            id="unknown-key",
        ),
        pytest.param(
            "---\ndescription: no name\n---\n",
            "{p}:2: missing required key 'name'",
            id="missing-name",
        ),
        pytest.param(
            "---\nname: Ada\nread_only: maybe\n---\n",
            "{p}:3: key 'read_only': Input should be a valid boolean, unable to interpret input",
            id="bad-type",
        ),
        pytest.param(
            "---\nname: Ada\nmemory_limits: {self: 0}\n---\n",
            "{p}:3: key 'memory_limits.self': Input should be greater than 0",
            id="bad-limit",
        ),
    ],
)
def test_identity_errors(tmp_path: Path, text: str | None, expected: str) -> None:
    path = tmp_path / "IDENTITY.md"
    if text is not None:
        write(path, text)
    with pytest.raises(HomeError) as info:
        Home(tmp_path).compose()
    (problem,) = info.value.problems
    assert problem.startswith(expected.format(p=path))
    if not expected.endswith(": "):
        assert problem == expected.format(p=path)
    assert str(info.value) == problem


def test_identity_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_bytes(b"---\nname: \xff\n---\n")
    with pytest.raises(HomeError) as info:
        Home(tmp_path).compose()
    assert str(info.value) == (
        f"{tmp_path / 'IDENTITY.md'}: not UTF-8 text (byte 10): save it as UTF-8"
    )


def test_memory_file_that_is_a_folder(tmp_path: Path) -> None:
    write(tmp_path / "IDENTITY.md", "---\nname: Ada\n---\n")
    (tmp_path / "MEMORY.md").mkdir()
    with pytest.raises(HomeError) as info:
        Home(tmp_path).compose()
    assert str(info.value) == f"{tmp_path / 'MEMORY.md'}: is a folder: it must be a file"


# -- the skills folder ---------------------------------------------------------------------


def skill(home: Path, name: str, description: str = "d") -> None:
    write(
        home / "skills" / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\n"
    )


def test_skills_sorted_and_hidden_entries_ignored(tmp_path: Path) -> None:
    for name in ("zeta", "alpha", "mid-1"):
        skill(tmp_path, name)
    write(tmp_path / "skills/.git/HEAD", "ref")
    write(tmp_path / "skills/.DS_Store", "")
    scan = Home(tmp_path).scan_skills()
    assert [s.name for s in scan.skills] == ["alpha", "mid-1", "zeta"]
    assert scan.problems == ()
    assert scan.warnings == ()


def test_stray_file_in_skills_is_a_warning(tmp_path: Path) -> None:
    skill(tmp_path, "alpha")
    write(tmp_path / "skills/README.md", "About these skills.")
    scan = Home(tmp_path).scan_skills()
    assert [s.name for s in scan.skills] == ["alpha"]
    assert scan.problems == ()
    assert scan.warnings == (
        f"{tmp_path / 'skills/README.md'}: ignored: not a skill folder "
        "(a skill is a folder skills/<name>/ with a SKILL.md)",
    )


@pytest.mark.parametrize(
    ("files", "hint"),
    [
        pytest.param({}, "add one with `name:` and `description:` frontmatter", id="empty"),
        pytest.param(
            {"notes.md": "x"},
            "add one with `name:` and `description:` frontmatter",
            id="other-files",
        ),
        pytest.param({"skill.md": "x"}, "found skill.md: rename it to SKILL.md", id="wrong-case"),
    ],
)
def test_folder_without_skill_md_is_a_problem(
    tmp_path: Path, files: dict[str, str], hint: str
) -> None:
    folder = tmp_path / "skills/lost"
    folder.mkdir(parents=True)
    for name, text in files.items():
        write(folder / name, text)
    if files.get("skill.md") and (folder / "SKILL.md").exists():
        pytest.skip("case-insensitive file system")
    expected = f"{folder}: no SKILL.md: every skill folder needs one ({hint})"
    assert Home(tmp_path).scan_skills().problems == (expected,)
    with pytest.raises(HomeError) as info:
        Home(tmp_path).skills()
    assert str(info.value) == expected
    assert Home(tmp_path).skills(strict=False) == ()


def test_skills_path_that_is_a_file(tmp_path: Path) -> None:
    write(tmp_path / "skills", "not a folder")
    assert Home(tmp_path).scan_skills().problems == (
        f"{tmp_path / 'skills'}: is not a folder: skills live in skills/<name>/SKILL.md",
    )


def test_bad_skills_all_listed(copy_home: CopyHome) -> None:
    home = copy_home("bad-skills")
    with pytest.raises(HomeError) as info:
        Home(home).skills()
    naming = (
        "breaks the naming rule: lowercase letters, digits and single hyphens, "
        "not starting or ending with a hyphen"
    )
    assert info.value.problems == (
        f"{home}/skills/Bad_Name/SKILL.md:2: name 'Bad_Name' {naming}",
        f"{home}/skills/mismatch/SKILL.md:2: name 'other-name' differs from its folder's "
        "name 'mismatch': make them equal",
        f"{home}/skills/no-skill-file: no SKILL.md: every skill folder needs one "
        "(add one with `name:` and `description:` frontmatter)",
    )
    assert str(info.value).startswith("3 problems in the home\n  - ")
    assert [s.name for s in Home(home).skills(strict=False)] == ["good"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_named_pipe_in_the_home_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    write(tmp_path / "IDENTITY.md", "---\nname: Ada\n---\n")
    (tmp_path / "skills/piped").mkdir(parents=True)
    fifo = tmp_path / "skills/piped/SKILL.md"
    os.mkfifo(fifo)
    # Should the read block on the pipe, a writer coming and going releases it.
    release = threading.Timer(5, lambda: os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)))
    release.start()
    try:
        problems = Home(tmp_path).scan_skills().problems
    finally:
        release.cancel()
    assert problems == (
        f"{fifo}: is not a regular file (a pipe, device or socket): make it a file",
    )
