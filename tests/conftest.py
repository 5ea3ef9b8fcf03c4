"""Shared fixtures: sample homes copied into a temp dir, so tests never touch the repo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HOMES = Path(__file__).parent / "homes"
EXAMPLES = Path(__file__).parent.parent / "personas_example"


@pytest.fixture
def copy_home(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Copy `tests/homes/<case>` (or a path) into tmp_path and return the copy."""

    def copy(case: str | Path) -> Path:
        src = Path(case) if Path(case).is_absolute() else HOMES / case
        dest = tmp_path / src.name
        shutil.copytree(src, dest, symlinks=True)
        return dest

    return copy
