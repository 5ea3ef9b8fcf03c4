"""Shared fixtures: sample homes copied into a temp dir, so tests never touch the repo."""

from __future__ import annotations

import shutil
from collections.abc import Callable
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


def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave nothing in the system's temp folder: pytest removes each run's folders
    (`tmp_path_retention_policy = "none"`), and this removes the user's folder that held them."""
    import getpass
    import os
    import tempfile

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # pragma: no cover - no user name on this system
        return
    root = Path(tempfile.gettempdir()) / f"pytest-of-{user}"
    try:
        for leftover in root.iterdir():  # only the empty folders of finished runs
            if leftover.is_dir() and not leftover.is_symlink() and not any(leftover.iterdir()):
                leftover.rmdir()
        os.rmdir(root)
    except OSError:  # not empty (another run is going on), or already gone
        pass


@pytest.fixture
def count_scans(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """Call it when the count should start: every later real scan is appended to the list."""
    from toolnexus.agents import _memo

    def start() -> list[str]:
        scanned: list[str] = []
        scan = _memo.scan_text

        def counting(text: str) -> tuple[str, ...]:
            scanned.append(text)
            return scan(text)

        monkeypatch.setattr(_memo, "scan_text", counting)
        return scanned

    return start
