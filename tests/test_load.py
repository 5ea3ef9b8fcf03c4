"""Loading a home: every problem collected, and memos keyed by content that cannot go stale."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolnexus.agents import Home, compose_soul
from toolnexus.cli import main
from toolnexus.errors import HomeError
from toolnexus.home import _load, _memo
from toolnexus.home._door import Door
from toolnexus.home._load import load_home


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "ada"
    write(root / "IDENTITY.md", "---\nname: Ada\n---\nYou are Ada.\n")
    write(root / "MEMORY.md", "# Notes\n\n- likes tea\n")
    write(
        root / "skills/cite/SKILL.md", "---\nname: cite\ndescription: Cite things.\n---\nSteps.\n"
    )
    return root


def test_every_problem_is_collected_even_with_a_template_folder(home: Path) -> None:
    """A folder named soul.md.j2 is one problem among the others, not the only one seen."""
    (home / "soul.md.j2").mkdir()
    (home / "USER.md").write_bytes(b"- caf\xe9\n")
    write(home / "skills/bad/SKILL.md", "---\nname: other\ndescription: d\n---\n")
    loaded = load_home(home)
    assert loaded.problems == (
        f"{home / 'soul.md.j2'}: is a folder: it must be a file",
        f"{home / 'USER.md'}: not UTF-8 text (byte 5): save it as UTF-8",
    )
    assert loaded.scan.problems == (
        f"{home / 'skills/bad/SKILL.md'}:2: name 'other' differs from its folder's name "
        "'bad': make them equal",
    )
    with pytest.raises(HomeError) as info:
        compose_soul(home)
    assert info.value.problems == (*loaded.problems, *loaded.scan.problems)


def test_check_reports_a_template_folder_with_the_other_problems(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "soul.md.j2").mkdir()
    write(home / "IDENTITY.md", "---\nname: Ada\ncolour: blue\n---\n")
    assert main(["check", str(home)]) == 1
    out = capsys.readouterr().out
    assert "soul.md.j2: is a folder" in out
    assert "unknown key 'colour'" in out
    assert "(2 problems, 0 warnings)" in out


# -- the memos: keyed by content, so nothing a person does to a file can hide -------------


def test_same_content_is_parsed_once(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    parse = _load._parse_skill

    def counting(text: str, path: Path) -> object:
        calls.append(path)
        return parse(text, path)

    monkeypatch.setattr(_load, "_parse_skill", counting)
    _memo.clear_memos()
    first = compose_soul(home)
    assert compose_soul(home) == first
    assert len(calls) == 1
    # The same bytes in another file are that file's own parse (messages name the path).
    write(home / "skills/cite2/SKILL.md", (home / "skills/cite/SKILL.md").read_text("utf-8"))
    with pytest.raises(HomeError, match=r"cite2/SKILL\.md:2: name .cite. differs"):
        compose_soul(home)
    assert len(calls) == 2


def test_a_same_size_rewrite_with_its_times_restored_is_seen(home: Path) -> None:
    memory = home / "MEMORY.md"
    before = os.stat(memory)
    assert compose_soul(home).memory_entries == ("likes tea",)
    memory.write_text("# Notes\n\n- likes tan\n", encoding="utf-8")
    os.utime(memory, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(memory).st_size == before.st_size
    assert compose_soul(home).memory_entries == ("likes tan",)


def test_a_file_renamed_over_another_is_seen(home: Path) -> None:
    compose_soul(home)
    write(home / "new.md", "# Notes\n\n- likes mate\n")
    os.replace(home / "new.md", home / "MEMORY.md")
    assert compose_soul(home).memory_entries == ("likes mate",)


def test_a_link_pointed_elsewhere_is_seen(home: Path) -> None:
    write(home / "notes/a.md", "- from a\n")
    write(home / "notes/b.md", "- from b\n")
    (home / "USER.md").symlink_to("notes/a.md")
    assert compose_soul(home).user_entries == ("from a",)
    (home / "USER.md").unlink()
    (home / "USER.md").symlink_to("notes/b.md")
    assert compose_soul(home).user_entries == ("from b",)


def test_a_memory_write_scans_only_the_new_entry(
    home: Path, count_scans: Callable[[], list[str]]
) -> None:
    scanned = count_scans()
    _memo.clear_memos()
    compose_soul(home)
    # Each unit alone, then the file's units read together once (split instructions).
    assert scanned == ["# Notes\n\n", "likes tea", "# Notes\nlikes tea"]
    with (home / "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write("- likes oolong\n")
    assert compose_soul(home).memory_entries == ("likes tea", "likes oolong")
    assert scanned[3:] == ["likes oolong", "# Notes\nlikes tea\nlikes oolong"]


def test_memos_are_bounded_by_bytes_least_recently_used_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = _memo._LRU(10_000)
    monkeypatch.setattr(_memo, "_PARSED", memo)
    paths = [write(tmp_path / f"f{i}.md", f"{i:04d}" + "x" * 996) for i in range(30)]
    calls: list[str] = []

    def parse(text: str, path: Path) -> str:
        calls.append(path.name)
        return text[:4]

    def load(path: Path) -> str:
        found = _memo.memo(Door(path.parent), "test", os.fspath(path), parse)
        assert found is not None
        assert isinstance(found[1], str)
        return found[1]

    for path in paths:
        assert load(path) == path.name[1:-3].zfill(4)
        load(paths[0])  # kept in use: never the one forgotten
        assert memo.used <= 10_000
    calls.clear()
    load(paths[0])
    load(paths[-1])
    assert calls == []  # both still memoised
    load(paths[1])
    assert calls == ["f1.md"]  # forgotten long ago, parsed again


def test_memoised_skills_keep_no_body(home: Path) -> None:
    body = "word " * 40_000
    write(home / "skills/big/SKILL.md", f"---\nname: big\ndescription: d\n---\n{body}")
    _memo.clear_memos()
    compose_soul(home)
    assert _memo._PARSED.used < 4_000  # two skill summaries, an identity, a memory file
    # Home.skills() still hands out whole skills, read from disk.
    big = next(skill for skill in Home(home).skills() if skill.name == "big")
    assert big.body == body.strip("\n")


def test_a_skills_folder_that_cannot_be_listed_is_a_problem(home: Path) -> None:
    # A link to itself: listing it fails with ELOOP, as an unreadable folder fails with EACCES.
    shutil.rmtree(home / "skills")
    (home / "skills").symlink_to("skills")
    with pytest.raises(HomeError) as info:
        compose_soul(home)
    assert str(info.value).startswith(f"{home / 'skills'}: is a link to ")
    assert str(info.value).endswith(", a loop: refused (fix or remove it)")


# -- files known by their stat signature -------------------------------------------------


@pytest.fixture
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as long unchanged: a known signature alone is trusted."""
    monkeypatch.setattr(_memo, "RACY_WINDOW_NS", 0)


