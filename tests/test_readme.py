"""The README stays true: its Python runs, and CI runs exactly its test command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def fences(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README, re.MULTILINE | re.DOTALL)


def test_readme_has_the_two_commands() -> None:
    commands = fences("sh")
    assert len(commands) == 2
    main_job, tests = (c.strip() for c in commands)
    assert main_job.endswith("toolnexus soul personas_example/sre-oncall")
    assert (ROOT / "personas_example" / "sre-oncall" / "IDENTITY.md").is_file()
    assert tests.endswith("python -m pytest -q")


def test_ci_runs_exactly_the_readme_test_command() -> None:
    tests = fences("sh")[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"{tests} 2>&1 | tee" in ci


def test_readme_python_runs(tmp_path: Path) -> None:
    (code,) = fences("python")
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # its mkdtemp() lands in pytest's folder
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False, env=env
    )
    assert result.returncode == 0, result.stderr
    assert "loads next session" in result.stdout
    assert "- prefers short drills" in result.stdout
