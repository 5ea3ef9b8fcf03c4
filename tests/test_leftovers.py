"""Running the tests (and the docs examples) leaves nothing in the system's temp folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_run_of_the_suite_leaves_the_temp_folder_as_it_found_it(tmp_path: Path) -> None:
    tmp = tmp_path / "system-temp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    # Tests that write homes, spawn writers and run docs examples with mkdtemp().
    chosen = [
        "tests/test_history.py",
        "tests/test_sync.py",
        "tests/test_readme.py",  # runs the README's example in a process of its own
        "docs/history.md",
        "docs/cli.md",
    ]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *chosen],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stdout[-2000:]
    assert sorted(os.listdir(tmp)) == []
