"""A learned layer of the scanner: how much a note reads like an instruction planted for later.

The rules (`rules/*.toml`) name techniques; attackers reword faster than rules
are written. This layer is a logistic regression over the words and word pairs
of a note's skeleton (hosts, addresses and numbers folded to one token each),
trained on the attacks and honest notes of `tests/corpus` but never on its
held-out half (`scripts/train_scanner_model.py` makes `model.json` from them,
deterministically). Its threshold is set on the scores of honest notes the
model did not see while training (five folds): about one in five hundred
scores above it. A note of fewer than six words is not scored (a fragment says
too little). The memory tool refuses a new note over the threshold that no
rule refused (category `planted`); a quotation the note frames as reported or
taught is left out of what is scored, as the rules leave it.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["MODEL_FILE", "Model", "features", "model", "train"]

#: The shipped weights.
MODEL_FILE = Path(__file__).with_name("model.json")

_URL = re.compile(r"(?:https?|s?ftp|wss?)://\S+")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_HOST = re.compile(
    r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|co|app|dev|help|biz|info|xyz|top|click|ru|cc|eu|"
    r"me|site|online|link|ai|us|uk|de)\b"
)
_WORD = re.compile(r"[a-z][a-z']*|\$\w+|\d+")


def features(skeleton: str) -> set[str]:
    """The words and word pairs of a skeleton, with web addresses, e-mail addresses, hosts,
    numbers and `$VARIABLES` each folded to one token (what they name is not the point)."""
    text = _URL.sub(" xurlx ", skeleton)
    text = _EMAIL.sub(" xemailx ", text)
    text = _HOST.sub(" xhostx ", text)
    words = [
        "xnum" if w.isdigit() else ("xvar" if w.startswith("$") else w) for w in _WORD.findall(text)
    ]
    found = set(words)
    found.update(f"{a}_{b}" for a, b in itertools.pairwise(words))
    return found


@dataclass(frozen=True, slots=True)
class Model:
    """Weights, a bias and the threshold above which a note is refused."""

    weights: dict[str, float]
    bias: float
    threshold: float

    def score(self, skeleton: str) -> float:
        """The log-odds that a note with this skeleton was planted."""
        return self.weigh(features(skeleton))

    def weigh(self, found: Iterable[str]) -> float:
        """The log-odds of a note with these features."""
        weights = self.weights
        return self.bias + sum(weights.get(f, 0.0) for f in found)

    def to_json(self) -> str:
        """As `model.json` holds it: stable, so the same training gives the same bytes."""
        return (
            json.dumps(
                {
                    "version": 1,
                    "bias": round(self.bias, 4),
                    "threshold": round(self.threshold, 4),
                    "weights": {k: round(v, 4) for k, v in sorted(self.weights.items())},
                },
                ensure_ascii=False,
                indent=0,
                sort_keys=True,
            )
            + "\n"
        )


@cache
def model() -> Model:
    """The shipped model, read once per process (on the first scan that needs it)."""
    data = json.loads(MODEL_FILE.read_text("utf-8"))
    return Model(dict(data["weights"]), float(data["bias"]), float(data["threshold"]))


# -- training (scripts/train_scanner_model.py) -----------------------------------------------


def _fit(
    examples: Sequence[tuple[set[str], int]], *, epochs: int = 25, rate: float = 0.2
) -> tuple[dict[str, float], float]:
    """Logistic regression by AdaGrad over shuffled passes, with a little L2; seeded."""
    weights: dict[str, float] = defaultdict(float)
    squares: dict[str, float] = defaultdict(lambda: 1e-8)
    bias, bias_square = 0.0, 1e-8
    order = list(range(len(examples)))
    shuffle = random.Random(1)
    for _ in range(epochs):
        shuffle.shuffle(order)
        for i in order:
            found, label = examples[i]
            z = bias + sum(weights[f] for f in found)
            p = 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
            g = p - label
            for f in found:
                step = g + 1e-4 * weights[f]
                squares[f] += step * step
                weights[f] -= rate * step / math.sqrt(squares[f])
            bias_square += g * g
            bias -= rate * g / math.sqrt(bias_square)
    return dict(weights), bias


def train(
    attacks: Iterable[str], honest: Iterable[str], *, folds: int = 5, keep: float = 0.998
) -> Model:
    """Train on skeletons of attacks and honest notes; the threshold is the `keep` quantile
    of honest notes' scores from `folds` models that did not see them."""
    examples = [(features(t), 1) for t in attacks] + [(features(t), 0) for t in honest]
    order = list(range(len(examples)))
    random.Random(7).shuffle(order)
    unseen: list[float] = []
    for fold in range(folds):
        held = set(order[fold::folds])
        fold_model = Model(*_fit([examples[i] for i in order if i not in held]), threshold=0.0)
        unseen += [fold_model.weigh(examples[i][0]) for i in held if examples[i][1] == 0]
    unseen.sort()
    threshold = unseen[min(len(unseen) - 1, int(keep * len(unseen)))]
    weights, bias = _fit(examples)
    kept = {f: w for f, w in weights.items() if abs(w) >= 0.02}
    return Model(kept, bias, threshold)
