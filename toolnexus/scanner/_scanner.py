"""The memory scanner: what may not enter a system prompt, and how to add a classifier of your own.

Every memory write is scanned before it lands, and composing a soul scans what
is on disk (files change behind the tool's back): a flagged entry is refused
at write, withheld from the soul at compose (never deleted). `Scanner` runs
the built-in layers (`scanner/_engine.py`: characters, normalised forms, decoded
payloads, rules by category), then your classifier, leaves out the categories
and rules a home switches off (IDENTITY.md `scanner: {off: [...]}`), and reads
neighbouring entries together so an instruction split over two entries is
caught. Verdicts are memoised by text, so a write scans only what is new.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

from ..errors import ArgumentError, ClassifierError
from ..home._memo import remembered
from ._engine import planted as _planted
from ._engine import scan as _builtin_scan
from ._rule import CATEGORIES, Finding
from ._rulebook import off_error, unknown_off

__all__ = ["CATEGORIES", "Classifier", "Finding", "Scanner", "Together"]

#: A classifier of your own: the findings for a text (empty: it passes). It must be a
#: pure function of the text (verdicts are memoised, and a soul is deterministic).
Classifier = Callable[[str], Iterable[Finding]]

#: How neighbours are joined when read together: one line break, as in the file.
_JOIN = "\n"


@dataclass(frozen=True, slots=True)
class Together:
    """A finding on neighbouring texts read together: which of them it spans (indexes)."""

    indexes: tuple[int, ...]
    finding: Finding


@dataclass(frozen=True, slots=True, eq=False)
class Scanner:
    """The built-in scanner, less the categories and rules in `off`, plus your `classifier`.

    Build one with `Scanner(off=..., classifier=...)` and pass it (or just a
    classifier) as `scanner=` to `memory_tool`, `compose_soul` and `from_dir`,
    which add what the home's IDENTITY.md switches off. Two scanners
    are equal when they switch off the same names and hold the very same
    classifier object (which need not be hashable).

    Raises:
        ArgumentError: when `off` names neither a category nor a rule id.
        TypeError: when `classifier` is not callable.
    """

    off: frozenset[str] = frozenset()
    classifier: Classifier | None = None
    _key: tuple[object, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.classifier is not None and not callable(self.classifier):
            raise TypeError(
                f"scanner: a classifier is a function from a text to Findings, "
                f"not {type(self.classifier).__name__}"
            )
        raw: object = self.off
        off = frozenset((raw,) if isinstance(raw, str) else self.off)
        unknown = unknown_off(sorted(off))
        if unknown:
            raise ArgumentError(f"scanner off: {off_error(unknown)}")
        object.__setattr__(self, "off", off)
        object.__setattr__(self, "_key", (off, id(self.classifier)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scanner):
            return NotImplemented
        return self.off == other.off and self.classifier is other.classifier

    def __hash__(self) -> int:
        return hash(self._key)

    def with_off(self, off: Iterable[str]) -> Scanner:
        """This scanner with the categories and rules in `off` switched off as well."""
        return Scanner(off=self.off | frozenset(off), classifier=self.classifier)

    def scan(self, text: str) -> tuple[Finding, ...]:
        """Why `text` may not enter a system prompt: one finding per category (empty: it may)."""
        return remembered(("scan", self, text), len(text), lambda: self._scan(text, False))

    def vet(self, text: str) -> tuple[Finding, ...]:
        """`scan`, and, for a note about to be written that no rule refuses, the learned
        layer too (`planted`: wordings no rule names). The memory tool vets what it writes;
        composing and reading neighbours together stay with `scan`."""
        found = self.scan(text)
        if found:
            return found
        return remembered(("planted", self, text), len(text), lambda: _planted(text, off=self.off))

    def reasons(self, text: str) -> tuple[str, ...]:
        """`scan` as lines, each starting with its category (`"secret: ..."`)."""
        return tuple(str(f) for f in self.scan(text))

    def together(self, texts: Sequence[str]) -> tuple[Together, ...]:
        """Findings on `texts` read as one text (neighbours in a file, in order), each
        spanning two or more of them: what no text shows alone (a split instruction)."""
        if len(texts) < 2:
            return ()
        joined = _JOIN.join(texts)
        starts: list[int] = []
        at = 0
        for text in texts:
            starts.append(at)
            at += len(text) + len(_JOIN)
        found = remembered(("together", self, joined), len(joined), lambda: self._joined(texts))
        out: list[Together] = []
        for finding in found:
            start, end = finding.span
            covered = tuple(
                i for i, s in enumerate(starts) if s < end and start < s + len(texts[i])
            )
            if len(covered) > 1:
                out.append(Together(covered, finding))
        return tuple(out)

    def beside(
        self, entry: str, *, before: str | None = None, after: str | None = None
    ) -> tuple[str, str, tuple[str, ...]] | None:
        """Whether `entry` reads as unsafe with the entry `before` or `after` it: where
        ("before"/"after"), that neighbour, and the reasons; None when it does not.

        A neighbour flagged alone is already withheld from the soul, so it is not
        read with `entry` (SPEC §3: a pair goes only when neither is flagged alone)."""
        for other, where in ((before, "before"), (after, "after")):
            if other is None or self.scan(other):
                continue
            pair = [other, entry] if where == "before" else [entry, other]
            found = self.together(pair)
            if found:
                return where, other, tuple(dict.fromkeys(str(t.finding) for t in found))
        return None

    def _joined(self, texts: Sequence[str]) -> tuple[Finding, ...]:
        """Every built-in match in `texts` joined; your classifier reads each pair of
        neighbours (a classifier that cannot place a span must not take a whole file)."""
        joined = _JOIN.join(texts)
        found = list(_builtin_scan(joined, off=self.off, every=True))
        if self.classifier is not None:
            at = 0
            for first, second in pairwise(texts):
                pair = first + _JOIN + second
                for f in self._classified(pair):
                    start, end = f.span
                    found.append(replace(f, span=(at + start, at + end)))
                at += len(first) + len(_JOIN)
        return tuple(found)

    def _classified(self, text: str) -> list[Finding]:
        assert self.classifier is not None
        try:
            got = list(self.classifier(text))
        except Exception as exc:
            raise ClassifierError(f"scanner {self.classifier!r} failed: {exc}") from exc
        for finding in got:
            if not isinstance(finding, Finding):
                raise TypeError(
                    f"scanner {self.classifier!r} returned {type(finding).__name__}, not a Finding"
                )
        return [f for f in got if f.category not in self.off and f.rule not in self.off]

    def _scan(self, text: str, every: bool) -> tuple[Finding, ...]:
        found = list(_builtin_scan(text, off=self.off, every=every))
        if self.classifier is not None:
            found.extend(self._classified(text))
        return tuple(found)


#: The scanner with nothing switched off and no classifier.
DEFAULT = Scanner()
