"""Serve a persona's home to any MCP client (`toolnexus serve`), over stdio or HTTP.

Needs the `mcp` extra (`pip install "toolnexus[mcp]"`). What a client sees is
`_mcp_home.HomeServer`'s: the `soul` prompt (frozen per connection), the
home's tools (`memory`, `skill`, `recall`, as `from_dir` would give them; no
transcript is saved), and the home's files as resources, with change
notifications. Here: the two transports, and the bearer token that guards
HTTP on any address other than loopback.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any, Literal

from .errors import ArgumentError

__all__ = ["DEFAULT_PORT", "TOKEN_ENV", "is_loopback", "serve"]

#: The port `--transport http` listens on unless told.
DEFAULT_PORT = 8765
#: Where the bearer token is read from when `token` is not given.
TOKEN_ENV = "TOOLNEXUS_SERVE_TOKEN"
#: The path MCP clients post to.
PATH = "/mcp"

Scope = MutableMapping[str, Any]
ASGI = Callable[
    [Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]
]


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    home: str | os.PathLike[str],
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve `home` until the client leaves (stdio) or the process is told to stop.

    Over HTTP the endpoint is `http://HOST:PORT/mcp`; on an address other than
    loopback a bearer token is required, and with a token every request must
    carry `Authorization: Bearer <token>`. `ready` is called with the address
    once it listens (port 0 picks a free one).

    Raises:
        HomeError: when `home` is not a valid home (nothing is served).
        ArgumentError: for an address other than loopback without a token.
        ImportError: when the `mcp` extra is not installed.
    """
    if transport == "http" and not token and not is_loopback(host):
        raise ArgumentError(
            f"serving on {host} (not loopback) needs a bearer token: pass --token or set "
            f"{TOKEN_ENV}"
        )
    import anyio

    from ._mcp_home import HomeServer

    served = HomeServer(Path(home), one_connection=transport == "stdio")
    if transport == "stdio":
        anyio.run(_stdio, served)
    else:
        anyio.run(_http, served, host, port, token, ready)


async def _stdio(served: Any) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    stopped = False
    async with anyio.create_task_group() as tasks:

        async def on_signal() -> None:
            nonlocal stopped
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    stopped = True
                    tasks.cancel_scope.cancel()
                    return

        tasks.start_soon(on_signal)
        server = served.server
        async with stdio_server() as (read, write):
            try:
                await server.run(read, write, server.create_initialization_options())
            finally:
                if stopped:
                    # Everything has unwound; the SDK's stdin reader is a thread blocked in
                    # read() that no cancellation reaches, so leave without waiting for it.
                    logging.shutdown()
                    sys.stderr.flush()
                    os._exit(0)
        tasks.cancel_scope.cancel()  # the client closed stdin: done


class BearerToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGI, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"www-authenticate", b'Bearer realm="toolnexus"'),
                        ],
                    }
                )
                await send(
                    {"type": "http.response.body", "body": b"missing or wrong bearer token\n"}
                )
                return
        await self.app(scope, receive, send)


async def _http(
    served: Any, host: str, port: int, token: str | None, ready: Callable[[str], None] | None
) -> None:
    import anyio
    import mcp.types as types
    import uvicorn
    from mcp.shared.exceptions import MCPError

    server = served.server

    async def no_discover(ctx: Any, params: Any) -> Any:
        # Clients that can speak both protocol eras fall back to the one with connections,
        # so that one connection is one session (see `_mcp_home`).
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found: server/discover")

    server.add_request_handler("server/discover", types.RequestParams, no_discover)
    app = server.streamable_http_app(
        streamable_http_path=PATH, host=host, stateless_http=False, session_idle_timeout=600
    )
    asgi: Any = BearerToken(app, token) if token else app

    class Uvicorn(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # signals are handled below
            yield

    config = uvicorn.Config(
        asgi,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,  # uvicorn's access log goes to stdout
        timeout_graceful_shutdown=2,
        lifespan="on",
    )
    web = Uvicorn(config)
    async with anyio.create_task_group() as tasks:

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    web.should_exit = True
                    return

        async def announce() -> None:
            while not web.started:
                await anyio.sleep(0.01)
            bound = web.servers[0].sockets[0].getsockname()
            shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
            if ready is not None:
                ready(f"http://{shown}:{bound[1]}{PATH}")

        tasks.start_soon(on_signal)
        tasks.start_soon(announce)
        await web.serve()
        tasks.cancel_scope.cancel()
