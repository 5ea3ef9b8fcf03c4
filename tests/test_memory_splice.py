"""Edits splice a parsed memory file: checked against parsing the whole text again.

The memory tool edits a document without parsing the whole file again (see
`_memsplice`). Whatever the file holds (prose, blank lines, continuation lines,
empty entries, copies, NFD text, no final newline), an edited document must be
exactly what a parse of its text gives, and what the straightforward edit (change
the lines, parse everything) gives.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from toolnexus.memory import MemoryStore
from toolnexus.memory import _splice as _memsplice
from toolnexus.memory._document import (
    MemoryDocument,
    format_entry,
    make,
    nfc,
    parse_memory,
    parse_parts,
    prose,
)

# -- an independent reference: the line-by-line parser and whole-file edits -----------------


def reference_blocks(body: str) -> list[tuple[str, str, str, int]]:
    """Blocks of LF-only text, line by line, as the format's rules say."""
    lines = [p + "\n" for p in body.split("\n")[:-1]]
    if body and not body.endswith("\n"):
        lines.append(body.split("\n")[-1])
    out: list[tuple[str, str, str, int]] = []
    i = 0
    while i < len(lines):
        j = i + 1
        if lines[i].startswith("- "):
            while j < len(lines):
                if lines[j][:1] in (" ", "\t"):
                    j += 1
                    continue
                k = j
                while k < len(lines) and lines[k] == "\n":
                    k += 1
                if k in (j, len(lines)) or lines[k][:1] not in (" ", "\t"):
                    break
                j = k
            raw = "".join(lines[i:j])
            more = [m.removesuffix("\n") for m in lines[i + 1 : j]]
            rest = [m[2:] if m.startswith("  ") else m[1:] for m in more]
            text = "\n".join([lines[i].removesuffix("\n")[2:], *rest])
            out.append(("entry", raw, text, i + 1))
        else:
            while j < len(lines) and not lines[j].startswith("- "):
                j += 1
            raw = "".join(lines[i:j])
            out.append(("prose", raw, raw, i + 1))
        i = j
    return out


def reference_edit(doc: MemoryDocument, action: str, old: str, new: str) -> MemoryDocument:
    """The edit done the slow way: change the raw lines, parse the whole text."""
    blocks = doc.blocks
    raws = [b.raw for b in blocks]
    if action == "add":
        last = [i for i, b in enumerate(blocks) if b.kind == "entry"]
        at = last[-1] + 1 if last else len(raws)
        if at and not raws[at - 1].endswith("\n"):
            raws[at - 1] += "\n"
        raws.insert(at, format_entry(new))
    else:
        hits = [i for i, b in enumerate(blocks) if b.kind == "entry" and nfc(b.text) == nfc(old)]
        if action == "replace" and hits:
            raws[hits[0]] = format_entry(new)
            hits = hits[1:]
        raws = [r for i, r in enumerate(raws) if i not in hits]
    return make(parse_parts("".join(raws)), doc.bom, doc.newline)


def same(a: MemoryDocument, b: MemoryDocument) -> None:
    """Every view of the two documents agrees (blocks with their lines, notes, size)."""
    assert a.blocks == b.blocks
    assert a.entries == b.entries
    assert a.chars == b.chars
    assert a.extra == b.extra
    assert a.empties == b.empties
    assert a.render() == b.render()
    assert prose(a) == prose(b)
    assert a == b


# -- text a person or an editor may leave in the file -----------------------------------------

line = st.sampled_from(
    [
        "- a",
        "- b",
        "- a",  # a copy
        "- cafe\u0301",  # NFD: the same note as the next
        "- caf\u00e9",
        "- ",  # an empty entry
        "-  ",
        "  more",
        "\tmore",
        " ",
        "",
        "",
        "# Heading",
        "prose",
        "* star",
        "-not an entry",
    ]
)
bodies = st.tuples(st.lists(line, max_size=14), st.booleans()).map(
    lambda p: "\n".join(p[0]) + ("\n" if p[1] and p[0] else "")
)
texts = st.sampled_from(
    ["a", "b", "new note", "caf\u00e9", "x\ny", "x\n\ny", "x\n  y", "- z", "a\n"]
)


@settings(max_examples=400, deadline=None)
@given(bodies)
def test_the_parser_follows_the_line_rules(body: str) -> None:
    doc = parse_memory(body)
    assert [(b.kind, b.raw, b.text, b.line) for b in doc.blocks] == reference_blocks(body)


