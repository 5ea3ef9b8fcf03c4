"""Review: memory writes made after untrusted text reached the model wait for a person.

What a persona can know for certain is where a write came from. A session
tells the memory tool (through the call's `CallContext.untrusted`) whether any
text other than the person's and the home's reached the model since the
person's last message; under `memory_review: untrusted` (the default) such a
write is not applied but held, whole, in the home's store, until a person
approves it (applied then under the normal rules: match, limit, scanner) or
rejects it (`_held.Review`). `all` holds every write by the model; `off` holds
none. A person's own writes (the command line, `MemoryStore`) are never held.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import ArgumentError, HistoryError, HomeError, MemoryEditError, StoreError
from ..home._door import MEMORY_FILES
from ..home._identity import ReviewMode, Target
from ..home._identity_file import find_identity
from ..store._config import home_store
from ..store._records import now
from ..store._review import HeldOp, HeldWrite
from ..tools import CallContext, call_context, call_source
from ._edit import NOTHING, Op

__all__ = [
    "HELD",
    "hold",
    "keep_held",
    "review_mode",
    "tool_review",
    "why_held",
    "write_or_hold",
]

HELD = "held for review"


def review_mode(home: Path) -> ReviewMode:
    """The home's `memory_review` (IDENTITY.md), `untrusted` when it says nothing.

    Raises:
        HomeError: when IDENTITY.md cannot be read or breaks a rule.
    """
    found = find_identity(home)
    return "untrusted" if found is None else found[1].config.memory_review


def tool_review(home: Path, review: ReviewMode | None) -> ReviewMode:
    """The review mode a writing tool of `home` runs with: `review` when given, else the
    home's `memory_review`.

    Raises:
        ArgumentError: (a ValueError) for an unknown mode.
        HomeError: when IDENTITY.md cannot be read or breaks a rule.
    """
    mode = review_mode(home) if review is None else review
    if mode not in ("untrusted", "all", "off"):
        raise ArgumentError(
            f"review: {mode!r} is not a review mode; use 'untrusted', 'all' or 'off'"
        )
    return mode


async def write_or_hold(
    mode: ReviewMode,
    write: Callable[[str, threading.Event], str],
    hold: Callable[[str, str], str],
) -> str:
    """A model's write, as the `memory` and `skill_manage` tools make it: held for review
    (`hold(source, why)`) when `why_held` says so, else applied (`write(source, cancel)`),
    in a worker thread (it waits on a lock and on the disk). If the caller gives up, the
    event stops the thread before anything is written."""
    import asyncio  # here, not at the top: `toolnexus soul` never needs an event loop

    source = call_source("tool")
    why = why_held(mode, call_context())
    if why is not None:
        return await asyncio.to_thread(hold, source, why)
    cancel = threading.Event()
    try:
        return await asyncio.to_thread(write, source, cancel)
    except asyncio.CancelledError:
        cancel.set()
        raise


def why_held(mode: ReviewMode, context: CallContext | None) -> str | None:
    """Why a write by the model made in `context` waits for a person (None: it does not)."""
    if mode == "off" or (context is not None and context.caller == "cli"):
        return None
    if context is not None and context.untrusted:
        sources = ", ".join(context.untrusted)
        return f"text from {sources} reached the model since the person's last message"
    if mode == "all":
        return "this home holds every memory and skill write by the model for a person's review"
    return None


def keep_held(
    home: Path,
    target: str,
    operations: Sequence[HeldOp],
    *,
    batch: bool,
    source: str,
    what: str = "this write",
) -> HeldWrite:
    """Keep a write (memory or skill) in the home's store for review; it as kept.

    Raises:
        MemoryEditError: (`io`) when the store cannot keep it, naming `what`: then
            nothing is held and nothing written.
    """
    try:
        store = home_store(home, find_identity(home))
        with store.failures():
            review = store.review(create=True)
            assert review is not None
            return review.hold(
                time=now(), target=target, operations=operations, batch=batch, source=source
            )
    except (HomeError, HistoryError, StoreError) as exc:
        raise MemoryEditError(
            f"cannot hold {what} for review: {exc}. It was not applied either. {NOTHING}",
            kind="io",
        ) from None


def hold(
    home: Path, target: Target, ops: Sequence[Op], *, batch: bool, source: str, why: str
) -> str:
    """Keep a memory write for review instead of applying it; the message for the model.

    Raises:
        MemoryEditError: (`io`) when the store cannot keep it: then nothing is held
            and nothing written.
    """
    name = MEMORY_FILES[target]
    operations = [HeldOp(op.action, op.text, op.with_) for op in ops]
    held = keep_held(home, target, operations, batch=batch, source=source)
    what = f"the batch of {len(ops)} changes" if batch else "this write"
    return (
        f"{HELD} (#{held.id}): {why}, so {what} to {name} waits for a person, who will see "
        f"it and decide. Nothing is saved now: {name} is unchanged, and the note loads in "
        "a later session only if they approve it. Do not write it again."
    )
