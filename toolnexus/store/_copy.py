"""`copy`: make one store hold exactly what another holds (`toolnexus store HOME push | pull`)."""

from __future__ import annotations

from ..errors import StoreError
from ._protocol import Store
from ._snapshot import Snapshot

__all__ = ["copy"]


def copy(source: Store, destination: Store, *, force: bool = False) -> Snapshot:
    """Make `destination` hold exactly what `source` holds; the snapshot copied.

    Raises:
        StoreError: (kind `not_empty`) when the destination holds something else and
            not `force`: a copy never overwrites memory by surprise.
    """
    snapshot = source.snapshot()
    if not force:
        there = destination.snapshot()
        if not there.empty and there != snapshot:
            raise StoreError(
                f"{destination.where} already holds memory, history or conversations "
                f"that {source.where} does not: copying would overwrite them (force=True, "
                "or --force on the command line, replaces them)",
                kind="not_empty",
            )
    destination.replace(snapshot)
    return snapshot
