"""The memory file format: parsing rules, lossless rendering, and edits against a model."""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from toolnexus.agents import Home
from toolnexus.errors import MemoryEditError
from toolnexus.memory import Block, MemoryStore, parse_memory
from toolnexus.memory._document import format_entry, normalize_text
from toolnexus.scanner._engine import scan_text
from toolnexus.soul import compose_soul


def test_parse_snapshot() -> None:
    text = (
        "# Memory\n"
        "\n"
        "- first\n"
        "  continued\n"
        "\tby tab\n"
        "- second\n"
        "* a star bullet is prose\n"
        "-not an entry either\n"
        "  indented prose\n"
        "- last, no newline"
    )
    doc = parse_memory(text)
    assert doc.blocks == (
        Block(kind="prose", raw="# Memory\n\n", text="# Memory\n\n", line=1),
        Block(
            kind="entry",
            raw="- first\n  continued\n\tby tab\n",
            text="first\ncontinued\nby tab",
            line=3,
        ),
        Block(kind="entry", raw="- second\n", text="second", line=6),
        Block(
            kind="prose",
            raw="* a star bullet is prose\n-not an entry either\n  indented prose\n",
            text="* a star bullet is prose\n-not an entry either\n  indented prose\n",
            line=7,
        ),
        Block(kind="entry", raw="- last, no newline", text="last, no newline", line=10),
    )
    assert doc.entries == ("first\ncontinued\nby tab", "second", "last, no newline")
    assert doc.render() == text
    assert (doc.bom, doc.newline) == (False, "\n")


def _one_style(text: str) -> bool:
    """Whether every line of `text` ends the same way (LF only, or CRLF only)."""
    body = text.removeprefix("\ufeff")
    bare = body.replace("\r\n", "")
    return "\r" not in bare and ("\r\n" not in body or "\n" not in bare)


@pytest.mark.parametrize(
    ("text", "entries", "newline", "bom"),
    [
        pytest.param("", (), "\n", False, id="empty"),
        pytest.param("\ufeff", (), "\n", True, id="bom-only"),
        pytest.param("\ufeff- a\r\n- b\r\n", ("a", "b"), "\r\n", True, id="bom-crlf"),
        pytest.param("- a\r\n  b\r\n", ("a\nb",), "\r\n", False, id="crlf-continuation"),
        pytest.param("- a\r", ("a",), "\n", False, id="trailing-cr"),
        pytest.param("- a\r- b\r", ("a", "b"), "\n", False, id="cr-only"),
        pytest.param("- a\r\n- b\n- c\r", ("a", "b", "c"), "\r\n", False, id="mixed"),
        pytest.param("- \n", (), "\n", False, id="empty-entry-is-no-note"),
        pytest.param("- a\n- a\n- b\n", ("a", "b"), "\n", False, id="identical-entries-one-note"),
        pytest.param("- a\n\n  b\n", ("a\n\nb",), "\n", False, id="blank-then-indent-continues"),
        pytest.param(
            "- a\r\n\r\n\r\n  b\r\n", ("a\n\n\nb",), "\r\n", False, id="blank-run-crlf-continues"
        ),
        pytest.param("- a\n\nb\n", ("a",), "\n", False, id="blank-then-prose-ends-entry"),
        pytest.param("- a\n\n- b\n", ("a", "b"), "\n", False, id="blank-between-entries"),
        pytest.param("- a\n\n\n", ("a",), "\n", False, id="trailing-blank-lines-are-prose"),
        pytest.param("- a\n  \n  b\n", ("a\n\nb",), "\n", False, id="indented-blank-continues"),
        pytest.param("- a\n    b\n", ("a\n  b",), "\n", False, id="deeper-indent-kept"),
    ],
)
def test_parse_cases(text: str, entries: tuple[str, ...], newline: str, bom: bool) -> None:
    doc = parse_memory(text)
    assert (doc.entries, doc.newline, doc.bom) == (entries, newline, bom)
    if not _one_style(text):
        # Lone CRs and mixed endings come back in the file's one style.
        expected = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", newline)
        assert doc.render() == expected
    else:
        assert doc.render() == text


