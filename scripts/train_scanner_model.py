"""Train the scanner's learned layer (`toolnexus/scanner/model.json`) from tests/corpus.

Trained on every corpus except the held-out ones (`tests/corpus/blind/held-out*/`), which
exist to measure the scanner on text nobody tuned it on. Needs numpy (a dev dependency);
the scanner itself reads the weights with the standard library.

The two cut-offs are set out of fold: the training notes are split into folds that each
leave out whole hands (the corpora one writer wrote), a model is fitted without each fold,
and the fold's notes are scored by it, so every score is that of a writer the model never
read; the model shipped is the mean of those folds' models. `bar` is the score nine honest
notes in ten stay under; `threshold` is set so that, out of fold, the rules (less those
the bar overrules) and the model together refuse `TARGET` of the honest notes. Both are
set on the hands written after the rules (`RULES_READ` lists the ones the rules were
written against, on which they look better than they are).

    python scripts/train_scanner_model.py          # rewrite model.json
    python scripts/train_scanner_model.py --check  # exit 1 if it is not up to date
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from toolnexus.scanner._engine import learned_form, overruled, scan
from toolnexus.scanner._forms import skeleton
from toolnexus.scanner._model import BITS, MODEL_FILE, Model, buckets, features

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
#: Folds of hands for the out-of-fold scores.
FOLDS = 8
#: The share of honest notes the rules and the model together may refuse, out of fold.
TARGET = 0.007
#: The share of honest notes that score under the bar.
BAR_SHARE = 0.9
#: The hands the rules were written against: the first corpora and hands a to l.
RULES_READ = frozenset({"1", "2", *"abcdefghijkl"})
#: Logistic regression: L2 penalty, full-batch Adam steps and their size.
PENALTY, STEPS, RATE = 0.1, 300, 0.05


@dataclass(frozen=True, slots=True)
class Note:
    """One training note: its writer (hand), whether it is an attack, what the fit reads,
    and what the scanner reads of each entry at write time."""

    hand: str
    attack: bool
    text: str
    entries: tuple[str, ...]


def held_out(path: Path) -> bool:
    """Whether `path` lies in a held-out folder (never trained on)."""
    return any(part.startswith("held-out") for part in path.relative_to(CORPUS).parts)


def training_files() -> tuple[list[Path], list[Path]]:
    """The attack files and the honest-note files trained on (never a held-out folder)."""
    every = sorted(p for p in CORPUS.rglob("*.jsonl") if not held_out(p))
    return (
        [p for p in every if p.name.startswith("attacks")],
        [p for p in every if p.name.startswith("benign")],
    )


def hand_of(path: Path) -> str:
    """The writer of a corpus file: `attacks-d.jsonl` -> `d`; the first corpora -> `1`."""
    stem = path.stem.split("-", 1)
    return stem[1] if len(stem) == 2 else "1"


def notes(paths: list[Path]) -> list[Note]:
    """The notes of `paths`, an attack of several entries read together for the fit."""
    found = []
    for path in paths:
        attack = path.name.startswith("attacks")
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            entries = tuple(row["entries"]) if "entries" in row else (row["text"],)
            joined = "\n".join(entries)  # read as the scanner reads a note, quotations framed
            text = learned_form(joined) or skeleton(joined)  # as reported or taught left out
            found.append(Note(hand_of(path), attack, text, entries))
    return found


def _matrix(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    pointers = np.cumsum([0] + [len(r) for r in rows])
    flat = np.fromiter((i for r in rows for i in r), dtype=np.int64, count=int(pointers[-1]))
    return flat, pointers


def fit(rows: list[list[int]], labels: list[bool]) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression over hashed features, by full-batch Adam: the same
    numbers in the same order on every run."""
    size = 1 << BITS
    flat, pointers = _matrix(rows)
    count = len(rows)
    owner = np.repeat(np.arange(count), np.diff(pointers))
    y = np.asarray(labels, dtype=float)
    w, m, v = np.zeros(size), np.zeros(size), np.zeros(size)
    b = mb = vb = 0.0
    for step in range(1, STEPS + 1):
        z = np.add.reduceat(w[flat], pointers[:-1]) + b
        p = 1 / (1 + np.exp(-np.clip(z, -30, 30)))
        g = p - y
        gw = np.bincount(flat, weights=g[owner], minlength=size) / count + PENALTY / count * w
        gb = float(g.mean())
        m = 0.9 * m + 0.1 * gw
        v = 0.999 * v + 0.001 * gw * gw
        w -= RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        mb = 0.9 * mb + 0.1 * gb
        vb = 0.999 * vb + 0.001 * gb * gb
        b -= RATE * (mb / (1 - 0.9**step)) / (np.sqrt(vb / (1 - 0.999**step)) + 1e-8)
    return w, b


