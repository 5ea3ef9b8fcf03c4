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
    # Made as a TCP socket by name (IPPROTO_TCP), so the event loop sets TCP_NODELAY on
    # every accepted connection: without it each answer on a kept-alive connection waits
    # ~40 ms for Nagle's algorithm.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name == "posix":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(socket.SOMAXCONN)
    except OSError as exc:
        sock.close()
        raise ServeError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


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
    trust_client: bool = False,
) -> None:
    """Serve `home` until the client leaves (stdio) or the process is told to stop.

    Over HTTP the endpoint is `http://HOST:PORT/mcp`; on an address other than
    loopback a bearer token is required, and with a token every request must
    carry `Authorization: Bearer <token>`. `ready` is called with the address
    once it listens (port 0 picks a free one). A client's memory writes are
    untrusted, held for a person's review under `memory_review: untrusted`,
    unless `trust_client` (the client is a person's own: SPEC §3, §13).

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
            f"serving on {host} (not loopback) needs a bearer token: set {TOKEN_ENV} or pass "
            "--token-file FILE"
        )
    import anyio

    from ._server import HomeServer

    served = HomeServer(Path(home), one_connection=transport == "stdio", trust_client=trust_client)
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


def _evict_when_full(sessions: Any) -> None:
    """At the session cap, end the least recently used idle session to admit a new one,
    instead of refusing every new client until one leaves (most clients never send
    DELETE). A session with a request in flight or an open event stream is never ended.

    Reaches into the SDK's session manager (`_admit_session`, its transports' idle
    deadlines): the `mcp` version is pinned for it, and the tests hold it to account.
    """
    admit = sessions._admit_session

    def admit_or_evict(requestor: Any) -> Any:
        held = sessions._server_instances
        if sessions.max_sessions is not None and len(held) >= sessions.max_sessions:
            idle = [
                (transport.idle_scope.deadline, id, transport)
                for id, transport in held.items()
                if transport.idle_scope is not None and transport._requests_in_flight == 0
            ]
            if idle:
                _, id, transport = min(idle, key=lambda item: item[0])
                held.pop(id, None)
                sessions._session_owners.pop(id, None)
                assert sessions._task_group is not None
                sessions._task_group.start_soon(transport.terminate)
        return admit(requestor)

    sessions._admit_session = admit_or_evict


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
    import uvicorn

    server = served.server

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
    sessions = server.session_manager
    _evict_when_full(sessions)
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
            # End every session now: a client's open event stream would otherwise hold the
            # shutdown for uvicorn's whole grace period.
            for transport in list(sessions._server_instances.values()):
                await transport.terminate()

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
