"""Where a home's memory files, history and conversations live: the `Store` seam.

`folder/` keeps them in the home (MEMORY.md, USER.md, and SQLite in
`.toolnexus/`); `postgres/` in a PostgreSQL database many machines share (the
`postgres` extra). Both have one shape, `_protocol`'s `Store`; `_config`
chooses a home's once, at the edge; `_copy` moves everything from one to the
other (push / pull) as a `_snapshot`. What both keep, and the rules they
share, are `_records` (the memory history) and `_sessions` (conversations).

May import: the core, `home`, `scanner` and `memory`'s pure format and edits.
Nothing outside this package names PostgreSQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._config import configured_store, database_store
    from ._copy import copy
    from ._protocol import Store
    from ._snapshot import Snapshot
    from .folder._store import FolderStore
    from .postgres._store import PgStore

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
    __name__,
    {
        "FolderStore": ".folder._store",
        "PgStore": ".postgres._store",
        "Snapshot": "._snapshot",
        "Store": "._protocol",
        "configured_store": "._config",
        "copy": "._copy",
        "database_store": "._config",
    },
)
