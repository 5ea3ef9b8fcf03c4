"""`toolnexus serve`: a persona's home for any MCP client, over stdio or HTTP."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..mcp._defaults import DEFAULT_PORT, TOKEN_ENV
from ._memory import UsageError

__all__ = ["HELP", "arguments", "example", "serve"]

HELP = "Serve a home to MCP clients (stdio, or HTTP with --transport http)."


def example(prog: str) -> str:
    return (
        f"{prog} serve ada\n  "
        f"{prog} serve ada --transport http --port 8765\n  "
        f"{TOKEN_ENV}=... {prog} serve ada --transport http --host 0.0.0.0"
    )


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="the home directory")
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: the client starts this process) or streamable HTTP",
    )
    p.add_argument(
        "--host", help="http: the address to listen on (default 127.0.0.1; any other needs a token)"
    )
    p.add_argument(
        "--port", type=int, help=f"http: the port (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    p.add_argument(
        "--token",
        help=f"http: the bearer token every request must carry (default: ${TOKEN_ENV}); "
        "shown to every user of the machine in the process list: prefer the variable "
        "or --token-file",
    )
    p.add_argument(
        "--trust-client",
        action="store_true",
        help="the client is your own: its memory writes are applied, not held for review "
        "(memory_review: untrusted)",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="http: read the bearer token from FILE (its first line), kept out of the process list",
    )


def _token(args: argparse.Namespace, where: str) -> str | None:
    """The bearer token from --token, --token-file or the environment (in that order)."""
    if args.token is not None and args.token_file is not None:
        raise UsageError("--token, --token-file: give one of them")
    if args.token is not None:
        print(
            f"{where}: warning: --token shows the token to every user of this machine in "
            f"the process list; prefer ${TOKEN_ENV} or --token-file",
            file=sys.stderr,
        )
        return str(args.token)
    if args.token_file is not None:
        path = Path(args.token_file)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UsageError(f"--token-file {path}: cannot be read ({why})") from None
        token = text.splitlines()[0].strip() if text.strip() else ""
        if not token:
            raise UsageError(f"--token-file {path}: holds no token (its first line is empty)")
        if path.stat().st_mode & 0o077:
            print(
                f"{where}: warning: --token-file {path} can be read by other users "
                f"(chmod 600 {path})",
                file=sys.stderr,
            )
        return token
    return os.environ.get(TOKEN_ENV) or None


def serve(args: argparse.Namespace, home: Path, prog: str) -> int:
    """Check the options, then serve until the client leaves or a signal stops it."""
    where = f"{prog} serve"
    if args.transport == "stdio":
        given = [
            f"--{n.replace('_', '-')}"
            for n in ("host", "port", "token", "token_file")
            if getattr(args, n) is not None
        ]
        if given:
            raise UsageError(f"{', '.join(given)}: only with --transport http")
    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise UsageError(f"--port: {port} is not a port (0 to 65535; 0 picks a free one)")
    token = _token(args, where)
    try:
        import mcp  # noqa: F401
    except ImportError:
        print(
            f'{where}: needs the MCP SDK: pip install "toolnexus[mcp]"',
            file=sys.stderr,
        )
        return 1
    from ..errors import ArgumentError
    from ..mcp._serve import serve as run

    def ready(url: str) -> None:
        if url == "stdio":
            shown = "over stdio"
        else:
            shown = f"at {url}" + (" (bearer token required)" if token else "")
        print(f"{where}: serving {home} {shown}", file=sys.stderr, flush=True)

    try:
        run(
            home,
            transport=args.transport,
            host=args.host or "127.0.0.1",
            port=port,
            token=token if args.transport == "http" else None,
            ready=ready,
            trust_client=args.trust_client,
        )
    except ArgumentError as exc:
        raise UsageError(str(exc)) from None
    return 0
