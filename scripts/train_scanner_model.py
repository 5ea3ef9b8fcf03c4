"""Train the scanner's learned layer (`toolnexus/scanner/model.json`) from tests/corpus.

Deterministic: the same corpora give the same bytes, and a test holds the shipped file to
that. Trained on every corpus except `tests/corpus/blind/held-out/`, which exists to measure
the scanner on text nobody tuned it on.

    python scripts/train_scanner_model.py          # rewrite model.json
    python scripts/train_scanner_model.py --check  # exit 1 if it is not up to date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from toolnexus.scanner._forms import skeleton
from toolnexus.scanner._model import MODEL_FILE, train

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
HELD_OUT = CORPUS / "blind" / "held-out"


def training_files() -> tuple[list[Path], list[Path]]:
    """The attack files and the honest-note files trained on (never the held-out half)."""
    every = sorted(p for p in CORPUS.rglob("*.jsonl") if HELD_OUT not in p.parents)
    return (
        [p for p in every if p.name.startswith("attacks")],
        [p for p in every if p.name.startswith("benign")],
    )


def texts(paths: list[Path]) -> list[str]:
    """Each note's text (an attack of several entries read together), as its skeleton."""
    found = []
    for path in paths:
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            found.append(skeleton("\n".join(row["entries"]) if "entries" in row else row["text"]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if model.json is stale")
    args = parser.parse_args()
    attacks, honest = training_files()
    made = train(texts(attacks), texts(honest)).to_json()
    if args.check:
        same = MODEL_FILE.read_text("utf-8") == made
        print("model.json is up to date" if same else "model.json is stale: retrain it")
        return 0 if same else 1
    MODEL_FILE.write_text(made, encoding="utf-8")
    print(f"wrote {MODEL_FILE.name} ({len(made):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
