"""Memory and skill writes held for a person's review, as both stores keep them.

A write the model made after untrusted text reached it (SPEC §3) is not
applied: it is kept here, whole, with where it came from, until a person
approves it (it is then applied under the normal rules) or rejects it. A
held write never reaches a soul: nothing here is read by composing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = ["COLUMNS", "HeldOp", "HeldWrite", "Review", "held_of"]

#: The columns of a held write, in order, in both stores.
COLUMNS = "id, time, target, operations, batch, source"

HeldAction = Literal["add", "replace", "remove", "create", "patch", "write_file"]


@dataclass(frozen=True, slots=True)
class HeldOp:
    """One change of a held write, as the model asked for it.

    A memory change has `action`, `text` and `with_`. A skill change (target
    `skill`) also names its skill (`name`) and, as its action takes them, the
    file in the skill's folder (`path`) and the `description`; its `text` is
    the body (`create`), the matched text (`patch`), the file's content
    (`write_file`), or empty (`remove`).
    """

    action: HeldAction
    text: str
    with_: str | None = None
    name: str | None = None
    path: str | None = None
    description: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {"action": self.action, "text": self.text, "with": self.with_}
        if self.name is not None:
            data |= {"name": self.name, "path": self.path, "description": self.description}
        return data

    def stored(self) -> list[Any]:
        """As the `operations` column keeps it: `[action, text, with]`, and a skill's fields."""
        if self.name is None:
            return [self.action, self.text, self.with_]
        more = {"name": self.name, "path": self.path, "description": self.description}
        return [self.action, self.text, self.with_, {k: v for k, v in more.items() if v}]


@dataclass(frozen=True, slots=True)
class HeldWrite:
    """A memory write held for review: what `memory HOME pending` lists.

    `operations` holds the changes in order; a single call has one and a batch
    (`batch`) is held whole, as one write. `source` says who asked and what
    untrusted text had reached the model (`tool session=… call=… untrusted=web`).
    """

    id: int
    time: str
    target: str
    operations: tuple[HeldOp, ...]
    batch: bool
    source: str

    @property
    def action(self) -> str:
        """`add`, `replace`, `remove`, or `batch` for a batch held whole."""
        return "batch" if self.batch else self.operations[0].action

    @property
    def text(self) -> str:
        """The write's text: a single change's `text`; a batch's changes, one a line."""
        if not self.batch:
            return self.operations[0].text
        return "\n".join(_line(op) for op in self.operations)

    @property
    def with_(self) -> str | None:
        """A single replace's new text (None otherwise)."""
        return None if self.batch else self.operations[0].with_

    def to_dict(self) -> dict[str, Any]:
        """One object of `memory HOME pending --json`: `id`, `target`, `action`, `text`,
        `source`, `time`, and the change's `with` and a batch's `operations`."""
        return {
            "id": self.id,
            "target": self.target,
            "action": self.action,
            "text": self.text,
            "with": self.with_,
            "operations": [op.to_dict() for op in self.operations] if self.batch else None,
            "source": self.source,
            "time": self.time,
        } | self._skill_fields()

    def _skill_fields(self) -> dict[str, Any]:
        """A skill write's own fields: the skill's `name`, the `path` of the file it
        writes in the skill's folder, and a new skill's `description`."""
        if self.target != "skill":
            return {}
        op = self.operations[0]
        return {"name": op.name, "path": op.path, "description": op.description}

    def row(self) -> tuple[Any, ...]:
        """As stored, in `COLUMNS` order."""
        ops = [op.stored() for op in self.operations]
        return (
            self.id,
            self.time,
            self.target,
            json.dumps(ops, ensure_ascii=False),
            self.batch,
            self.source,
        )


def _line(op: HeldOp) -> str:
    if op.action == "replace":
        return f"replace: {op.text} -> {op.with_}"
    return f"{op.action}: {op.text}"


def held_of(values: Sequence[Any]) -> HeldWrite:
    """A held write from its stored row (`COLUMNS` order)."""
    id, time, target, ops, batch, source = values
    operations = tuple(
        HeldOp(*item[:3], **(item[3] if len(item) > 3 else {})) for item in json.loads(ops)
    )
    return HeldWrite(int(id), str(time), str(target), operations, bool(batch), str(source))


class Review(Protocol):
    """A store's writes held for review: kept whole until a person decides."""

    def hold(
        self, *, time: str, target: str, operations: Sequence[HeldOp], batch: bool, source: str
    ) -> HeldWrite:
        """Keep a write for review; it as kept, with its new id."""
        ...

    def pending(self) -> list[HeldWrite]:
        """Every held write, oldest first."""
        ...

    def take(self, id: int) -> HeldWrite | None:
        """Remove held write `id` and return it (None: no such write), at once: two
        people deciding on one write never both get it."""
        ...

    def put_back(self, held: HeldWrite) -> None:
        """Keep `held` again under its own id (an approval that was refused)."""
        ...
