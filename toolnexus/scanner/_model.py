"""A learned layer of the scanner: how much a note reads like an instruction planted for later.

The rules (`rules/*.toml`) name techniques; attackers reword faster than rules
are written. This layer is a logistic regression over a note's skeleton (hosts,
addresses and numbers folded to one token each): its words, its word pairs and
its runs of three to seven characters, which carry word stems, other scripts
and other languages that no word list names. The features are hashed into
2**19 weights, so the model has a fixed size whatever it was trained on.

It is trained on the attacks and honest notes of `tests/corpus`, never on its
held-out parts (`scripts/train_scanner_model.py` makes `model.json` from them,
deterministically). Its cut-offs are set on notes the model did not see while
training, in folds that each leave out whole hands (corpora by one writer), so
they hold for a writer the model has never read:

* `threshold`: a new note that no rule refused, scoring above it, is refused
  (category `planted`).
* `sentence`: a sentence of a note of several, scoring above it on its own, is
  refused too. It lies a fixed margin over the threshold. Honest prose around
  an order lowers the score of the whole note, never of the order's sentence.
* `bar`: a rule that reads a behaviour (sending, obeying, a new role...)
  stands only where the words around its match score above it: the rule
  matched words an honest note also uses ("forward suspicious mail to the
  security desk", "act as the customer in our drill"). It lies a fixed margin
  under the threshold. Credentials, hidden characters and payloads always
  stand, and so does a bare order of a few words (`_engine.judged_by`).

The threshold is set so that, together, the rules and this layer refuse 0.7%
of the honest notes chosen as hard negatives, and 0.25% of everyday notes, by
writers the model never read.

A note of fewer than six words is not scored (a fragment says too little). A
quotation the note frames as reported or taught is left out of what is scored,
as the rules leave it.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["BITS", "MODEL_FILE", "Model", "buckets", "features", "model"]

#: The shipped weights.
MODEL_FILE = Path(__file__).with_name("model.json")
#: Features are hashed into 2**BITS weights.
BITS = 19
_MASK = (1 << BITS) - 1
#: The runs of characters read, shortest and longest.
_SHORTEST, _LONGEST = 3, 7

_URL = re.compile(r"(?:https?|s?ftp|wss?)://\S+")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_HOST = re.compile(
    r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|co|app|dev|help|biz|info|xyz|top|click|ru|cc|eu|"
    r"me|site|online|link|ai|us|uk|de)\b"
)
_WORD = re.compile(r"[^\W\d_][\w']*|\$\w+|\d+")
_SPACE = re.compile(r"\s+")


def features(skeleton: str) -> set[str]:
    """The words, word pairs and three-to-seven-character runs of a skeleton, with web
    addresses, e-mail addresses, hosts, numbers and `$VARIABLES` each folded to one token
    (what they name is not the point)."""
    text = _URL.sub(" xurlx ", skeleton)
    text = _EMAIL.sub(" xemailx ", text)
    text = _HOST.sub(" xhostx ", text)
    words = [
        "xnum" if w.isdigit() else ("xvar" if w.startswith("$") else w) for w in _WORD.findall(text)
    ]
    found = set(words)
    found.update(f"{a}_{b}" for a, b in itertools.pairwise(words))
    line = f" {_SPACE.sub(' ', ' '.join(words))} "
    for n in range(_SHORTEST, _LONGEST + 1):
        found.update("#" + line[i : i + n] for i in range(len(line) - n + 1))
    return found


def buckets(found: Iterable[str]) -> list[int]:
    """The weights these features land on, each once, in order (CRC-32: the same on every
    machine and Python)."""
    return sorted({zlib.crc32(f.encode()) & _MASK for f in found})


@dataclass(frozen=True, slots=True)
class Model:
    """Quantised weights with their scale, a bias, and the three cut-offs (module docstring)."""

    weights: array[int]  # int16, 2**BITS of them
    scale: float
    bias: float
    threshold: float
    bar: float
    sentence: float

    def score(self, skeleton: str) -> float:
        """The log-odds that a note with this skeleton was planted."""
        return self.weigh(buckets(features(skeleton)))

    def weigh(self, found: Iterable[int]) -> float:
        """The log-odds of a note whose features land on these buckets."""
        total: int = sum(map(self.weights.__getitem__, found))
        return self.bias + self.scale * total

    def to_json(self) -> str:
        """As `model.json` holds it: stable, so the same training gives the same bytes."""
        packed = array("h", self.weights)
        if packed.itemsize != 2:  # pragma: no cover - every platform CPython runs on
            raise RuntimeError("int16 arrays are not two bytes here")
        raw = packed.tobytes() if _LITTLE else _swapped(packed).tobytes()
        return (
            json.dumps(
                {
                    "version": 4,
                    "bits": BITS,
                    "scale": self.scale,
                    "bias": round(self.bias, 6),
                    "threshold": round(self.threshold, 4),
                    "bar": round(self.bar, 4),
                    "sentence": round(self.sentence, 4),
                    "weights": base64.b64encode(zlib.compress(raw, 9)).decode("ascii"),
                },
                indent=0,
                sort_keys=True,
            )
            + "\n"
        )

    @classmethod
    def from_json(cls, text: str) -> Model:
        """Read what `to_json` wrote."""
        data = json.loads(text)
        if data.get("version") != 4 or data.get("bits") != BITS:
            raise ValueError(f"scanner model: not a version 4 model of 2**{BITS} weights")
        weights = array("h")
        weights.frombytes(zlib.decompress(base64.b64decode(data["weights"])))
        if not _LITTLE:  # pragma: no cover - big-endian machines
            weights = _swapped(weights)
        if len(weights) != 1 << BITS:
            raise ValueError(f"scanner model: {len(weights)} weights, not {1 << BITS}")
        return cls(
            weights,
            float(data["scale"]),
            float(data["bias"]),
            float(data["threshold"]),
            float(data["bar"]),
            float(data["sentence"]),
        )


_LITTLE = array("h", [1]).tobytes()[0] == 1


def _swapped(values: array[int]) -> array[int]:
    out = array("h", values)
    out.byteswap()
    return out


@cache
def model() -> Model:
    """The shipped model, read once per process (on the first scan that needs it)."""
    return Model.from_json(MODEL_FILE.read_text("utf-8"))
