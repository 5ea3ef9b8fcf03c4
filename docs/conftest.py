"""Run the documentation's code blocks the way a reader would run them.

Each block runs from the repository root (so `personas_example/...` paths work,
as they do for someone who cloned the repository), and `tempfile.mkdtemp()`
creates its folders under pytest's own temporary directory, so running the
docs leaves nothing behind in the repository or in the system temp folder.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _docs_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
