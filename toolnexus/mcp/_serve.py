"""Serve a persona's home to any MCP client (`toolnexus serve`), over stdio or HTTP.

Needs the `mcp` extra (`pip install "toolnexus[mcp]"`). What a client sees is
`_server.HomeServer`'s: the `soul` prompt (frozen per connection), the
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
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any, Literal

from ..errors import ArgumentError, ServeError
from ._defaults import DEFAULT_PORT, TOKEN_ENV

__all__ = ["DEFAULT_PORT", "TOKEN_ENV", "is_loopback", "serve"]

#: The path MCP clients post to.
PATH = "/mcp"
#: An HTTP connection whose client has sent nothing for this long is ended.
IDLE_TIMEOUT_S = 600
#: HTTP connections open at once, at most.
MAX_SESSIONS = 100

Scope = MutableMapping[str, Any]
ASGI = Callable[
    [Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]
]


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket: bound here, so that a bad address or a port in use is one error."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServeError(exc.errno, f"cannot listen on {host}: {exc.strerror}") from None
    family, _, _, _, address = infos[0]
    try:
        return socket.create_server(address, family=family, reuse_port=False)
    except OSError as exc:
        raise ServeError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None


def _rebinding_guard(host: str) -> Any:
    """On loopback, only requests naming this machine (Host and Origin) are served.

    A web page could otherwise reach a loopback server through a DNS name that
    resolves to 127.0.0.1 (DNS rebinding). The SDK guards three spellings of
    loopback by itself; the address actually served is added to them.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    names = ["127.0.0.1", "localhost", "[::1]"]
    if host != "localhost":
        address = ipaddress.ip_address(host)
        names.append(f"[{address}]" if address.version == 6 else str(address))
    names = list(dict.fromkeys(names))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )


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
    if transport not in ("stdio", "http"):
        raise ArgumentError(f"transport: {transport!r} is not one of 'stdio', 'http'")
    if token is not None and (not token or any(c.isspace() or not c.isprintable() for c in token)):
        raise ArgumentError("token: must be printable text without spaces or line breaks")
    host = host.strip("[]")  # "[::1]" as in a URL is the address ::1
    if transport == "http" and not token and not is_loopback(host):
        raise ArgumentError(
            f"serving on {host} (not loopback) needs a bearer token: pass --token or set "
            f"{TOKEN_ENV}"
        )
    import anyio

    from ._server import HomeServer

    served = HomeServer(Path(home), one_connection=transport == "stdio")
    if transport == "stdio":
        if ready is not None:
            ready("stdio")
        anyio.run(_stdio, served)
    else:
        listening = _listen(host, port)  # a port in use is one ServeError, before anything runs
        anyio.run(_http, served, listening, token, ready)


async def _signalled() -> None:
    """Return when the process gets SIGINT or SIGTERM (the way to stop a server)."""
    import anyio

    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            return


async def _stdio(served: Any) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    stopped = False
    async with anyio.create_task_group() as tasks:

        async def on_signal() -> None:
            nonlocal stopped
            await _signalled()
            stopped = True
            tasks.cancel_scope.cancel()

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
        self.expected = token.encode()

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, credential = given.partition(b" ")
            # The scheme's case does not matter (RFC 9110); the token's does.
            if scheme.lower() != b"bearer" or not hmac.compare_digest(
                credential.strip(), self.expected
            ):
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
    served: Any, listening: socket.socket, token: str | None, ready: Callable[[str], None] | None
) -> None:
    import anyio
    import mcp.types as types
    import uvicorn
    from mcp.shared.exceptions import MCPError

    server = served.server

    async def no_discover(ctx: Any, params: Any) -> Any:
        # Clients that can speak both protocol eras fall back to the one with connections,
        # so that one connection is one session (see `mcp/_server.py`).
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found: server/discover")

    server.add_request_handler("server/discover", types.RequestParams, no_discover)
    bound = listening.getsockname()
    host, port = str(bound[0]), int(bound[1])
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        host=host,
        stateless_http=False,
        session_idle_timeout=IDLE_TIMEOUT_S,
        max_sessions=MAX_SESSIONS,
        transport_security=_rebinding_guard(host) if is_loopback(host) else None,
    )
    asgi: Any = BearerToken(app, token) if token else app

    class Uvicorn(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # signals are handled below
            yield

    config = uvicorn.Config(
        asgi,
        log_level="warning",
        access_log=False,  # uvicorn's access log goes to stdout
        timeout_graceful_shutdown=2,
        lifespan="on",
    )
    web = Uvicorn(config)
    async with anyio.create_task_group() as tasks:

        async def on_signal() -> None:
            await _signalled()
            web.should_exit = True

        async def announce() -> None:
            while not web.started:
                await anyio.sleep(0.01)
            shown = f"[{host}]" if ":" in host else host
            if ready is not None:
                ready(f"http://{shown}:{port}{PATH}")

        tasks.start_soon(on_signal)
        tasks.start_soon(announce)
        await web.serve(sockets=[listening])
        tasks.cancel_scope.cancel()
