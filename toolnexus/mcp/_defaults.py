"""`toolnexus serve`'s defaults, shared by its options and by `serve` (a leaf: no imports)."""

from __future__ import annotations

__all__ = ["DEFAULT_PORT", "TOKEN_ENV"]

#: The port `--transport http` listens on unless told.
DEFAULT_PORT = 8765
#: Where the bearer token is read from when none is given.
TOKEN_ENV = "TOOLNEXUS_SERVE_TOKEN"