def _fold(hand: str) -> int:
    return hashlib.sha256(hand.encode()).digest()[0] % FOLDS


def _score(w: np.ndarray, b: float, body: str | None) -> float | None:
    return None if body is None else b + float(w[buckets(features(body))].sum())


def _note_score(w: np.ndarray, b: float, note: Note) -> float | None:
    """The highest score of the note's entries as the memory tool scores them (None: every
    entry is too short to score)."""
    scored = [s for s in (_score(w, b, learned_form(e)) for e in note.entries) if s is not None]
    return max(scored) if scored else None


def _refused_by_rules(w: np.ndarray, b: float, bar: float, text: str) -> bool:
    """Whether the rules refuse `text` once the model (w, b) has overruled what it may, as
    the scanner decides it."""

    def honest(words: str) -> bool:
        local = _score(w, b, learned_form(words))
        return local is not None and local < bar

    return bool(overruled(scan(text, off=("planted",)), text, honest))


def train(attacks: list[Note], honest: list[Note]) -> Model:
    """Fit a model per fold, set the bar and the threshold on the scores of the notes each
    left out, and ship their mean (module docstring)."""
    featured = [(n, buckets(features(n.text))) for n in attacks + honest]
    every = [n for n, row in featured if row]
    rows = [row for _, row in featured if row]
    labels = [n.attack for n in every]
    fresh = [n for n in honest if n.hand not in RULES_READ]
    models: dict[int, tuple[np.ndarray, float]] = {}
    for fold in range(FOLDS):
        kept = [i for i, n in enumerate(every) if _fold(n.hand) != fold]
        if len(kept) < len(every):
            models[fold] = fit([rows[i] for i in kept], [labels[i] for i in kept])
    unseen = [_note_score(*models[_fold(n.hand)], n) for n in fresh]
    scores = sorted(s for s in unseen if s is not None)
    bar = scores[int(BAR_SHARE * len(scores))]
    refused = 0
    left: list[float] = []
    for note, score in zip(fresh, unseen, strict=True):
        if _refused_by_rules(*models[_fold(note.hand)], bar, note.entries[0]):
            refused += 1
        elif score is not None:
            left.append(score)
    left.sort(reverse=True)
    allowed = max(0, int(TARGET * len(fresh)) - refused)
    threshold = left[min(allowed, len(left) - 1)] if left else max(scores) + 1.0
    # The model shipped is the mean of the folds' models, so that no note it scores was
    # read by all of it; its scores on a new note spread a little less than one fold
    # model's, so the cut-offs set on those hold for it with a margin.
    w = np.mean([fw for fw, _ in models.values()], axis=0)
    b = float(np.mean([fb for _, fb in models.values()]))
    scale = float(np.abs(w).max()) / 32767 or 1.0
    quantised = array("h", np.rint(w / scale).astype(np.int16).tolist())
    return Model(quantised, scale, b, threshold, bar)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if model.json is stale")
    args = parser.parse_args()
    attacks, honest = training_files()
    made = train(notes(attacks), notes(honest)).to_json()
    if args.check:
        same = MODEL_FILE.read_text("utf-8") == made
        print("model.json is up to date" if same else "model.json is stale: retrain it")
        return 0 if same else 1
    MODEL_FILE.write_text(made, encoding="utf-8")
    print(f"wrote {MODEL_FILE.name} ({len(made):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
