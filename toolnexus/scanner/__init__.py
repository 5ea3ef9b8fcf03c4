"""The memory scanner: what may not enter a system prompt.

Every memory write is scanned before it lands, and composing a soul scans what
is on disk. Inside: the forms of a text (`_forms`), payloads in encodings
(`_decode`), the rules by category (`rules/`), the engine that runs them
(`_engine`), and `Scanner`, which a home configures (switched-off categories, a
classifier of your own, neighbours read together, verdicts memoised).

May import: the core (`errors`) and, for the verdict memo, `home._memo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._scanner import CATEGORIES, Classifier, Finding, Scanner, Together

__all__ = ["CATEGORIES", "Classifier", "Finding", "Scanner", "Together"]

__getattr__, __dir__ = exports(__name__, dict.fromkeys(__all__, "._scanner"))
