"""The home's files are one safe door: each reproduction of the safety issue, end to end."""

from __future__ import annotations

import os
import random
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from _unprivileged import as_nobody, reachable_base
from _waits import finishes
from hypothesis import given, settings
from hypothesis import strategies as st

from toolnexus import agents
from toolnexus.errors import HomeError, MemoryEditError
from toolnexus.memory import MemoryStore

ROOT = Path(__file__).resolve().parents[1]
IDENTITY = "---\nname: Ada\n---\nYou are Ada.\n"


def make_home(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "IDENTITY.md").write_text(IDENTITY, encoding="utf-8")
    return path


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolnexus", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# -- 1. links out of the home --------------------------------------------------------


async def test_the_tool_never_writes_through_a_link_out(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    outside = tmp_path / "outside"
    outside.mkdir()
    dotfile = outside / ".bashrc"
    dotfile.write_text("alias ls='ls -la'\n", encoding="utf-8")
    (home / "MEMORY.md").symlink_to(dotfile)
    (home / "USER.md").symlink_to(outside / "nothing-yet.md")  # dangling
    tool = agents.memory_tool(home)
    for target in ("self", "user"):
        result = await tool.execute({"action": "add", "target": target, "text": "a note"})
        assert result.is_error
        assert "refused" in result.output
        assert result.output.endswith("Nothing written.")
    assert tree(outside) == [".bashrc"]  # no lock, no temp, no new file out there
    assert dotfile.read_text(encoding="utf-8") == "alias ls='ls -la'\n"


def test_a_secret_linked_in_never_reaches_the_soul(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    netrc = tmp_path / ".netrc"
    netrc.write_text("- machine example login ada password hunter2\n", encoding="utf-8")
    (home / "USER.md").symlink_to(netrc)
    with pytest.raises(HomeError, match="outside the home: refused"):
        agents.compose_soul(home)
    soul = agents.compose_soul(home, strict=False)
    assert "hunter2" not in soul.text
    assert soul.user_entries == ()
    assert any("withheld from the soul" in w and "USER.md" in w for w in soul.warnings)
    out = cli("check", str(home))
    assert out.returncode == 1
    assert "outside the home" in out.stdout
    assert "hunter2" not in out.stdout + out.stderr


def test_a_skill_folder_linked_out_is_neither_listed_nor_served(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    outside = tmp_path / "elsewhere" / "spy"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text("---\nname: spy\ndescription: d\n---\nbody\n", "utf-8")
    (home / "skills").mkdir()
    (home / "skills" / "spy").symlink_to(outside)
    with pytest.raises(HomeError, match="outside the home"):
        agents.compose_soul(home)
    soul = agents.compose_soul(home, strict=False)
    assert soul.skills == ()
    with pytest.raises(HomeError):
        agents.skill_tool(home)


async def test_the_skill_tool_serves_no_dot_file_and_nothing_outside(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    skill = home / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: d\n---\nSteps.\n", "utf-8")
    (skill / ".env").write_text("TOKEN=abc123\n", encoding="utf-8")
    (skill / "notes.md").symlink_to(".env")
    (skill / "guide.md").write_text("the guide\n", encoding="utf-8")
    (tmp_path / "out.md").write_text("outside\n", encoding="utf-8")
    (skill / "out.md").symlink_to(tmp_path / "out.md")
    tool = agents.skill_tool(home)
    body = await tool.execute({"name": "deploy"})
    assert body.output.endswith("- guide.md")  # only the visible file inside is listed
    for path in (".env", "notes.md", "out.md", "sub/../.env"):
        result = await tool.execute({"name": "deploy", "path": path})
        assert result.is_error, path
        assert "abc123" not in result.output
        assert result.output != "outside\n"
    assert (await tool.execute({"name": "deploy", "path": "guide.md"})).output == "the guide\n"


# -- 2. FIFOs and devices --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_the_cli_never_hangs_on_a_fifo_or_a_device(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    os.mkfifo(home / "MEMORY.md")
    out = cli("memory", str(home), "add", "a note", timeout=30)
    assert out.returncode == 1
    assert "not a regular file" in out.stderr
    assert "Traceback" not in out.stderr
    assert cli("memory", str(home), "show", timeout=30).returncode == 1
    os.unlink(home / "MEMORY.md")
    (home / "MEMORY.md").symlink_to("/dev/zero")
    out = cli("memory", str(home), "add", "a note", timeout=30)
    assert out.returncode == 1
    assert "outside the home" in out.stderr
    assert not os.path.exists("/dev/.zero.lock")


# -- 4. CR-only endings: test_memory_format; 5. one bad file, tolerant ----------------------


@pytest.mark.parametrize("bad", ["not-utf8", "fifo", "too-large"])
async def test_one_bad_user_md_withholds_only_itself(tmp_path: Path, bad: str) -> None:
    home = make_home(tmp_path / "home")
    (home / "MEMORY.md").write_text("- kept note\n", encoding="utf-8")
    user = home / "USER.md"
    if bad == "not-utf8":
        user.write_bytes(b"- caf\xe9\n")
    elif bad == "fifo":
        os.mkfifo(user)
    else:
        with open(user, "wb") as f:  # 60 MB, sparse: refused by its size, never read
            f.truncate(60_000_000)
    with pytest.raises(HomeError, match=r"USER\.md"):
        agents.compose_soul(home)
    session = agents.from_dir(home, strict=False).session()
    assert session.soul.memory_entries == ("kept note",)
    assert any("withheld from the soul" in w and "USER.md" in w for w in session.soul.warnings)
    result = await agents.memory_tool(home).execute(
        {"action": "add", "target": "user", "text": "x"}
    )
    assert result.is_error
    assert "USER.md" in result.output
    assert cli("soul", str(home), "--tolerant").returncode == 0
    assert cli("check", str(home)).returncode == 1


async def test_an_unreadable_user_md_withholds_only_itself() -> None:
    # In a folder of its own that the unprivileged user can reach (pytest's own temp
    # folders, and a private TMPDIR, are out of its reach).
    with tempfile.TemporaryDirectory(dir=reachable_base()) as tmp:
        os.chmod(tmp, 0o755)
        home = make_home(Path(tmp) / "home")
        (home / "MEMORY.md").write_text("- kept note\n", encoding="utf-8")
        user = home / "USER.md"
        user.write_text("- secret model of the user\n", encoding="utf-8")
        # Warm up as root first: whatever the code imports lazily is then loaded
        # (an unprivileged user may not be able to read the interpreter's files).
        agents.compose_soul(home, strict=False)
        await agents.memory_tool(home).execute({"action": "remove", "text": "missing"})
        os.chmod(user, 0o000)
        with as_nobody():
            with pytest.raises(HomeError, match=r"USER\.md: cannot be read: Permission denied"):
                agents.compose_soul(home)
            soul = agents.compose_soul(home, strict=False)
            result = await agents.memory_tool(home).execute(
                {"action": "add", "target": "user", "text": "x"}
            )
        assert soul.memory_entries == ("kept note",)
        assert soul.user_entries == ()
        assert any("withheld from the soul" in w and "USER.md" in w for w in soul.warnings)
        assert result.is_error
        assert result.output.startswith("cannot write USER.md")
        os.chmod(user, 0o644)
        assert user.read_text(encoding="utf-8") == "- secret model of the user\n"


# -- 7. the small ones -----------------------------------------------------------------------


async def test_a_miss_quotes_at_most_200_characters(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    tool = agents.memory_tool(home)
    exact = "y" * 200
    result = await tool.execute({"action": "remove", "text": exact})
    assert result.output == f"not found: {exact}"
    huge = "x" * 1_000_000
    result = await tool.execute({"action": "replace", "text": huge, "with": "z"})
    assert result.output == "not found: " + "x" * 200 + "\u2026"


def test_a_read_only_memory_file_is_refused_even_for_root(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    path = home / "MEMORY.md"
    path.write_text("- keep\n", encoding="utf-8")
    os.chmod(path, 0o444)
    store = MemoryStore(home, "self", limit=8000)
    with pytest.raises(MemoryEditError) as info:
        store.add("new")
    assert info.value.kind == "io"
    assert "read-only (mode 0444)" in str(info.value)
    assert path.read_text(encoding="utf-8") == "- keep\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o444


def test_a_5000_digit_limit_is_one_clear_line(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "IDENTITY.md").write_text(
        f"---\nname: x\nmemory_limits:\n  self: {'9' * 5000}\n---\nhi\n", encoding="utf-8"
    )
    with pytest.raises(HomeError, match=r"IDENTITY.md:4: invalid value in frontmatter"):
        agents.compose_soul(home)
    out = cli("soul", str(home))
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert len(out.stderr.splitlines()) == 1


# -- 3. a person's editor saving while the tool writes ----------------------------------------

# A person's editor: re-read, append a line, pause, write a temp file, rename it over.
EDITOR = textwrap.dedent(
    """
    import os, random, sys, time
    path, count = sys.argv[1], int(sys.argv[2])
    for k in range(count):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if text and not text.endswith("\\n"):
            text += "\\n"
        text += f"- person {k}\\n"
        time.sleep(random.uniform(0, 0.002))
        tmp = f"{path}.editor~"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        time.sleep(random.uniform(0, 0.003))
    """
)


@pytest.mark.slow
def test_an_editor_saving_by_rename_loses_none_of_its_lines(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    path = home / "MEMORY.md"
    path.write_text("# Notes\n", encoding="utf-8")
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), "150"])
    store = MemoryStore(home, "self", limit=10_000_000)
    k = busy = 0
    while editor.poll() is None:
        try:
            store.add(f"tool {k}")
            k += 1
        except MemoryEditError as exc:  # outpaced SWAP_TRIES times: refused, nothing lost
            busy += 1
            if exc.kind != "io" or "kept changing" not in exc.message:
                raise
        time.sleep(random.uniform(0, 0.002))
    assert editor.wait(timeout=120) == 0
    text = path.read_text(encoding="utf-8")
    lost = [n for n in range(150) if f"- person {n}\n" not in text]
    assert lost == [], f"{len(lost)} of 150 saved lines lost (tool wrote {k}, busy {busy})"
    assert k > busy
    assert not [n for n in os.listdir(home) if n.endswith(".tmp")]
    # Every entry the tool acknowledged is in the file or in the history, with its record:
    # one the editor's save overwrote is recovered from there.
    log = agents.Home(home).history()
    added = [c.after for c in log if c.action == "add"]
    assert sorted(added) == sorted(f"tool {n}" for n in range(k))
    entries = set(agents.Home(home).memory().entries)
    overwritten = [n for n in range(k) if f"tool {n}" not in entries]
    for n in overwritten:  # the outside edit that dropped it is recorded whole
        assert any(
            c.action == "outside-edit"
            and f"- tool {n}\n" in (c.before or "")
            and f"- tool {n}\n" not in (c.after or "")
            for c in log
        ), n


# -- random homes: tolerant compose never raises, never hangs, never reads outside ----------

_OPENED: list[str] = []
_RECORDING: list[bool] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _RECORDING and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)

_KINDS = ["text", "link-in", "link-out", "dangling", "fifo", "not-utf8", "too-large", "folder"]
_SPOTS = ["MEMORY.md", "USER.md", "soul.md.j2", "skills/a", "skills/a/SKILL.md", "skills/b"]


def _plant(home: Path, outside: Path, spot: str, kind: str) -> None:
    path = home / spot
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # an earlier spot made the parent a file or a link: nothing to plant
        return
    if path.exists() or path.is_symlink() or not path.parent.is_dir():
        return
    if kind == "text":
        if spot.startswith("skills/") and not spot.endswith(".md"):
            path.mkdir()
            name = path.name
            (path / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nb\n", "utf-8")
        else:
            path.write_text("- a note\n", encoding="utf-8")
    elif kind == "link-in":
        (home / "notes.md").write_text("- linked note\n", encoding="utf-8")
        path.symlink_to(home / "notes.md")
    elif kind == "link-out":
        path.symlink_to(outside)
    elif kind == "dangling":
        path.symlink_to(home / "nothing-here")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "not-utf8":
        path.write_bytes(b"- caf\xe9\n")
    elif kind == "too-large":
        with open(path, "wb") as f:
            f.truncate(50_000_000)
    else:
        path.mkdir()


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_SPOTS), st.sampled_from(_KINDS)), max_size=6))
def test_tolerant_compose_of_any_home_never_raises_nor_reads_outside(
    plan: list[tuple[str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        outside = root / "outside"
        outside.mkdir()
        (outside / "SKILL.md").write_text("---\nname: a\ndescription: CANARY\n---\nx\n", "utf-8")
        (outside / "MEMORY.md").write_text("- CANARY\n", encoding="utf-8")
        home = make_home(root / "home")
        for spot, kind in plan:
            _plant(home, outside / Path(spot).name if "." in spot else outside, spot, kind)
        _OPENED.clear()
        _RECORDING.append(True)
        try:  # never blocks (on a FIFO, say): it finishes while the test waits for it
            soul = finishes(
                lambda: agents.compose_soul(home, strict=False), what="a tolerant compose"
            )
        finally:
            _RECORDING.clear()
        assert "CANARY" not in soul.text
        assert _OPENED  # the hook saw the home's reads (IDENTITY.md at least)
        assert not [p for p in _OPENED if os.path.realpath(p).startswith(str(outside))]


def test_a_broken_template_gives_way_to_the_default_layout_when_tolerant(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    (home / "MEMORY.md").write_text("- kept note\n", encoding="utf-8")
    default = agents.compose_soul(home).text
    (home / "soul.md.j2").write_text("{% if %}\n", encoding="utf-8")
    with pytest.raises(HomeError, match=r"soul\.md\.j2"):
        agents.compose_soul(home)
    soul = agents.compose_soul(home, strict=False)
    assert soul.text == default
    assert [w for w in soul.warnings if "(the default layout is used instead)" in w]


def test_memory_show_prints_the_bytes_on_disk_through_the_door(tmp_path: Path) -> None:
    home = make_home(tmp_path / "home")
    raw = b"\xef\xbb\xbf# Notes\r- alpha\r\n- beta\n"  # BOM, CR, CRLF and LF in one file
    (home / "MEMORY.md").write_bytes(raw)
    out = subprocess.run(
        [sys.executable, "-m", "toolnexus", "memory", str(home), "show"],
        capture_output=True,
        timeout=60,
        cwd=ROOT,
    )
    assert (out.returncode, out.stdout) == (0, raw)
    (home / "USER.md").symlink_to(tmp_path / "elsewhere.md")
    refused = cli("memory", str(home), "show", "--user")
    assert refused.returncode == 1
    assert "refused" in refused.stderr
