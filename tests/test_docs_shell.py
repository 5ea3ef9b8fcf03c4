"""The docs' shell sessions, run as a reader would type them.

A ```console block holds `$ command` lines, each followed by what it prints
(stdout and stderr together). A page's commands run in order in one shell, so
`cd`, a virtual environment's activation and the files made stay for the next
block. An expected line `...` stands for any number of lines, and `...` inside a
line for any text; a command that fails shows `[exit N]` as its last line; a
command with no lines after it may print anything (pip, say), but must succeed.
getting-started.md runs in a copy of the repository with a fresh virtual
environment (its first block installs toolnexus); the other pages run in an empty
folder with this checkout's `toolnexus` on the PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "```console" in p.read_text(encoding="utf-8"))
_MARK = "@@toolnexus-docs-exit@@"


def sessions(page: Path) -> list[tuple[str, list[str], int]]:
    """Each `$ command` of the page's console blocks, with its expected lines and its line."""
    found: list[tuple[str, list[str], int]] = []
    inside = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("```"):
            inside = line.strip() == "```console" if not inside else False
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            found.append((line[2:], [], number))
        else:
            assert found, f"{page.name}:{number}: output before any command"
            found[-1][1].append(line)
    return found


def run(commands: list[str], cwd: Path, env: dict[str, str]) -> list[list[str]]:
    """Run `commands` in one bash, in order; each one's output lines (and its exit code)."""
    script = "exec 2>&1\n" + "".join(
        f"{command}\nprintf '\\n{_MARK}%s\\n' \"$?\"\n" for command in commands
    )
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    parts = done.stdout.split(f"\n{_MARK}")
    outputs = []
    for k, part in enumerate(parts[:-1]):
        text = part if k == 0 else part.split("\n", 1)[1] if "\n" in part else ""
        code = int(parts[k + 1].split("\n", 1)[0])
        lines = text.splitlines()
        if code:
            lines.append(f"[exit {code}]")
        outputs.append(lines)
    assert len(outputs) == len(commands), done.stdout[-2000:]
    return outputs


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` fits `expected`, where `...` alone is any lines and inside a line
    any text."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(map(re.escape, head.split("...")))
    return re.fullmatch(pattern, actual[0]) is not None and matches(rest, actual[1:])


def _copy_of_the_checkout(dest: Path) -> Path:
    ignore = shutil.ignore_patterns(
        ".venv", ".git", "site", "__pycache__", "*.egg-info", ".*_cache", ".ci-*", "build"
    )
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def _environment(*, fresh: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLNEXUS_", "OPENAI_"))}
    env.pop("VIRTUAL_ENV", None)
    here = str(Path(sys.executable).parent)
    parts = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != here]
    env["PATH"] = os.pathsep.join(parts if fresh else [here, *parts])
    env["COLUMNS"] = "100"
    return env


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_shell_session_prints_what_the_page_says(page: Path, tmp_path: Path) -> None:
    steps = sessions(page)
    assert steps
    fresh = page.name == "getting-started.md"
    cwd = _copy_of_the_checkout(tmp_path / "checkout") if fresh else tmp_path
    outputs = run([command for command, _, _ in steps], cwd, _environment(fresh=fresh))
    for (command, expected, line), actual in zip(steps, outputs, strict=True):
        if not expected:
            expected = ["..."] if not actual or not actual[-1].startswith("[exit ") else []
        assert matches(expected, actual), (
            f"{page.name}:{line}: $ {command}\nexpected:\n"
            + "\n".join(expected)
            + "\nprinted:\n"
            + "\n".join(actual)
        )


def test_the_matcher() -> None:
    assert matches(["a", "...", "z"], ["a", "b", "c", "z"])
    assert matches(["a ... z"], ["a b c z"])
    assert not matches(["a", "z"], ["a", "b", "z"])
    assert matches(["..."], [])
