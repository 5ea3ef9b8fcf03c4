"""`Review`: the memory and skill writes held in a home for a person's review, listed,
approved (applied then under the normal rules) or rejected. Why a write is held: `_review`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import cast

from ..errors import HistoryError
from ..home._door import MEMORY_FILES
from ..home._identity import Target
from ..home._identity_file import find_identity, resolve_limits
from ..home._load import home_scanner
from ..store._config import home_store
from ..store._protocol import Store
from ..store._review import HeldOp, HeldWrite
from ..tools import call_source
from ._edit import Op
from ._skill_store import SkillStore, skill_op
from ._tool import MemoryStore

__all__ = ["HeldOp", "HeldWrite", "Review"]


class Review:
    """The writes held for review in a home (memory and skills): list, approve, reject them.

    The command line's `toolnexus memory HOME pending | approve ID… | reject ID…`.
    """

    def __init__(self, dir: str | os.PathLike[str]) -> None:
        self.dir = Path(dir)

    def pending(self) -> list[HeldWrite]:
        """Every write held for review, oldest first.

        Raises:
            HistoryError: when the home's state cannot be read.
            StoreError: when the home's database store cannot be reached.
        """
        store = home_store(self.dir, find_identity(self.dir))
        with store.failures():
            review = store.review()
            return [] if review is None else review.pending()

    def approve(self, id: int) -> str:
        """Apply held write `id` under the normal rules (match, limit, scanner); it loads
        next session. A refused approval keeps the write held, so it can be rejected.

        Raises:
            HistoryError: no held write `id` (kind `not_found`).
            MemoryEditError: the write is refused now (`not_found`, `full`, `rejected`, …).
        """
        store = home_store(self.dir, find_identity(self.dir))
        held = self._take(store, id)
        try:
            done = self._apply(held, f"{call_source('python')} approved #{id}: {held.source}")
        except BaseException as refused:
            try:
                with store.failures():
                    review = store.review(create=True)
                    assert review is not None
                    review.put_back(held)
            except Exception as lost:
                # Never lost in silence: the write itself goes with the error.
                kept = json.dumps(held.to_dict(), ensure_ascii=False)
                raise HistoryError(
                    f"approving #{id} failed ({refused}), and it could not be held again "
                    f"({lost}); here it is, to apply by hand: {kept}",
                    kind="state",
                ) from refused
            raise
        return f"approved #{id}: {done}"

    def _apply(self, held: HeldWrite, source: str) -> str:
        """Apply a held write under the normal rules, as its source."""
        scanner = home_scanner(self.dir, None)
        if held.target == "skill":
            return SkillStore(self.dir, scanner=scanner).apply(
                skill_op(held.operations[0]), source=source
            )
        target = cast(Target, held.target)
        mem = MemoryStore(
            self.dir,
            target,
            limit=resolve_limits(self.dir).for_target(target),
            scanner=scanner,
        )
        ops = [Op(op.action, op.text, op.with_) for op in held.operations]  # type: ignore[arg-type]
        return mem._run(ops, batch=held.batch, source=source)

    def reject(self, id: int) -> str:
        """Drop held write `id` unapplied.

        Raises:
            HistoryError: no held write `id` (kind `not_found`).
        """
        store = home_store(self.dir, find_identity(self.dir))
        held = self._take(store, id)
        if held.target == "skill":
            return f"rejected #{id}: skill {held.operations[0].name!r} is unchanged."
        return f"rejected #{id}: nothing was written to {MEMORY_FILES[cast(Target, held.target)]}."

    def _take(self, store: Store, id: int) -> HeldWrite:
        if not 0 < id < 2**63:  # no store holds it, and SQLite cannot even be asked
            raise HistoryError(
                f"no write #{id} is held for review (`toolnexus memory HOME pending` lists them)",
                kind="not_found",
            )
        with store.failures():
            review = store.review()
            held = None if review is None else review.take(id)
        if held is None:
            raise HistoryError(
                f"no write #{id} is held for review (`toolnexus memory HOME pending` lists them)",
                kind="not_found",
            )
        return held
