"""The command line as a newcomer meets it: the wrong folder, a typo, a long note, a chat
with no key or no server. Each mistake is one line that says what to do, and creates
nothing."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from _loopback_openai import completion, loopback_server
from test_cli import run

from toolnexus.conversations import Conversations

DOWN = {"error": {"message": "down"}}


def made(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    "args",
    [
        ("memory", "{dir}", "add", "a note"),
        ("memory", "{dir}", "show"),
        ("memory", "{dir}", "log"),
        ("sessions", "{dir}", "list"),
        ("recall", "{dir}", "tea"),
        ("tools", "{dir}"),
    ],
)
def test_a_folder_that_is_not_a_home_is_named_and_left_alone(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    folder = tmp_path / "plain folder"
    folder.mkdir()
    done = run(*(a.format(dir=folder) for a in args))
    assert done.returncode == 1
    assert done.stderr == (
        f"toolnexus {args[0]}: {folder}: not a home (it has no IDENTITY.md); make one "
        f"with: toolnexus init {shlex.quote(str(folder))}\n"
    )
    assert made(folder) == []
    assert run("init", folder).returncode == 0  # and init still can


def test_init_needs_a_name_and_quotes_its_next_step(tmp_path: Path) -> None:
    done = run("init", "")
    assert done.returncode == 1
    assert "give it a name" in done.stderr
    home = tmp_path / "my persona"
    done = run("init", home)
    assert done.returncode == 0
    next_step = done.stdout.rsplit("next: ", 1)[1].strip()
    assert next_step == f"toolnexus soul {shlex.quote(str(home))}"
    assert run(*shlex.split(next_step)[1:]).returncode == 0  # it runs as pasted


def test_a_new_home_shows_no_heading_of_its_own_and_no_outside_edit(tmp_path: Path) -> None:
    home = tmp_path / "ada"
    assert run("init", home, "--name", "Ada").returncode == 0
    assert run("memory", home, "add", "first note").returncode == 0
    soul = run("soul", home).stdout
    assert "\n# Memory" not in soul
    assert "\n# User" not in soul
    log = run("memory", home, "log").stdout
    assert "outside-edit" not in log
    assert "add" in log


def test_text_comes_from_standard_input_or_a_file(home: Path, tmp_path: Path) -> None:
    assert run("memory", home, "add", "-", stdin="from standard input\n").returncode == 0
    long = "x" * 150_000  # far longer than a command line's argument may be
    note = tmp_path / "note.txt"
    note.write_text(f"a long note {long}\n", encoding="utf-8")
    identity = home / "IDENTITY.md"
    identity.write_text(
        identity.read_text("utf-8").replace(
            "name: Ada\n", "name: Ada\nmemory_limits: {self: 200000}\n"
        ),
        encoding="utf-8",
    )
    assert run("memory", home, "add", "--file", str(note)).returncode == 0
    kept = (home / "MEMORY.md").read_text(encoding="utf-8")
    assert "- from standard input\n" in kept
    assert f"- a long note {long}\n" in kept
    assert run("memory", home, "remove", "-F", "-", stdin="from standard input").returncode == 0
    both = run("memory", home, "add", "x", "--file", str(note))
    assert both.returncode == 2
    assert "give TEXT or --file, not both" in both.stderr


def test_a_typo_gets_a_suggestion_and_an_option_its_verb_help(home: Path) -> None:
    typo = run("memroy", home, "show")
    assert typo.returncode == 2
    assert "did you mean 'memory'?" in typo.stderr
    option = run("memory", home, "show", "--bogus")
    assert option.returncode == 2
    assert option.stderr == (
        "toolnexus memory: error: unrecognized arguments: --bogus (see `toolnexus memory --help`)\n"
    )


def test_check_speaks_like_every_other_verb(home: Path) -> None:
    (home / "MEMORY.md").write_text("- twice\n- twice\n", encoding="utf-8")
    out = run("check", home).stdout
    assert out.splitlines()[0].startswith("toolnexus check: warning: MEMORY.md:2:")


# -- chat --------------------------------------------------------------------------------------


def chat(home: Path, *args: str, stdin: str = "", key: bool = True) -> object:
    env = {"OPENAI_API_KEY": "k", "NO_PROXY": "127.0.0.1"} if key else {}
    return run("chat", home, "--model", "gpt-loopback", *args, env=env, stdin=stdin)


def test_a_chat_where_every_turn_failed_exits_1_and_saves_nothing(home: Path) -> None:
    with loopback_server() as server:
        for _ in range(8):
            server.reply(
                {"error": {"message": "down"}}, status=500, headers={"retry-after-ms": "1"}
            )
        done = chat(home, "--base-url", server.base_url, stdin="hello\nagain\n")
    assert done.returncode == 1, done.stderr
    assert Conversations(home).list() == []  # no one-message conversations left behind
    assert "saved as conversation" not in done.stderr


def test_a_chat_is_saved_once_a_turn_is_answered(home: Path) -> None:
    with loopback_server() as server:
        for _ in range(4):
            server.reply(
                {"error": {"message": "down"}}, status=500, headers={"retry-after-ms": "1"}
            )
        server.reply(completion("Hello."))
        done = chat(home, "--base-url", server.base_url, stdin="hi\nhi again\n")
    assert done.returncode == 0, done.stderr
    [saved] = Conversations(home).list()
    assert saved.messages == 3  # both of the person's lines and the answer


def test_slash_commands_never_go_to_the_model(home: Path) -> None:
    with loopback_server() as server:
        done = chat(home, "--base-url", server.base_url, stdin="/help\n/usage\n/quit\nnever sent\n")
        assert server.bodies == []
    assert done.returncode == 0, done.stderr
    for command in ("/help", "/usage", "/quit", "/exit"):
        assert command in done.stdout
    assert "usage this session" in done.stdout
    with loopback_server() as server:
        assert chat(home, "--base-url", server.base_url, stdin="/exit\nnope\n").returncode == 0
        assert server.bodies == []


@pytest.mark.parametrize("url", ["not a url", "ftp://host/v1", "http://", "http://host:port/v1"])
def test_a_malformed_base_url_is_a_usage_error(home: Path, url: str) -> None:
    done = chat(home, "--base-url", url)
    assert done.returncode == 2
    assert f"--base-url {url!r}: not an http(s) address" in done.stderr


def test_the_missing_key_is_named_as_a_shell_sets_it(home: Path) -> None:
    done = chat(home, key=False)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "toolnexus chat: no API key for openai: export OPENAI_API_KEY=<your key>"
    )
    assert "api_key=" not in done.stderr


def test_an_unknown_conversation_is_named_before_the_key(home: Path) -> None:
    done = chat(home, "--resume", "nope", key=False)
    assert done.returncode == 1
    assert "nope" in done.stderr
    assert "API key" not in done.stderr
