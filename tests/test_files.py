"""The one door to a home's files: what is read, and what is refused at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolnexus.agents._files import read_file
from toolnexus.errors import HomeError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- reading ---------------------------------------------------------------------------


def test_read_file_is_none_when_absent_and_bytes_otherwise(tmp_path: Path) -> None:
    assert read_file(tmp_path / "nope.md") is None
    assert read_file(tmp_path / "not-a-folder" / "x.md") is None
    write(tmp_path / "f.md", "text")
    assert read_file(tmp_path / "f.md") == b"text"


def test_read_file_names_a_folder(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").mkdir()
    with pytest.raises(HomeError) as info:
        read_file(tmp_path / "MEMORY.md")
    assert str(info.value) == f"{tmp_path / 'MEMORY.md'}: is a folder: it must be a file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_read_file_refuses_a_fifo_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "USER.md"
    os.mkfifo(fifo)
    with pytest.raises(HomeError, match="is not a regular file"):
        read_file(fifo)
