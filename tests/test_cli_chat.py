"""`toolnexus chat` end to end, for both providers: the real console script in a
subprocess, the official SDKs, and a loopback server answering in each wire format
(streamed, since chat streams)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _loopback_openai import LoopbackServer, completion, loopback_server
from _waits import wait_until
from test_cli import SCRIPT, TIMEOUT, run

from toolnexus.agents.models import ToolCall, ToolFinished, ToolResultMessage, Usage
from toolnexus.cli._chat import describe_usage, pick_provider, tool_line

FAST_RETRY = {"retry-after-ms": "5"}  # the SDKs honour it: retries without a long backoff


def openai_chat(home: Path, server: LoopbackServer, stdin: str) -> subprocess.CompletedProcess[str]:
    return run(
        "chat",
        home,
        "--model",
        "gpt-loopback",
        "--base-url",
        server.base_url,
        env={"OPENAI_API_KEY": "k", "NO_PROXY": "127.0.0.1"},
        stdin=stdin,
    )


def anthropic_message(
    text: str | None, *, tool_uses: Any = (), usage: Any = None
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [] if text is None else [{"type": "text", "text": text}]
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in tool_uses]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-loopback",
        "content": content,
        "stop_reason": "tool_use" if tool_uses else "end_turn",
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 5, "output_tokens": 2},
    }


# -- OpenAI-compatible -----------------------------------------------------------------------


def test_openai_chat_streams_answers_and_shows_each_tool_call(home: Path) -> None:
    with loopback_server() as server:
        server.reply(
            completion(tool_calls=[("c1", "memory", '{"action": "add", "text": "likes tea"}')])
        )
        server.reply(completion("Noted, tea it is."))
        result = openai_chat(home, server, "I like tea.\n")
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Ada> Noted, tea it is.\n"
    assert '  [memory] {"action":"add","text":"likes tea"} -> ok\n' in result.stderr
    assert all(body["stream"] is True for body in bodies)
    assert "- likes tea" in (home / "MEMORY.md").read_text(encoding="utf-8")


def test_a_429_is_retried_and_a_failing_turn_leaves_the_chat_going(home: Path) -> None:
    error = {"error": {"message": "overloaded"}}
    with loopback_server() as server:
        server.reply(error, status=429, headers=FAST_RETRY)
        server.reply(completion("First answer."))
        for _ in range(4):  # the request and its three retries
            server.reply(error, status=500, headers=FAST_RETRY)
        server.reply(completion("Back again."))
        result = openai_chat(home, server, "one\ntwo\nthree\n")
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Ada> First answer.\nAda> Back again.\n"
    assert "Traceback" not in result.stderr
    [failure] = [line for line in result.stderr.splitlines() if "answered HTTP 500" in line]
    assert failure.startswith("toolnexus chat: ")
    assert failure.endswith(": overloaded")
    assert len(bodies) == 7
    # The conversation so far is kept: the turn that failed is still in it.
    last = [(m["role"], m.get("content")) for m in bodies[-1]["messages"][1:]]
    assert last == [
        ("user", "one"),
        ("assistant", "First answer."),
        ("user", "two"),
        ("user", "three"),
    ]


def test_reaching_the_tool_round_cap_ends_the_turn_not_the_chat(home: Path) -> None:
    with loopback_server() as server:
        for n in range(17):  # the first request and 16 rounds of tools
            server.reply(completion(tool_calls=[(f"c{n}", "nothing", "{}")]))
        server.reply(completion("Fine now."))
        result = openai_chat(home, server, "loop\nstop\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("Ada> Fine now.\n")
    assert "toolnexus chat: the turn ended: the model still called tools (nothing)" in result.stderr
    assert result.stderr.count("[nothing] {} -> error: unknown tool 'nothing'") == 16


# -- Anthropic -------------------------------------------------------------------------------


def test_anthropic_chat_with_a_cache_hit_in_usage(home: Path) -> None:
    cached = {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 900}
    with loopback_server() as server:
        server.reply(
            anthropic_message(
                "Saving.", tool_uses=[("toolu_1", "memory", {"action": "add", "text": "tea"})]
            )
        )
        server.reply(anthropic_message("Saved.", usage=cached))
        result = run(
            "chat",
            home,
            "--model",
            "claude-loopback",  # a claude-* name picks the Anthropic API
            "--base-url",
            server.base_url.removesuffix("/v1"),
            env={"ANTHROPIC_API_KEY": "k", "NO_PROXY": "127.0.0.1"},
            stdin="Remember tea.\n/usage\n",
        )
        paths = [r.path for r in server.requests]
    assert result.returncode == 0, result.stderr
    assert paths == ["/v1/messages", "/v1/messages"]
    assert result.stdout.splitlines() == [
        "Ada> Saving.",
        "Ada> Saved.",
        "usage this session: input 105 · output 22 · cache read 900 · cache write 0 · "
        "cache hit rate 90%",
    ]
    assert '  [memory] {"action":"add","text":"tea"} -> ok' in result.stderr


# -- Ctrl-C ------------------------------------------------------------------------------------


def test_ctrl_c_cancels_the_turn_in_flight_and_then_ends_the_chat(home: Path) -> None:
    with loopback_server() as server:

        def slow(body: dict[str, Any]) -> tuple[int, Any]:
            time.sleep(3)
            return 200, completion("too late")

        server.reply_with(slow)
        server.reply(completion("Quick one."))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TOOLNEXUS_"))}
        proc = subprocess.Popen(
            [str(SCRIPT), "chat", str(home), "--model", "m", "--base-url", server.base_url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, "OPENAI_API_KEY": "k", "NO_PROXY": "127.0.0.1"},
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        shown: list[str] = []
        reader = threading.Thread(target=lambda: shown.extend(proc.stdout or ()), daemon=True)
        reader.start()
        proc.stdin.write("slow question\n")
        proc.stdin.flush()
        wait_until(lambda: bool(server.requests), what="the slow request")
        proc.send_signal(signal.SIGINT)  # the turn in flight is cancelled...
        proc.stdin.write("quick question\n")  # ...and the chat goes on (the line waits)
        proc.stdin.flush()
        wait_until(lambda: "Ada> Quick one.\n" in shown, what="the quick answer")
        proc.send_signal(signal.SIGINT)  # once the answer is shown: the chat ends
        proc.wait(timeout=TIMEOUT)
        reader.join(TIMEOUT)
        assert proc.stderr is not None
        out, err = "".join(shown), proc.stderr.read()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()
    assert (proc.returncode, out) == (130, "Ada> Quick one.\n"), err
    assert "toolnexus chat: interrupted: turn cancelled" in err
    assert err.rstrip().splitlines()[-2:] == [
        "toolnexus chat: interrupted",
        f"saved as conversation {err.split('saved as conversation ')[1].strip()}",
    ]
    assert "Traceback" not in err


# -- the pieces ------------------------------------------------------------------------------


def test_the_provider_is_picked_from_the_option_the_name_then_the_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert pick_provider("openai", "claude-x") == "openai"
    assert pick_provider(None, "Claude-3") == "anthropic"
    assert pick_provider(None, "gpt-4o") == "openai"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert pick_provider(None, "my-model") == "anthropic"
    assert pick_provider(None, "local-model", "http://127.0.0.1:8080/v1") == "openai"
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert pick_provider(None, "my-model") == "openai"


def test_a_tool_line_cuts_long_arguments_and_names_an_error() -> None:
    call = ToolCall("memory", {"text": "x" * 200}, id="c")
    ok = ToolFinished(call, ToolResultMessage(call_id="c", name="memory", output="added"))
    line = tool_line(ok)
    assert line.startswith('  [memory] {"text":"xxx')
    assert line.endswith("… -> ok")
    assert len(line) == len("  [memory] ") + 120 + len(" -> ok")
    short = ToolCall("memory", {"text": "y"}, id="d")
    failed = ToolResultMessage(
        call_id="d", name="memory", output="not found: y\nmore", is_error=True
    )
    assert (
        tool_line(ToolFinished(short, failed)) == '  [memory] {"text":"y"} -> error: not found: y'
    )
    assert describe_usage(Usage()).endswith("cache hit rate n/a")


def test_anthropic_429_retried_and_a_failing_turn_leaves_the_chat_going(home: Path) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}}
    with loopback_server() as server:
        server.reply(error, status=429, headers=FAST_RETRY)
        server.reply(anthropic_message("First answer."))
        for _ in range(4):  # the request and its three retries
            server.reply(error, status=500, headers=FAST_RETRY)
        server.reply(anthropic_message("Back again."))
        result = run(
            "chat",
            home,
            "--provider",
            "anthropic",
            "--model",
            "any-name",
            "--base-url",
            server.base_url.removesuffix("/v1"),
            env={"ANTHROPIC_API_KEY": "k", "NO_PROXY": "127.0.0.1"},
            stdin="one\ntwo\nthree\n",
        )
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Ada> First answer.\nAda> Back again.\n"
    assert "answered HTTP 500 for model 'any-name': overloaded" in result.stderr
    assert len(bodies) == 7
    # The failed turn is kept; consecutive user turns go as one.
    texts = [[b["text"] for b in m["content"]] for m in bodies[-1]["messages"]]
    assert texts == [["one"], ["First answer."], ["two", "three"]]


def test_a_broken_answer_and_bytes_that_are_not_utf8_never_end_the_chat(home: Path) -> None:
    from _loopback_openai import SSE

    with loopback_server() as server:
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        text = {"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}
        server.reply(SSE(((None, {**chunk, "choices": [text]}),)))  # no end: broken
        server.reply(completion("Second answer."))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TOOLNEXUS_"))}
        result = subprocess.run(
            [str(SCRIPT), "chat", str(home), "--model", "m", "--base-url", server.base_url],
            input=b"first\ncaf\xe9 au lait\n",
            capture_output=True,
            timeout=TIMEOUT,
            env={**env, "OPENAI_API_KEY": "k", "NO_PROXY": "127.0.0.1"},
            check=False,
        )
        second = server.bodies[-1]["messages"][-1]["content"]
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0, err
    assert out == "Ada> Hel\nAda> Second answer.\n"  # the broken line is ended
    assert "toolnexus chat: " in err
    assert "the answer broke off" in err
    assert "Traceback" not in err
    assert second == "caf\ufffd au lait"
