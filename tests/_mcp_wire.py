"""Raw MCP messages for tests that speak the wire format themselves (no SDK client)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["HANDSHAKE", "PROTOCOL", "initialize", "raw_stdio"]

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


@contextmanager
def raw_stdio(
    home: Path, lines: Sequence[dict[str, Any]], *options: str
) -> Iterator[subprocess.Popen[str]]:
    """`toolnexus serve HOME` over stdio, with `lines` already written to it: read its
    replies from `stdout`, close `stdin` to end it."""
    with subprocess.Popen(
        [sys.executable, "-m", "toolnexus", "serve", str(home), *options],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        proc.stdin.flush()
        yield proc