@settings(max_examples=600, deadline=None)
@given(bodies, st.sampled_from(["add", "replace", "remove"]), st.integers(0, 20), texts)
def test_a_spliced_edit_is_what_parsing_the_result_gives(
    body: str, action: str, nth: int, text: str
) -> None:
    doc = parse_memory(body)
    doc.entries  # noqa: B018 (what a write knows before it edits)
    notes = doc.entries
    old = notes[nth % len(notes)] if notes else "a"
    if action == "add":
        edited = _memsplice.append_entry(doc, text)
    elif action == "replace":
        edited = _memsplice.replace_entries(doc, old, text)
    else:
        edited = _memsplice.remove_entries(doc, old)
    same(edited, parse_memory(edited.render()))
    same(edited, reference_edit(doc, action, old, text))
    # A second edit on the spliced document (what the next write starts from).
    again = _memsplice.append_entry(edited, "second")
    same(again, parse_memory(again.render()))


def test_a_splice_whose_seams_do_not_hold_falls_back_to_a_whole_parse() -> None:
    doc = parse_memory("- a\n- b\n")
    # Indented prose right after an entry would read as that entry's continuation.
    broken = _memsplice._splice(doc, 1, 2, [(False, "  x\n", "  x\n")])
    assert broken.entries == ("a\nx",)
    same(broken, parse_memory("- a\n  x\n"))


def test_document_views_are_built_on_demand_and_never_change() -> None:
    doc = parse_memory("# M\n- a\n- a\n- \n- b")
    assert doc.entries == ("a", "b")
    assert [b.line for b in doc.extra] == [3, 4]
    assert [doc.copies(t) for t in ("a", "b", "c")] == [2, 1, 0]
    assert [doc.note(t) for t in ("a", "zz")] == ["a", None]
    assert doc.empties == 1
    try:
        doc.bom = True  # type: ignore[misc]
    except AttributeError:
        pass
    else:  # pragma: no cover
        raise AssertionError("a document must be immutable")
    assert hash(doc) == hash(parse_memory("# M\n- a\n- a\n- \n- b"))
    built = MemoryDocument(blocks=doc.blocks, bom=False, newline="\n")
    assert built == doc
    assert built.entries == doc.entries


def test_a_file_changed_by_someone_else_is_parsed_afresh(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, "self", limit=8000, fsync=False)
    store.add("first note")
    # Someone else rewrites the file between two writes of this process.
    store.path.write_text("- their note\n- first note\n", encoding="utf-8")
    store.replace("their", "their note, edited")
    assert store.path.read_text(encoding="utf-8") == "- their note, edited\n- first note\n"
    # And again with the same size as what this process last wrote.
    store.path.write_text("- THEIR NOTE, EDITED\n- first note\n", encoding="utf-8")
    store.add("second note")
    assert store.path.read_text(encoding="utf-8") == (
        "- THEIR NOTE, EDITED\n- first note\n- second note\n"
    )


def test_nfd_copies_are_one_note_after_an_edit() -> None:
    nfd = unicodedata.normalize("NFD", "caf\u00e9")
    doc = parse_memory(f"- {nfd}\n- caf\u00e9\n- x\n")
    edited = _memsplice.remove_entries(doc, "caf\u00e9")
    same(edited, parse_memory("- x\n"))


def test_an_edit_leaves_the_style_a_parse_of_its_text_finds() -> None:
    # No line break left: the text reads as LF, whatever the file was.
    doc = parse_memory("- a\r\nfoo")
    assert doc.newline == "\r\n"
    edited = _memsplice.remove_entries(doc, "a")
    same(edited, parse_memory(edited.render()))
    assert edited.newline == "\n"
    # Prose left first that starts with U+FEFF reads as a BOM.
    edited = _memsplice.remove_entries(parse_memory("- a\n\ufeffnotes\n"), "a")
    same(edited, parse_memory(edited.render()))
    assert edited.bom


def test_the_next_write_starts_from_what_a_parse_would_give(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, "self", limit=8000, fsync=False)
    store.path.write_bytes(b"- a\r\nfoo")
    store.remove("a")
    store.add("b")  # from the document this process kept: LF, as the file now reads
    assert store.path.read_bytes() == b"foo\n- b\n"


def test_a_document_copies_and_pickles() -> None:
    import copy
    import pickle

    doc = parse_memory("\ufeff# M\r\n- a\r\n- a\r\n- caf\u00e9\r\n")
    for again in (copy.copy(doc), copy.deepcopy(doc), pickle.loads(pickle.dumps(doc))):
        same(again, doc)


def test_the_kept_documents_are_safe_across_threads(tmp_path: Path) -> None:
    import sys
    import threading

    from toolnexus.memory import _tool as memory

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    errors: list[BaseException] = []
    doc = parse_memory("- a\n")

    def churn(n: int) -> None:
        try:
            for k in range(2000):
                memory._remember(f"{n}-{k % 100}", b"- a\n", doc)
        except BaseException as exc:
            errors.append(exc)

    try:
        threads = [threading.Thread(target=churn, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert len(memory._parsed) <= memory._PARSED_MAX
