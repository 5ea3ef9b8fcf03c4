"""Raw MCP messages for tests that speak the wire format themselves (no SDK client)."""

from __future__ import annotations

from typing import Any

__all__ = ["HANDSHAKE", "PROTOCOL", "initialize"]

#: The handshake-era protocol version the raw tests speak.
PROTOCOL = "2025-06-18"


def initialize(client: str = "raw") -> dict[str, Any]:
    """The `initialize` request (id 1) a client opens with."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "0"},
        },
    }


#: What opens a session over stdio: `initialize`, then the client's notice that it is done.
HANDSHAKE = [initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
