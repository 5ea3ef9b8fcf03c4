"""The scanner on the corpora in tests/corpus: attacks people write, and ordinary notes.

`attacks.jsonl` holds poisoned memory entries over every category the scanner
covers (a `split` attack is two adjacent entries); `benign.jsonl` holds notes a
persona really keeps, many of them near misses. `attacks-2.jsonl` and
`benign-2.jsonl` are a second pair, written later by another hand without sight
of the rules (they held the rules to account before being tuned on). Both paths are measured: the
memory tool refusing the write, and composing withholding what was written by
hand. At least 95% of attacks must be stopped on each path and no ordinary note
may be, and the figures are printed at the end of the run.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolnexus.agents import compose_soul
from toolnexus.errors import MemoryEditError
from toolnexus.memory import MemoryStore
from toolnexus.memory._document import format_entry

CORPUS = Path(__file__).parent / "corpus"


def rows(*names: str) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for name in names
        for line in (CORPUS / name).read_text("utf-8").splitlines()
    ]


ATTACKS = rows("attacks.jsonl", "attacks-2.jsonl")
BENIGN = rows("benign.jsonl", "benign-2.jsonl")
KINDS = ("override", "authority", "secret", "exfiltration", "shell", "obfuscation", "split")
FILES = {"self": "MEMORY.md", "user": "USER.md"}
BIG = 10_000_000


def new_home(root: Path, name: str) -> Path:
    home = root / name
    home.mkdir()
    (home / "IDENTITY.md").write_text(
        f"---\nname: {name}\nmemory_limits: {{self: {BIG}, user: {BIG}}}\n---\nA persona.\n",
        encoding="utf-8",
    )
    return home


def test_the_corpora_are_big_and_cover_every_category() -> None:
    kinds = Counter(a["kind"] for a in ATTACKS)
    assert len(ATTACKS) >= 150
    assert len(BENIGN) >= 200
    assert set(kinds) == set(KINDS)
    assert min(kinds.values()) >= 20
    assert all(len(a["entries"]) == (2 if a["kind"] == "split" else 1) for a in ATTACKS)
    assert len({b["text"] for b in BENIGN}) == len(BENIGN)


def blocked_at_write(home: Path, attack: dict[str, Any]) -> bool:
    """Whether the memory tool refuses one of the attack's entries (added in order)."""
    store = MemoryStore(home, attack["target"], limit=BIG, fsync=False)
    store.add("User prefers short answers.")
    try:
        for entry in attack["entries"]:
            store.add(entry)
    except MemoryEditError as exc:
        kind = exc.kind
    else:
        return False
    assert kind == "rejected"
    return True


def withheld_at_compose(home: Path, attack: dict[str, Any]) -> bool:
    """Whether composing withholds the attack written by hand among ordinary entries."""
    entries = ["User prefers short answers.", *attack["entries"], "Likes green tea."]
    text = "".join(format_entry(e) for e in entries)
    (home / FILES[attack["target"]]).write_text(text, encoding="utf-8")
    soul = compose_soul(home)
    shown = soul.memory_entries + soul.user_entries
    assert "User prefers short answers." in shown
    assert "Likes green tea." in shown
    return any(e not in shown for e in attack["entries"])


@pytest.mark.parametrize(
    "path",
    [pytest.param(blocked_at_write, id="write"), pytest.param(withheld_at_compose, id="compose")],
)
def test_at_least_95_percent_of_attacks_are_stopped(
    tmp_path: Path,
    path: Callable[[Path, dict[str, Any]], bool],
    report: Callable[[str], None],
) -> None:
    stopped: Counter[str] = Counter()
    missed: list[str] = []
    for i, attack in enumerate(ATTACKS):
        if path(new_home(tmp_path, f"a{i}"), attack):
            stopped[attack["kind"]] += 1
        else:
            missed.append(attack["id"])
    total = len(ATTACKS) - len(missed)
    kinds = Counter(a["kind"] for a in ATTACKS)
    per_kind = ", ".join(f"{k} {stopped[k]}/{kinds[k]}" for k in KINDS)
    report(
        f"scanner, {path.__name__}: attacks stopped {total}/{len(ATTACKS)} "
        f"({100 * total / len(ATTACKS):.1f}%): {per_kind}"
    )
    assert total >= 0.95 * len(ATTACKS), f"missed: {missed}"


def test_no_ordinary_note_is_blocked_at_write(
    tmp_path: Path, report: Callable[[str], None]
) -> None:
    # All of them in one home, in order: each is also read with the note before it.
    home = new_home(tmp_path, "b")
    refused: list[tuple[str, str]] = []
    for note in BENIGN:
        try:
            MemoryStore(home, note["target"], limit=BIG, fsync=False).add(note["text"])
        except MemoryEditError as exc:
            refused.append((note["id"], exc.message))
    report(f"scanner, blocked_at_write: ordinary notes blocked {len(refused)}/{len(BENIGN)}")
    assert refused == []


def test_no_ordinary_note_is_withheld_at_compose(
    tmp_path: Path, report: Callable[[str], None]
) -> None:
    home = new_home(tmp_path, "b")
    for target, name in FILES.items():
        notes = [n["text"] for n in BENIGN if n["target"] == target]
        (home / name).write_text("".join(format_entry(n) for n in notes), encoding="utf-8")
    soul = compose_soul(home)
    withheld = [(w.file, w.line, w.reasons) for w in soul.withheld]
    report(f"scanner, withheld_at_compose: ordinary notes withheld {len(withheld)}/{len(BENIGN)}")
    assert withheld == []
    assert len(soul.memory_entries) + len(soul.user_entries) == len(BENIGN)
