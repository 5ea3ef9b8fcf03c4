"""Recall's one ranking (SPEC §11): every message that holds any telling word, ranked
together with the turns around it; hits a model can use; time phrases; imported times.

Each test imports a small conversation written for what it checks into a real home
(SQLite, FTS5) and asks `Conversations.recall`, the tool or the command line.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from test_cli import run

from toolnexus.agents import Conversations, recall_tool
from toolnexus.conversations._query import parse_query, when_of
from toolnexus.errors import ConversationError


def chat(*turns: str, **fields: Any) -> list[dict[str, Any]]:
    """Alternating user / assistant turns, each with `fields` added."""
    roles = ("user", "assistant")
    return [{"role": roles[k % 2], "content": t, **fields} for k, t in enumerate(turns)]


def write(path: Path, messages: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


def test_the_list_fills_when_no_message_holds_every_word(home: Path) -> None:
    conversations = Conversations(home)
    conversations.import_messages(
        chat(
            "The kayak trip is on Saturday.",
            "Great, bring the dry bags.",
            "The lighthouse tour was cancelled.",
            "Pity, the lighthouse is lovely.",
            "Saturday looks rainy though.",
        )
    )
    hits = conversations.recall("kayak lighthouse saturday", limit=5)
    texts = [t.text for h in hits for t in h.window if t.hit]
    assert len(texts) >= 3  # not one or two: every message holding a word is ranked
    assert any("kayak" in t for t in texts)
    assert any("lighthouse" in t for t in texts)


def test_question_words_do_not_outrank_content_words(home: Path) -> None:
    conversations = Conversations(home)
    filler = [f"What did you do when you were there, and why did you go? ({k})" for k in range(6)]
    conversations.import_messages(chat(*filler))
    conversations.import_messages(chat("I went to a support group yesterday.", "How was it?"))
    [best, *_] = conversations.recall("When did I tell you about the support group?")
    assert "support group" in best.snippet


def test_an_answer_in_the_next_turn_is_found_through_the_window(home: Path) -> None:
    conversations = Conversations(home)
    conversations.import_messages(
        chat("Which restaurant did you book for Friday?", "Luigi's, at seven.", "Thanks!")
    )
    [hit] = conversations.recall("restaurant booked for Friday")
    assert hit.seq == 1
    texts = [t.text for t in hit.window]
    assert texts[:2] == ["Which restaurant did you book for Friday?", "Luigi's, at seven."]
    listed = hit.to_json()
    assert set(listed) == {
        "kind", "session", "time", "role", "snippet", "change", "withheld", "window",
    }  # fmt: skip
    assert listed["window"][1] == {  # type: ignore[index]
        "seq": 2,
        "time": hit.window[1].time,
        "role": "assistant",
        "name": "",
        "text": "Luigi's, at seven.",
        "hit": hit.window[1].hit,
    }


def test_neighbouring_hits_are_merged_not_repeated(home: Path) -> None:
    conversations = Conversations(home)
    conversations.import_messages(
        chat(
            "Let's plan the harbour festival.",
            "The harbour festival needs volunteers.",
            "Unrelated: the printer is jammed.",
            "Still jammed, I fear.",
            "Call the technician then.",
        )
    )
    [hit, *others] = conversations.recall("harbour festival", limit=5)
    assert {1, 2} <= {t.seq for t in hit.window if t.hit}
    assert all(t.seq not in (1, 2) for other in others for t in other.window)  # not repeated


def test_a_named_speaker_and_an_irregular_verb_are_honoured(home: Path) -> None:
    conversations = Conversations(home)
    conversations.import_messages(
        [
            {"role": "user", "name": "Caroline", "content": "I chose the agency for its kindness."},
            {"role": "assistant", "name": "Melanie", "content": "I chose mine for its price."},
        ]
    )
    [best, *_] = conversations.recall("Why did Caroline choose the agency?", limit=2)
    assert best.window[0].name == "Caroline"
    assert "kindness" in best.snippet


def test_a_quoted_phrase_is_found_as_one(home: Path) -> None:
    conversations = Conversations(home)
    conversations.import_messages(chat("the blue whale was huge", "a whale of a blue time"))
    [best, *_] = conversations.recall('"blue whale"', limit=2)
    assert best.snippet == "the blue whale was huge"


def test_imported_times_are_kept_and_a_date_phrase_favours_them(home: Path, tmp_path: Path) -> None:
    conversations = Conversations(home)
    may = write(
        tmp_path / "may.jsonl", chat("We adopted a puppy.", timestamp="2023-05-08T13:56:00Z")
    )
    july = write(tmp_path / "july.jsonl", chat("We adopted a puppy!", timestamp=1656676800))
    conversations.import_files([may, july])
    assert sorted(s.started for s in conversations.list()) == [
        "2022-07-01T12:00:00.000Z",
        "2023-05-08T13:56:00.000Z",
    ]
    # Equal words: without a time phrase the newer (May 2023) wins; with one, its span does.
    assert conversations.recall("adopted puppy", limit=2)[0].time.startswith("2023-05")
    for query, month in (
        ("puppy adopted in May 2023", "2023-05"),
        ("puppy on 8 May, 2023", "2023-05"),
        ("puppy 2022-07-01", "2022-07"),
        ("puppy in July", "2022-07"),
        ("the puppy, during 2022", "2022-07"),
    ):
        [best, *_] = conversations.recall(query, limit=2)
        assert best.time.startswith(month), query


def test_a_relative_time_phrase_is_read_against_now() -> None:
    now = datetime(2026, 12, 5, 10, 0, tzinfo=timezone.utc)
    week = when_of("what did we decide last week", now=now)
    assert week is not None
    assert week.holds("2026-11-30T09:00:00.000Z")
    assert not week.holds("2026-11-20T09:00:00.000Z")
    yesterday = when_of("the call yesterday", now=now)
    assert yesterday is not None
    assert yesterday.holds("2026-12-04T18:00:00.000Z")
    assert when_of("3 weeks ago", now=now) is not None
    assert when_of("no time here") is None
    february = when_of("on 31 February 2023")  # no such day: the month, never an error
    assert february is not None
    assert (february.start, february.end) == (
        "2023-02-01T00:00:00.000Z",
        "2023-03-01T00:00:00.000Z",
    )


def test_a_bad_time_in_an_import_is_named(home: Path, tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.jsonl", [{"role": "user", "content": "x", "timestamp": "soon"}])
    with pytest.raises(ConversationError, match=r"bad.jsonl:1: timestamp: expected a time"):
        Conversations(home).import_files([bad])


@pytest.mark.parametrize(
    "query",
    ['"', '""', "NEAR(a b)", "*", "-x", "a OR", "((", "col:foo", "^x", "AND OR NOT", "x* -y",
     "'", "…", "   ", "\x00", '"unbalanced phrase', "w*", "2023-13-45", "in Smarch",
     "laſt week", "in ſep", "ſix days ago", "5 ſept 2023", "ẞ* K"],
)  # fmt: skip
def test_query_text_is_never_search_syntax(home: Path, query: str) -> None:
    Conversations(home).import_messages(chat("NEAR foo bar: x OR y AND z", "col:foo ^x"))
    hits = Conversations(home).recall(query)
    assert isinstance(hits, list)
    result = asyncio.run(recall_tool(home).execute({"query": query}))
    assert not result.is_error, result.output
    assert Conversations(home).recall("foo bar")  # and a plain query still finds


def test_stop_words_alone_are_still_searched() -> None:
    asked = parse_query("what is the")
    assert [g.forms for g in asked.groups] == [("what",), ("is",), ("the",)]
    asked = parse_query("When did Caroline go to the support group?")
    assert [g.forms for g in asked.groups] == [
        ("caroline",),
        ("go", "goes", "went", "gone"),
        ("support",),
        ("group",),
    ]


def test_the_command_line_prints_the_window_as_json(home: Path) -> None:
    Conversations(home).import_messages(chat("Which restaurant for Friday?", "Luigi's."))
    done = run("recall", home, "restaurant Friday", "--json")
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    hit = json.loads(line)
    assert [t["text"] for t in hit["window"]] == ["Which restaurant for Friday?", "Luigi's."]
    shown = run("recall", home, "restaurant Friday").stdout
    assert "[assistant] Luigi's." in shown.splitlines()[2]


def test_bad_times_are_named_whichever_way_messages_come_in(home: Path) -> None:
    conversations = Conversations(home)
    odd = ("garbage", 1e20, -1e11, float("nan"), float("inf"), "0001-01-01T00:00:00+05:00", True)
    for bad in odd:
        with pytest.raises(ConversationError, match=r"messages:1: timestamp: expected a time"):
            conversations.import_messages([{"role": "user", "content": "x", "timestamp": bad}])
    assert conversations.list() == []
    conversations.import_messages(
        [{"role": "user", "content": "x", "time": "2023-05-08T15:56:00+02:00"}]
    )
    [saved] = conversations.list()
    assert saved.started == "2023-05-08T13:56:00.000Z"  # UTC, four-digit years: sortable text


def test_turns_with_nothing_said_are_never_hits_and_windows_never_repeat(home: Path) -> None:
    conversations = Conversations(home)
    conversations.import_messages(
        [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "kayak trip"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "the boat leaks"},
            {"role": "assistant", "content": "patch the kayak"},
            {"role": "user", "content": "unrelated"},
            {"role": "assistant", "content": "kayak again"},
        ]
    )
    hits = conversations.recall("kayak boat", limit=5)
    shown = [(h.session, t.seq) for h in hits for t in h.window]
    assert len(shown) == len(set(shown))  # no turn in two hits
    found = [t for h in hits for t in h.window if t.hit]
    assert found
    assert all(t.text.strip() for t in found)  # the system prompt and the empty turn: context
    with pytest.raises(TypeError, match="limit is a whole number"):
        conversations.recall("kayak", limit=5.0)  # type: ignore[arg-type]


def test_a_month_needs_a_word_that_makes_it_a_time() -> None:
    assert when_of("this may be wrong") is None
    assert when_of("what we said in May") is not None
    plus_ten = timezone(timedelta(hours=10))
    utc = when_of("yesterday", now=datetime(2026, 12, 5, 1, 0, tzinfo=plus_ten))
    assert utc is not None
    assert utc.start == "2026-12-03T00:00:00.000Z"  # read in UTC, whatever `now` says