def test_cr_only_line_endings_read_the_same_for_the_tool_and_the_soul(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
    (tmp_path / "MEMORY.md").write_bytes(b"# Notes\r- alpha\r- beta\r- gamma\r")
    assert compose_soul(tmp_path).memory_entries == ("alpha", "beta", "gamma")
    assert Home(tmp_path).memory().entries == ("alpha", "beta", "gamma")
    out = MemoryStore(tmp_path, "self", limit=8000, fsync=False).remove("beta")
    assert out.startswith('removed from MEMORY.md: "beta".')
    # One entry removed, nothing else: the file comes back in LF.
    assert (tmp_path / "MEMORY.md").read_bytes() == b"# Notes\n- alpha\n- gamma\n"
    assert compose_soul(tmp_path).memory_entries == ("alpha", "gamma")


def test_trimming_trailing_whitespace_keeps_entries_whole(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path, "self", limit=10**6, fsync=False)
    s.add("deploy steps:\n\n1. build\n2. push")
    s.add("next")
    assert s.path.read_text(encoding="utf-8") == (
        "- deploy steps:\n  \n  1. build\n  2. push\n- next\n"
    )
    # An editor or pre-commit hook strips trailing whitespace and saves.
    trimmed = "\n".join(line.rstrip() for line in s.path.read_text(encoding="utf-8").split("\n"))
    s.path.write_text(trimmed, encoding="utf-8")
    assert Home(s.dir).memory().entries == ("deploy steps:\n\n1. build\n2. push", "next")
    s.remove("deploy steps")
    assert s.path.read_text(encoding="utf-8") == "- next\n"


def test_chars_counts_what_a_prompt_holds() -> None:
    assert parse_memory("\ufeff- ab\r\n").chars == 5


@pytest.mark.slow
@given(st.text())
def test_any_text_parses_and_renders_back_exactly(text: str) -> None:
    doc = parse_memory(text)
    if _one_style(text):
        assert doc.render() == text
    else:  # lone CRs or mixed endings: rendered in the file's one style, same entries
        again = parse_memory(doc.render())
        assert again.entries == doc.entries
        assert again.render() == doc.render()
    assert len(doc.entries) == sum(1 for b in doc.blocks if b.kind == "entry")


@given(st.text(), st.sampled_from(["\n", "\r\n"]))
def test_format_entry_parses_back_to_one_entry(text: str, newline: str) -> None:
    text = normalize_text(text)
    doc = parse_memory(format_entry(text).replace("\n", newline))
    assert [b.text for b in doc.blocks if b.kind == "entry"] == [text]
    assert doc.entries == ((text,) if text.strip() else ())


# -- the store against a simple list model -------------------------------------------

# Text a model might send: arbitrary Unicode, with newlines and markup-like lines.
notes = (
    st.lists(
        st.one_of(
            # Invisible and control characters are rejected by design (test_safety).
            st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Zl", "Zp")),
            st.sampled_from(["\n", "\r\n", "- ", "# ", "  ", "\t", "a", "b"]),
        ),
        min_size=1,
        max_size=16,
    )
    .map("".join)
    .filter(lambda t: bool(t.strip()) and not scan_text(normalize_text(t).strip()))
)

# Text from a few words, so entries overlap and matches are often ambiguous.
words = (
    st.lists(st.sampled_from(["a", "b", "metric", "units", " ", "\n"]), min_size=1, max_size=6)
    .map("".join)
    .filter(lambda t: bool(t.strip()))
)
texts = st.one_of(notes, words)

prose_lines = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=30
).filter(lambda line: not line.startswith("- "))
prose = st.tuples(
    st.booleans(),
    st.sampled_from(["\n", "\r\n"]),
    st.lists(prose_lines, max_size=5),
    st.booleans(),
).map(lambda p: ("\ufeff" if p[0] else "") + p[1].join(p[2]) + (p[1] if p[3] and p[2] else ""))

