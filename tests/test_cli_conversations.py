"""`toolnexus chat --continue/--resume/--no-save`, `sessions` and `recall`, run as subprocesses.

Chat talks to the loopback OpenAI-compatible server; sessions that only need to
exist are saved in-process (`Transcript`, `Conversations.import_messages`) with
ids chosen here, so prefixes and orders are deterministic and few processes run.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _loopback_openai import LoopbackServer, completion, loopback_server
from test_cli import assert_one_line_error, run

from toolnexus.agents.models import AssistantMessage, UserMessage
from toolnexus.conversations import Conversations, Transcript

KEY = {"OPENAI_API_KEY": "test-key"}
MODEL = "loopback-model"
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
LIST_LINE = re.compile(r"^([0-9a-f]{12})  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  +(\d+) messages?  (.*)$")
HIT_FIELDS = ["kind", "session", "time", "role", "snippet", "change", "withheld", "window"]


@pytest.fixture
def home(home: Path) -> Path:
    """The shared home, with a MEMORY.md holding only its heading."""
    (home / "MEMORY.md").write_text("# Memory\n\n", encoding="utf-8")
    return home


def chat(
    home: Path, server: LoopbackServer, stdin: str, *options: str
) -> subprocess.CompletedProcess[str]:
    return run(
        "chat",
        home,
        "--model",
        MODEL,
        "--base-url",
        server.base_url,
        *options,
        env=KEY,
        stdin=stdin,
    )


def ok(*args: str | Path) -> str:
    result = run(*args)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def listed(home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ok("sessions", home, "list", "--json").splitlines()]


def exported(home: Path, id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ok("sessions", home, "export", id).splitlines()]


def save(home: Path, id: str, *texts: str) -> None:
    """Save a live session `id` in-process: user and assistant messages, alternating."""
    messages = [UserMessage(t) if n % 2 == 0 else AssistantMessage(t) for n, t in enumerate(texts)]
    Transcript(home, session=id, soul_digest="sha256:x", model="m").save(messages)


def jsonl(messages: list[dict[str, Any]]) -> bytes:
    """Messages in the canonical form export writes."""
    lines = [json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n" for m in messages]
    return "".join(lines).encode("utf-8")


# -- chat ----------------------------------------------------------------------------------


def test_chat_saves_as_it_goes_and_continue_resumes_with_a_fresh_soul(home: Path) -> None:
    memory_call = '{"action": "add", "text": "likes tea"}'
    with loopback_server() as server:
        server.reply(completion(tool_calls=[("c1", "memory", memory_call)]))
        server.reply(completion("Noted, tea it is."))
        server.reply(completion("Bye."))
        first = chat(home, server, "I like tea.\nbye\n")
    assert first.returncode == 0, first.stderr

    [saved] = listed(home)
    id = saved["id"]
    assert f"saved as conversation {id}\n" in first.stderr
    assert saved["messages"] == 6
    assert saved["title"] == "I like tea."
    assert saved["model"] == MODEL
    assert saved["origin"] == "live"
    assert saved["usage"] == {
        "input_tokens": 3,
        "output_tokens": 3,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
    }
    old = exported(home, id)
    tool_output = server.bodies[1]["messages"][-1]["content"]
    assert tool_output.startswith("added to MEMORY.md")
    assert old == [
        {"role": "user", "content": "I like tea."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "memory", "arguments": memory_call},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": tool_output},
        {"role": "assistant", "content": "Noted, tea it is."},
        {"role": "user", "content": "bye"},
        {"role": "assistant", "content": "Bye."},
    ]
    # What was saved is exactly what the model was shown, plus its last answer.
    assert old == [*server.bodies[2]["messages"][1:], {"role": "assistant", "content": "Bye."}]
    old_system = server.bodies[0]["messages"][0]
    assert "likes tea" not in old_system["content"]

    with loopback_server() as server:
        server.reply(completion("Welcome back."))
        again = chat(home, server, "again\n", "--continue")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Ada> Welcome back.\n"
    assert f"resuming conversation {id} (6 messages)" in again.stderr
    assert f"saved as conversation {id}\n" in again.stderr
    [body] = server.bodies
    system, *rest = body["messages"]
    # A fresh soul: the memory written in the first chat is in it now.
    assert system["role"] == "system"
    assert "- likes tea" in system["content"]
    assert system != old_system
    assert rest == [*old, {"role": "user", "content": "again"}]
    # The home has a past now, so the persona can search it.
    assert "recall" in [tool["function"]["name"] for tool in body["tools"]]

    [resumed] = listed(home)
    assert resumed["id"] == id
    assert resumed["messages"] == 8
    assert resumed["started"] == saved["started"]
    assert resumed["soul_digest"] != saved["soul_digest"]  # the soul it last ran with
    assert resumed["usage"]["input_tokens"] == 4
    assert exported(home, id) == [
        *old,
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "Welcome back."},
    ]


def test_chat_resume_picks_the_session_named_by_a_prefix(home: Path) -> None:
    save(home, "1111aaaa0000", "first topic", "first reply")
    save(home, "2222bbbb0000", "second topic", "second reply")  # the latest: not this one
    with loopback_server() as server:
        server.reply(completion("Back to the first."))
        result = chat(home, server, "go on\n", "--resume", "1111")
        missing = chat(home, server, "hi\n", "--resume", "nosuch")
    assert result.returncode == 0, result.stderr
    assert "resuming conversation 1111aaaa0000 (2 messages)" in result.stderr
    [body] = server.bodies  # the refused chat asked nothing
    assert body["messages"][1:] == [
        {"role": "user", "content": "first topic"},
        {"role": "assistant", "content": "first reply"},
        {"role": "user", "content": "go on"},
    ]
    assert_one_line_error(missing, 1, "no saved session 'nosuch'")
    assert {s["id"]: s["messages"] for s in listed(home)} == {
        "1111aaaa0000": 4,
        "2222bbbb0000": 2,
    }


def test_continue_resume_or_show_in_a_home_with_nothing_saved(home: Path) -> None:
    result = run("chat", home, "--model", "m", "--continue", env=KEY)
    assert_one_line_error(result, 1, f"no saved conversation to continue in {home}")
    result = run("chat", home, "--model", "m", "--resume", "nosuch", env=KEY)
    assert_one_line_error(result, 1, "no saved session 'nosuch'")
    result = run("sessions", home, "show", "nosuch")
    assert_one_line_error(result, 1, "no saved session 'nosuch'")
    assert not (home / ".toolnexus").exists()


def test_chat_no_save_and_sessions_off_save_nothing(home: Path, tmp_path: Path) -> None:
    with loopback_server() as server:
        server.reply(completion("Hello."))
        result = chat(home, server, "hi\n", "--no-save")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Ada> Hello.\n"
    assert "saved as" not in result.stderr
    assert not (home / ".toolnexus").exists()

    off = tmp_path / "off"
    off.mkdir()
    (off / "IDENTITY.md").write_text(
        "---\nname: Otto\nsessions: off\n---\nYou are Otto.\n", encoding="utf-8"
    )
    with loopback_server() as server:
        server.reply(completion(tool_calls=[("c1", "memory", '{"action": "add", "text": "x y"}')]))
        server.reply(completion("Noted."))
        result = chat(off, server, "remember x y\n")
    assert result.returncode == 0, result.stderr
    assert "saved as" not in result.stderr
    # The memory change has its history; the conversation is kept nowhere.
    assert (off / ".toolnexus" / "state.db").exists()
    assert Conversations(off).list() == []
    assert Conversations(off).recall("remember") == []


# -- sessions ------------------------------------------------------------------------------


def test_sessions_list_show_rm_and_prefixes(home: Path) -> None:
    save(home, "abcd00000001", "alpha question\nmore lines", "alpha answer")
    save(home, "abcd00000002", "beta question", "beta answer", "beta again")
    save(home, "ffff00000003", "gamma zebrafish", "gamma answer")

    lines = ok("sessions", home, "list").splitlines()
    parsed = [LIST_LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [m.groups() for m in parsed if m] == [
        ("ffff00000003", "2", "gamma zebrafish"),
        ("abcd00000002", "3", "beta question"),
        ("abcd00000001", "2", "alpha question"),
    ]
    assert [
        line.split()[0] for line in ok("sessions", home, "list", "--limit", "1").splitlines()
    ] == ["ffff00000003"]

    ambiguous = run("sessions", home, "show", "abcd")
    assert_one_line_error(ambiguous, 1, "abcd00000001, abcd00000002")
    shown = ok("sessions", home, "show", "abcd00000002")
    assert shown.splitlines()[0] == "conversation abcd00000002: beta question"
    assert "model m · 3 messages" in shown
    assert "\nuser> beta question\n" in shown
    assert "\nassistant> beta answer\n" in shown
    assert "\nuser> beta again\n" in shown

    assert ok("sessions", home, "rm", "ff") == "removed conversation ffff00000003 (2 messages)\n"
    gone = run("sessions", home, "show", "ffff00000003")
    assert_one_line_error(gone, 1, "no saved session 'ffff00000003'")
    # Removed for good: recall no longer finds its words.
    assert Conversations(home).recall("zebrafish") == []
    assert [s.id for s in Conversations(home).list()] == ["abcd00000002", "abcd00000001"]


def test_sessions_list_in_a_home_with_nothing_saved(home: Path) -> None:
    result = run("sessions", home, "list")
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr == f"no saved conversations in {home}\n"
    result = run("sessions", home, "list", "--json")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (home / ".toolnexus").exists()  # reading creates nothing


CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are Zoë, a careful archivist."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Grüße — 日本語 ✓ about the quokka"},
            {"type": "text", "text": "a second part"},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "t1",
                "type": "function",
                "function": {
                    "name": "memory",
                    "arguments": '{"action":"add","text":"ünïcode 🦘"}',
                },
            }
        ],
    },
    {"role": "tool", "tool_call_id": "t1", "content": "added"},
    {"role": "assistant", "content": "Done ✓ — noted the quokka 🦘"},
]


def test_import_then_export_gives_back_the_same_bytes(home: Path, tmp_path: Path) -> None:
    file = tmp_path / "talk.jsonl"
    file.write_bytes(jsonl(CONVERSATION))
    out = ok("sessions", home, "import", file)
    match = re.fullmatch(
        rf"imported {re.escape(str(file))} as conversation (\w+) \(5 messages\)\n", out
    )
    assert match, out
    id = match.group(1)

    exported = run("sessions", home, "export", id[:4])
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.encode("utf-8") == file.read_bytes()

    again = ok("sessions", home, "import", file)
    assert again == f"{file}: already imported as conversation {id}; nothing to do\n"
    [saved] = listed(home)
    assert saved["id"] == id
    assert saved["origin"] == "import"
    assert saved["model"] is None
    assert saved["title"] == "Grüße — 日本語 ✓ about the quokka"
    assert saved["messages"] == 5


def test_an_exported_line_separator_imports_again(home: Path, tmp_path: Path) -> None:
    # U+2028, U+2029 and U+0085 are text inside a JSON string, not line ends.
    file = tmp_path / "separators.jsonl"
    file.write_bytes(jsonl([{"role": "user", "content": "one\u2028two\u2029three\x85four"}]))
    result = run("sessions", home, "import", file)
    assert result.returncode == 0, result.stderr
    [id] = [s.id for s in Conversations(home).list()]
    exported = run("sessions", home, "export", id)
    assert exported.stdout.encode() == file.read_bytes()


@pytest.mark.parametrize(
    ("bad_line", "why"),
    [
        pytest.param("not json", "not JSON", id="not-json"),
        pytest.param('{"role":"wizard","content":"x"}', "role: expected one of", id="role"),
        pytest.param('{"role":"tool","content":"x"}', "tool_call_id: a tool message", id="tool"),
    ],
)
def test_import_checks_every_file_before_importing_any(
    home: Path, tmp_path: Path, bad_line: str, why: str
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(CONVERSATION))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"role":"user","content":"hello"}\n\n'
        + bad_line
        + '\n{"role":"assistant","content":"x"}\n',
        encoding="utf-8",
    )
    result = run("sessions", home, "import", good, bad)
    assert_one_line_error(result, 1, f"{bad}:3: {why}")
    assert str(good) not in result.stderr
    assert Conversations(home).list() == []  # not even the good file


def test_import_refuses_an_empty_file(home: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    result = run("sessions", home, "import", empty)
    assert_one_line_error(result, 1, f"{empty}: no messages")
    assert Conversations(home).list() == []


# -- recall --------------------------------------------------------------------------------

SECRET = "sk-" + "Q" * 32


def test_recall_finds_planted_words_in_conversations_and_memory(home: Path) -> None:
    messages = [
        {"role": "user", "content": "Where do quokka colonies live?"},
        {"role": "assistant", "content": "On Rottnest Island, mostly."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "Anything else?"},
        {"role": "user", "content": "Yes, one more thing."},
        {"role": "assistant", "content": "Go on."},
        {"role": "user", "content": f"my quokka key is {SECRET}"},
        {"role": "assistant", "content": "Please keep keys out of chats."},
    ]
    id, new = Conversations(home).import_messages(messages)
    assert new
    ok("memory", home, "add", "quokka census is in March")

    text = ok("recall", home, "quokka")
    head, *hits = text.splitlines()
    assert head == "3 hits for 'quokka', best first:"
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d"
    heads = [h for h in hits if not h.startswith("   ")]  # the turns around each follow it
    shown = [re.sub(rf"^\d\. |(?<= · ){when}|(?<=change )\d+", "", h) for h in heads]
    assert sorted(shown) == sorted(
        [
            f"[user ·  · session {id}] Where do quokka colonies live?",
            f"[user ·  · session {id}] (withheld: the text did not pass the memory scanner: "
            "secret: looks like a credential, which must never sit in a prompt)",
            "[memory self add ·  · change ] quokka census is in March",
        ]
    )
    assert SECRET not in text

    found = [json.loads(line) for line in ok("recall", home, "quokka", "--json").splitlines()]
    assert len(found) == 3
    assert all(list(hit) == HIT_FIELDS for hit in found)
    assert all(TIME.match(hit["time"]) for hit in found)
    by_kind = {(h["kind"], h["role"], h["withheld"] is None): h for h in found}
    said = by_kind["conversation", "user", True]
    assert said["session"] == id
    assert said["snippet"] == "Where do quokka colonies live?"
    assert said["change"] is None
    held = by_kind["conversation", "user", False]
    assert held["snippet"] == ""
    assert held["withheld"].startswith("secret")
    memory = by_kind["memory", "memory self add", True]
    assert memory["session"] is None  # written from the command line, not in a session
    assert isinstance(memory["change"], int)
    assert memory["snippet"] == "quokka census is in March"

    # Every message holding any of the words is ranked; the one holding most comes first,
    # and a neighbouring hit is merged into its window.
    def found(*query: str) -> list[dict[str, object]]:
        return [json.loads(line) for line in ok("recall", home, *query, "--json").splitlines()]

    assert found("colonies", "QUOKKA")[0]["snippet"] == "Where do quokka colonies live?"
    [both] = found("colonies", "rottnest")
    assert [t["text"] for t in both["window"] if t["hit"]][:2] == [  # type: ignore[attr-defined]
        "Where do quokka colonies live?",
        "On Rottnest Island, mostly.",
    ]
    assert found("island*")[0]["snippet"] == "On Rottnest Island, mostly."
    limited = ok("recall", home, "quokka", "--json", "--limit", "1").splitlines()
    assert len(limited) == 1


@pytest.mark.parametrize("query", ['"', "NEAR(", "*", "-", "a OR", "((", "foo:bar", "^x"])
def test_recall_takes_any_text_as_words(home: Path, query: str) -> None:
    Conversations(home).import_messages(
        [{"role": "user", "content": "a foo bar NEAR x OR the end"}], where="seed"
    )
    result = run("recall", home, query)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr == ""


# -- usage errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "text"),
    [
        pytest.param(
            ("chat", "{home}", "--continue", "--resume", "x"), "--continue and --resume", id="both"
        ),
        pytest.param(("sessions", "{home}", "show"), "needs exactly one session ID", id="show"),
        pytest.param(
            ("sessions", "{home}", "show", "x", "--json"),
            "--json is not an option of sessions show",
            id="show-json",
        ),
        pytest.param(("sessions", "{home}", "list", "--limit", "0"), "--limit must", id="list-0"),
        pytest.param(("sessions", "{home}", "list", "x"), "takes no arguments", id="list-x"),
        pytest.param(("sessions", "{home}", "import"), "at least one FILE", id="import"),
        pytest.param(("sessions", "{home}", "frob"), "invalid choice: 'frob'", id="action"),
        pytest.param(("recall", "{home}", "x", "--limit", "0"), "--limit must", id="recall-0"),
    ],
)
def test_usage_errors_exit_2(home: Path, args: tuple[str, ...], text: str) -> None:
    result = run(*(a.format(home=home) for a in args), env=KEY)
    assert_one_line_error(result, 2, text)
    assert not (home / ".toolnexus").exists()
