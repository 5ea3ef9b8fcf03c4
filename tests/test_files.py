"""The one door to a home's files: what is read, and what is refused at once."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from toolnexus.errors import HomeError, HomeFileError
from toolnexus.home._door import FILE_CAP, Door, decode, memory_cap, read_capped


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def refused(door: Door, path: Path, cap: int = FILE_CAP) -> HomeFileError:
    with pytest.raises(HomeFileError) as info:
        door.read(str(path), cap=cap)
    assert isinstance(info.value, HomeError)
    assert info.value.path == str(path)
    return info.value


# -- reading ---------------------------------------------------------------------------


def test_absent_is_none_and_a_file_is_its_bytes(tmp_path: Path) -> None:
    door = Door(tmp_path)
    assert door.read(str(tmp_path / "nope.md"), cap=FILE_CAP) is None
    assert door.read(str(tmp_path / "not-a-folder" / "x.md"), cap=FILE_CAP) is None
    write(tmp_path / "f.md", "text")
    assert door.read(str(tmp_path / "f.md"), cap=FILE_CAP) == b"text"


def test_a_folder_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").mkdir()
    exc = refused(Door(tmp_path), tmp_path / "MEMORY.md")
    assert exc.reason == "folder"
    assert str(exc) == f"{tmp_path / 'MEMORY.md'}: is a folder: it must be a file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "USER.md"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []
    reader = threading.Thread(target=lambda: outcome.append(refused(Door(tmp_path), fifo)))
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert isinstance(outcome[0], HomeFileError)
    assert outcome[0].reason == "special"
    assert "is not a regular file" in str(outcome[0])


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "USER.md"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        assert refused(Door(tmp_path), path).reason == "special"


def test_the_cap_refuses_one_byte_over_and_never_truncates(tmp_path: Path) -> None:
    path = tmp_path / "IDENTITY.md"
    path.write_bytes(b"x" * 100)
    assert Door(tmp_path).read(str(path), cap=100) == b"x" * 100
    path.write_bytes(b"x" * 101)
    exc = refused(Door(tmp_path), path, cap=100)
    assert exc.reason == "too_large"
    assert "is 101 bytes, over its cap of 100 bytes" in str(exc)
    # read_capped checks the bytes read too (a file may grow after its stat).
    with pytest.raises(HomeFileError, match="over its cap"):
        read_capped(str(path), cap=100)


def test_memory_cap_never_refuses_a_file_within_its_limit() -> None:
    assert memory_cap(1) == FILE_CAP == 2**20
    assert memory_cap(8000) == FILE_CAP
    assert memory_cap(10_000_000) == 40_000_000  # 4 bytes for every character allowed


def test_not_utf8_names_the_file_and_the_byte() -> None:
    with pytest.raises(HomeFileError) as info:
        decode(b"ab\xff", "/h/USER.md")
    assert (info.value.reason, str(info.value)) == (
        "not_utf8",
        "/h/USER.md: not UTF-8 text (byte 2): save it as UTF-8",
    )
    assert decode("\ufeffok".encode(), "/h/x") == "\ufeffok"


# -- links -----------------------------------------------------------------------------


def test_a_link_inside_the_home_is_followed(tmp_path: Path) -> None:
    write(tmp_path / "notes" / "mine.md", "- inside\n")
    (tmp_path / "MEMORY.md").symlink_to("notes/mine.md")
    assert Door(tmp_path).read(str(tmp_path / "MEMORY.md"), cap=FILE_CAP) == b"- inside\n"


def test_a_link_out_of_the_home_is_refused_naming_its_target(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    secret = write(tmp_path / "netrc", "machine example password hunter2\n")
    (home / "USER.md").symlink_to(secret)
    exc = refused(Door(home), home / "USER.md")
    assert exc.reason == "link_out"
    assert f"is a link to {secret}, outside the home: refused" in str(exc)
    assert "hunter2" not in str(exc)


def test_a_link_out_through_a_linked_folder_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    write(tmp_path / "outside" / "mem.md", "- out\n")
    (home / "notes").symlink_to(tmp_path / "outside")
    (home / "MEMORY.md").symlink_to("notes/mem.md")
    assert refused(Door(home), home / "MEMORY.md").reason == "link_out"


@pytest.mark.parametrize("target", ["missing.md", "loop-a"])
def test_a_dangling_or_looping_link_is_refused(tmp_path: Path, target: str) -> None:
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    (tmp_path / "MEMORY.md").symlink_to(target)
    exc = refused(Door(tmp_path), tmp_path / "MEMORY.md")
    assert exc.reason == "link_broken"
    assert "refused (fix or remove it)" in str(exc)


def test_a_home_that_is_itself_a_link_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real-home"
    write(real / "MEMORY.md", "- a\n")
    (tmp_path / "home").symlink_to(real)
    (real / "USER.md").symlink_to("MEMORY.md")
    door = Door(tmp_path / "home")
    assert door.read(str(tmp_path / "home" / "USER.md"), cap=FILE_CAP) == b"- a\n"