steps = st.lists(
    st.one_of(
        st.tuples(st.just("add"), texts, st.none()),
        st.tuples(st.just("add"), words, st.none()),
        st.tuples(st.just("replace"), texts, texts),
        st.tuples(st.just("remove"), texts, st.none()),
        # Edits that hit existing entries: a slice of the n-th entry of the model.
        st.tuples(st.just("replace-nth"), st.integers(0, 20), texts),
        st.tuples(st.just("remove-nth"), st.integers(0, 20), st.none()),
        # Short queries that often match several entries.
        st.tuples(
            st.sampled_from(["replace", "remove"]),
            st.sampled_from(["a", "b", "i", "t", "metric"]),
            texts,
        ),
    ),
    min_size=1,
    max_size=14,
)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def apply_model(entries: list[str], action: str, text: str, with_: str | None) -> str:
    """Apply one action to the model (the spec's rules, written independently of the store).

    Text is compared in NFC, entries are kept as written.
    """
    query = normalize_text(text)
    if action == "add":
        entry = query.strip()
        if nfc(entry) in {nfc(e) for e in entries}:
            return "duplicate"
        entries.append(entry)
        return "ok"
    whole = [e for q in (query, query.strip()) for e in entries if nfc(e) == nfc(q)]
    hits = set(whole[:1]) or {e for e in entries if nfc(query) in nfc(e)}
    if not hits:
        return "not_found"
    if len(hits) > 1:
        return "ambiguous"
    old = hits.pop()
    if action == "remove":
        entries[:] = [e for e in entries if e != old]
        return "ok"
    assert with_ is not None
    replacement = normalize_text(with_)
    if nfc(old) in (nfc(query), nfc(query.strip())):
        new = replacement
    else:
        # SPEC §3: keep what is around the match, except what `with` restates.
        base, needle = (old, query) if query in old else (nfc(old), nfc(query))
        before, _, after = base.partition(needle)
        if not before and replacement.startswith(needle):
            new = replacement
        else:
            if replacement.startswith(before):
                before = ""
            if replacement.endswith(after):
                after = ""
            new = before + replacement + after
    new = new.strip()
    if not new:
        return "invalid"
    if scan_text(new):
        return "rejected"
    others = [e for e in entries if e != old]
    if nfc(new) != nfc(old) and nfc(new) in map(nfc, others):
        entries[:] = others  # one note now: the entry already there stays where it is
        return "ok"
    replaced = [new if e == old else e for e in entries]
    entries[:] = [e for k, e in enumerate(replaced) if nfc(e) not in map(nfc, replaced[:k])]
    return "ok"


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.slow
@given(prose, steps)
def test_store_matches_a_list_model(
    initial: str, actions: list[tuple[str, object, object]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "MEMORY.md"
        path.write_bytes(initial.encode("utf-8"))
        store = MemoryStore(Path(tmp), "self", limit=10_000_000, fsync=False)
        assert Home(store.dir).memory().entries == ()
        prose_before = initial.removeprefix("\ufeff")
        model: list[str] = []
        for action, first, second in actions:
            if action.endswith("-nth"):
                if not model:
                    continue
                entry = model[int(str(first)) % len(model)]
                text = entry[: max(1, len(entry) // 2)] if entry.strip() else entry
                if not text.strip():
                    continue
                action = action.removesuffix("-nth")
            else:
                text = str(first)
            with_ = None if second is None else str(second)
            expected = apply_model(model, action, text, with_)
            event(f"{action}: {expected}")
            try:
                if action == "add":
                    message = store.add(text)
                    outcome = "duplicate" if message.startswith("already") else "ok"
                elif action == "replace":
                    assert with_ is not None
                    store.replace(text, with_)
                    outcome = "ok"
                else:
                    store.remove(text)
                    outcome = "ok"
            except MemoryEditError as exc:
                outcome = exc.kind
            assert outcome == expected
            doc = parse_memory(path.read_bytes().decode("utf-8"))
            assert list(doc.entries) == model
            assert doc.bom == initial.startswith("\ufeff")
            kept = "".join(b.raw for b in doc.blocks if b.kind == "prose")
            # Prose is untouched (blocks hold it with LF line ends); at most a line
            # end is added where a new entry followed.
            prose_lf = normalize_text(prose_before)
            assert kept in (prose_lf, prose_lf + "\n")
