"""A persona's home for any MCP client: `toolnexus serve` over stdio or streamable HTTP.

Needs the `mcp` extra. `_server` is one connection's view of the home (the
`soul` prompt, the tools, the files as resources with change notifications);
`_serve` runs the transports; `_defaults` holds the port and token variable the
command line shares without loading the SDK.

May import: everything below the faces. Nothing imports it but the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._defaults import DEFAULT_PORT, TOKEN_ENV
    from ._serve import is_loopback, serve

__all__ = ["DEFAULT_PORT", "TOKEN_ENV", "is_loopback", "serve"]

__getattr__, __dir__ = exports(
    __name__,
    {
        "DEFAULT_PORT": "._defaults",
        "TOKEN_ENV": "._defaults",
        "is_loopback": "._serve",
        "serve": "._serve",
    },
)
