"""Which store a home uses: its folder (the default) or a PostgreSQL database, chosen
once at the edge and passed down.

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
from typing import TYPE_CHECKING, cast

from ..errors import HomeError
from ..home._door import IDENTITY_FILE
from ..home._identity import Identity
from ..home._identity_file import find_identity, load_identity
from ._address import UNREADABLE, read_address
from ._protocol import Store
from .folder._store import FolderStore

if TYPE_CHECKING:
    from .postgres._store import PgStore

__all__ = ["STORE_VARIABLE", "claim_digest", "configured_store", "database_store", "home_store"]

#: The environment variable that points every home at a database store.
STORE_VARIABLE = "TOOLNEXUS_STORE"


def home_store(home: Path, found: tuple[str, Identity] | None) -> Store:
    """The store `home` uses, given its IDENTITY.md as found: a database when
    `TOOLNEXUS_STORE`, else IDENTITY.md's `store:`, names one (the persona's key is
    `store_key:`, else its name); else its folder.

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
    if dsn and read_address(dsn) is None:
        raise HomeError(f"{STORE_VARIABLE}: {UNREADABLE}")
    if not dsn and (found is None or found[1].config.store is None):
        return FolderStore(home)
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


def configured_store(dir: str | os.PathLike[str]) -> Store:
    """The store the home `dir` uses: its database when one is configured, else its
    folder (also when its IDENTITY.md cannot be read: composing reports that).

    Raises:
        HomeError: when `TOOLNEXUS_STORE` is set but is not a PostgreSQL address,
            or the home has no IDENTITY.md to claim the key with.
    """
    home = Path(dir)
    try:
        found = find_identity(home)
    except HomeError:
        found = None
    if found is None and not os.environ.get(STORE_VARIABLE, "").strip():
        return FolderStore(home)
    return home_store(home, found)


def database_store(dir: str | os.PathLike[str]) -> PgStore:
    """The database store the home `dir` is configured for.

    Raises:
        HomeError: when the home or its IDENTITY.md is missing or invalid, or no
            store is configured (`TOOLNEXUS_STORE`, IDENTITY.md's `store:`).
    """
    home = Path(dir)
    store = home_store(home, load_identity(home))
    if isinstance(store, FolderStore):
        raise HomeError(
            f"{home}: no database store is configured: set TOOLNEXUS_STORE or "
            "IDENTITY.md's `store:` to a postgresql:// address"
        )
    return cast("PgStore", store)
