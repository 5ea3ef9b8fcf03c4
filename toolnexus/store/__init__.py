"""Where a home's memory files, history and conversations live: the `Store` seam.

`folder/` keeps them in the home (MEMORY.md, USER.md, and SQLite in
`.toolnexus/`); `postgres/` in a PostgreSQL database many machines share (the
`postgres` extra). `_config` chooses one for a home; `_seam` holds the
protocol, the folder's implementation and `copy` (push / pull) over a
`_snapshot`.

May import: the core, `home`, `scanner` and `memory`'s pure format and edits.
Nothing outside this package names PostgreSQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._seam import FolderStore, PgStore, Store, configured_store, copy, database_store
    from ._snapshot import Snapshot

__all__ = [
    "FolderStore",
    "PgStore",
    "Snapshot",
    "Store",
    "configured_store",
    "copy",
    "database_store",
]

__getattr__, __dir__ = exports(
    __name__, {**dict.fromkeys(__all__, "._seam"), "Snapshot": "._snapshot"}
)