def forbid_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every home file read from now on."""
    reads: list[str] = []
    real = _memo.read_capped

    def recording(path: str, **kwargs: Any) -> bytes | None:
        reads.append(Path(path).name)
        return real(path, **kwargs)

    monkeypatch.setattr(_memo, "read_capped", recording)
    return reads


def test_a_quiet_unchanged_home_is_not_read_again(
    home: Path, quiet: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = compose_soul(home)
    reads = forbid_reads(monkeypatch)
    assert compose_soul(home) is first
    assert reads == []


def test_recent_files_are_read_again_whatever_their_signature(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compose_soul(home)
    reads = forbid_reads(monkeypatch)  # the files were written just now: inside the window
    compose_soul(home)
    assert sorted(reads) == ["IDENTITY.md", "MEMORY.md", "SKILL.md"]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param("rewrite", id="same-size-rewrite-times-restored"),
        pytest.param("rename", id="renamed-over"),
        pytest.param("relink", id="link-pointed-elsewhere"),
    ],
)
def test_a_quiet_file_changed_behind_the_memo_is_seen(home: Path, quiet: None, change: str) -> None:
    write(home / "notes/a.md", "- likes tea\n")
    write(home / "notes/b.md", "- likes tan\n")
    memory = home / "MEMORY.md"
    if change == "relink":
        memory.unlink()
        memory.symlink_to("notes/a.md")
    assert compose_soul(home).memory_entries == ("likes tea",)
    before = os.stat(memory)
    if change == "rewrite":
        memory.write_text("# Notes\n\n- likes tan\n", encoding="utf-8")
        # File times tick coarsely: wait (bounded) for ctime to move, as it does for a
        # person's edit, then put mtime back. Only ctime then tells the two apart.
        for _ in range(100_000):
            if os.stat(memory).st_ctime_ns != before.st_ctime_ns:
                break
            os.chmod(memory, 0o644)
        os.utime(memory, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(memory)
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        assert after.st_ctime_ns != before.st_ctime_ns
    elif change == "rename":
        write(home / "new.md", "# Notes\n\n- likes tan\n")
        os.replace(home / "new.md", memory)
    else:
        memory.unlink()
        memory.symlink_to("notes/b.md")
    assert compose_soul(home).memory_entries == ("likes tan",)
