"""Recall's optional semantic index (the `semantic` extra), against a loopback server that
speaks the OpenAI `/v1/embeddings` wire format to the official `openai` client.

The server embeds by meaning in the crudest way that can be checked: each text becomes a
vector over a few concepts (a dog, a boat, money), so "dog" is near "puppy" though no word
is shared. Quality is judged lexically elsewhere (bench/bench_recall_quality.py); this is
the plumbing: the index is built as recall goes, kept in the home's state, fused with
the words, taken away with its message, and an endpoint that fails leaves the words
answering, with one line that says so.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest
from _loopback_openai import LoopbackServer, loopback_server
from test_cli import run

from toolnexus.agents import Conversations, recall_tool
from toolnexus.conversations._semantic import Embeddings

pytest.importorskip("numpy")

CONCEPTS = (("dog", "puppy", "hound"), ("boat", "kayak", "canoe"), ("money", "budget", "cash"))


def meaning(text: str) -> list[float]:
    lowered = text.lower()
    return [float(sum(w in lowered for w in words)) + 0.01 for words in CONCEPTS]


def embeddings(body: dict[str, Any]) -> tuple[int, Any]:
    texts = body["input"]
    data = [
        {"object": "embedding", "index": k, "embedding": meaning(t)} for k, t in enumerate(texts)
    ]
    usage = {"prompt_tokens": 1, "total_tokens": 1}
    return 200, {"object": "list", "data": data, "model": body["model"], "usage": usage}


def serve_embeddings(server: LoopbackServer, times: int = 20) -> None:
    for _ in range(times):
        server.reply_with(embeddings)


def chat(*turns: str) -> list[dict[str, Any]]:
    roles = ("user", "assistant")
    return [{"role": roles[k % 2], "content": t} for k, t in enumerate(turns)]


@pytest.fixture
def semantic(monkeypatch: pytest.MonkeyPatch) -> Any:
    with loopback_server() as server:
        monkeypatch.setenv("TOOLNEXUS_EMBEDDINGS_URL", server.base_url)
        monkeypatch.setenv("TOOLNEXUS_EMBEDDINGS_MODEL", "concepts-1")
        monkeypatch.setenv("TOOLNEXUS_EMBEDDINGS_KEY", "sk-loopback")
        serve_embeddings(server)
        yield server


def test_the_environment_turns_it_on() -> None:
    assert Embeddings.from_env({}) is None
    on = Embeddings.from_env(
        {"TOOLNEXUS_EMBEDDINGS_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "k"}
    )
    assert on == Embeddings("http://127.0.0.1:9/v1", "text-embedding-3-small", "k")


def test_meaning_finds_what_no_word_shares_and_the_index_grows_as_recall_goes(
    home: Path, semantic: LoopbackServer
) -> None:
    conversations = Conversations(home)
    conversations.import_messages(chat("We adopted a puppy last week.", "Lovely!"))
    conversations.import_messages(chat("The kayak needs a new paddle.", "Order one."))
    [best, *_] = conversations.recall("dog")  # no message says "dog"
    assert "puppy" in best.snippet
    first = [r.body["input"] for r in semantic.requests]
    assert sorted(first[0]) == sorted(
        ["We adopted a puppy last week.", "Lovely!", "The kayak needs a new paddle.", "Order one."]
    )
    assert first[1:] == [["dog"]]  # then the query alone
    assert semantic.requests[0].headers["authorization"] == "Bearer sk-loopback"
    assert semantic.bodies[0]["model"] == "concepts-1"
    # A new message is embedded by the next recall, and only it.
    conversations.import_messages(chat("The canoe trip is on Sunday."))
    [best, *_] = conversations.recall("boat")
    assert "kayak" in best.snippet or "canoe" in best.snippet
    assert [r.body["input"] for r in semantic.requests[2:]] == [
        ["The canoe trip is on Sunday."],
        ["boat"],
    ]
    # The words still lead where they match: fused, not replaced.
    [best, *_] = conversations.recall("paddle")
    assert "The kayak needs a new paddle." in [t.text for t in best.window if t.hit]


def test_a_removed_conversation_takes_its_vectors_with_it(
    home: Path, semantic: LoopbackServer
) -> None:
    conversations = Conversations(home)
    id, _ = conversations.import_messages(chat("We adopted a puppy.", "Lovely!"))
    assert conversations.recall("dog")
    talk = conversations._talk()
    assert talk is not None
    assert len(talk.vectors("concepts-1")) == 2
    conversations.remove(id)
    assert talk.vectors("concepts-1") == []
    assert conversations.recall("dog") == []


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_endpoint_that_fails_leaves_the_words_answering_with_one_line(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    down = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv("TOOLNEXUS_EMBEDDINGS_URL", down)
    Conversations(home).import_messages(chat("The kayak needs a new paddle.", "Order one."))
    hits, notes = Conversations(home).recall_noted("kayak paddle")
    assert "paddle" in hits[0].snippet
    [note] = notes
    assert note.startswith(f"semantic search is unavailable ({down}: ")
    assert note.endswith("these hits match the words alone")
    output = asyncio.run(recall_tool(home).execute({"query": "kayak paddle"})).output
    assert output.splitlines()[0].startswith("1 hit for 'kayak paddle'")
    assert output.splitlines()[-1] == f"({note})"
    done = run("recall", home, "kayak paddle", env={"TOOLNEXUS_EMBEDDINGS_URL": down})
    assert done.returncode == 0
    assert "paddle" in done.stdout
    [line] = done.stderr.splitlines()
    assert line.startswith("toolnexus recall: semantic search is unavailable")


def test_the_database_store_keeps_the_index_too(
    tmp_path: Path, pg_dsn: str, semantic: LoopbackServer
) -> None:
    from _pghome import make_home

    home = make_home(tmp_path / "a", pg_dsn)
    conversations = Conversations(home)
    id, _ = conversations.import_messages(chat("We adopted a puppy.", "Lovely!"))
    [best, *_] = conversations.recall("dog")
    assert "puppy" in best.snippet
    assert not (home / ".toolnexus").exists()  # kept in the database, beside the messages
    talk = conversations._talk()
    assert talk is not None
    assert len(talk.vectors("concepts-1")) == 2
    conversations.remove(id)
    assert talk.vectors("concepts-1") == []
