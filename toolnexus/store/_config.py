"""Which store a home uses: its folder (the default) or a PostgreSQL database.

`TOOLNEXUS_STORE` points every home at a database; IDENTITY.md's `store:` one
home. The persona's key there is `store_key:`, else its name; its IDENTITY.md
claims the key (`store/postgres/_store.py`). psycopg is imported only by a home
that uses a database.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import HomeError
from ..home._door import IDENTITY_FILE, decode
from ..home._identity import Identity, Target
from ..home._memo import remembered
from ..memory._document import MemoryDocument, parse_memory

if TYPE_CHECKING:
    from .postgres._store import PgStore

__all__ = ["STORE_VARIABLE", "claim_digest", "home_store", "stored"]

#: The environment variable that points every home at a database store.
STORE_VARIABLE = "TOOLNEXUS_STORE"


def stored(store: PgStore, target: Target, path: str) -> tuple[str, MemoryDocument] | None:
    """A memory file's hash and parse from a database store (memoised by its bytes)."""
    data = store.read(target)
    if data is None:
        return None
    sha = hashlib.sha256(data).hexdigest()
    text = decode(data, path)
    return sha, remembered(("stored", sha), len(text), lambda: parse_memory(text), view=True)


def home_store(home: Path, found: tuple[str, Identity] | None) -> PgStore | None:
    """The database store `home` uses, or None for its folder: `TOOLNEXUS_STORE`, else
    IDENTITY.md's `store:`; the persona's key is `store_key:`, else its name.

    Raises:
        HomeError: when a store is set but IDENTITY.md is missing (it names the
            persona and claims the key), or `TOOLNEXUS_STORE` is not a PostgreSQL address.
    """
    dsn = os.environ.get(STORE_VARIABLE, "").strip()
    if dsn and not dsn.startswith(("postgresql://", "postgres://")):
        raise HomeError(
            f"{STORE_VARIABLE}: not a postgresql:// address (unset it to keep memory in "
            "the home's folder)"
        )
    if not dsn and (found is None or found[1].config.store is None):
        return None
    if found is None:
        raise HomeError(
            f"{home / IDENTITY_FILE}: missing: a home kept in a database store needs an "
            "IDENTITY.md (its name is the persona's key there)"
        )
    identity = found[1]
    config = identity.config
    # The database store (psycopg) is loaded only by a home that uses one.
    from .postgres._store import PgStore

    return PgStore(
        dsn=dsn or str(config.store),
        key=config.store_key or config.name,
        name=config.name,
        identity=claim_digest(identity),
    )


def claim_digest(identity: Identity) -> str:
    """What claims a key: a digest of who the persona is (its settings and its prose),
    not of how a machine reaches the database: `store:` is left out, so machines may
    use different addresses or roles, and a reformatted frontmatter is the same."""
    config = identity.config.model_dump(
        mode="json", by_alias=True, exclude={"store"}, exclude_defaults=True
    )
    text = json.dumps([config, identity.body], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
