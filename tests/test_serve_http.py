"""`toolnexus serve --transport http` as outside clients find it: both protocol eras,
no Nagle delay, a session cap that ends the oldest idle session instead of locking
clients out, a prompt stop with an event stream open, and protocol errors as the MCP
spec names them."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _mcp_wire import PROTOCOL, initialize

mcp = pytest.importorskip("mcp")

import httpx2  # noqa: E402  (installed with the mcp extra)
import mcp.types as types  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from toolnexus.mcp import _serve  # noqa: E402
from toolnexus.mcp._serve import MAX_SESSIONS, _listen  # noqa: E402

MODERN = "2026-07-28"


def make_home(root: Path) -> Path:
    home = root / "ada"
    home.mkdir()
    (home / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
    return home


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    """A server of the test's own (some tests end it, or fill its session table)."""
    home = make_home(tmp_path)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolnexus",
            "serve",
            str(home),
            "--transport",
            "http",
            "--port",
            "0",
            "--trust-client",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert " at http://127.0.0.1:" in line, line
    try:
        yield line.split(" at ", 1)[1].split()[0], home, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def test_the_listening_socket_is_tcp_and_answers_without_nagle() -> None:
    listening = _listen("127.0.0.1", 0)
    with listening, socket.create_connection(listening.getsockname()):
        accepted, _ = listening.accept()
        with accepted:
            assert listening.proto == socket.IPPROTO_TCP  # so the event loop sets NODELAY
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


@pytest.mark.parametrize("mode", [MODERN, "auto", "legacy"])
async def test_clients_of_either_protocol_era_are_served(
    server: tuple[str, Path, subprocess.Popen[str]], mode: str
) -> None:
    url, _home, _ = server
    async with (
        httpx2.AsyncClient() as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        prompt = await client.get_prompt("soul")
        assert isinstance(prompt.messages[0].content, types.TextContent)
        assert prompt.messages[0].content.text.startswith("# Ada")
        done = await client.call_tool("memory", {"action": "add", "text": f"from {mode}"})
        assert not done.is_error
        [content] = (await client.read_resource("toolnexus://ada/MEMORY.md")).contents
        assert isinstance(content, types.TextResourceContents)
        assert f"- from {mode}" in content.text
        with pytest.raises(mcp.MCPError) as info:
            await client.call_tool("nope", {})
        assert info.value.error.code == types.INVALID_PARAMS


async def test_both_eras_advertise_the_same_capabilities(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    found = {}
    for mode in ("legacy", "auto"):  # "auto" asks server/discover, and adopts the new era
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "toolnexus", "serve", str(home)]
        )
        async with Client(params, mode=mode) as client:
            if mode == "legacy":
                result: object = client.session.initialize_result
            else:
                result = client.session.discover_result
                assert MODERN in result.supported_versions
            assert isinstance(result, types.InitializeResult | types.DiscoverResult)
            found[mode] = result.capabilities
    legacy, modern = found["legacy"], found["auto"]
    for caps in (legacy, modern):
        assert caps.prompts is not None
        assert caps.prompts.list_changed is False
        assert caps.tools is not None
        assert caps.tools.list_changed is False
        assert caps.resources is not None
        assert caps.resources.list_changed is True


def open_session(http: httpx2.Client, url: str) -> httpx2.Response:
    return http.post(
        url,
        headers={"Accept": "application/json, text/event-stream"},
        json=initialize("forgetful"),
    )


def list_tools(http: httpx2.Client, url: str, session: str) -> httpx2.Response:
    return http.post(
        url,
        headers={
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session,
            "Mcp-Protocol-Version": PROTOCOL,
        },
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    )


def test_a_full_session_table_ends_the_oldest_idle_session(
    server: tuple[str, Path, subprocess.Popen[str]],
) -> None:
    url, _, _ = server
    ids = []
    with httpx2.Client(timeout=30) as http:
        # Clients that never say goodbye (no DELETE), one more than the cap.
        for _ in range(MAX_SESSIONS + 1):
            answer = open_session(http, url)
            assert answer.status_code == 200, answer.text  # never 503
            ids.append(answer.headers["mcp-session-id"])
        assert list_tools(http, url, ids[0]).status_code == 404  # the oldest idle one went
        newest = list_tools(http, url, ids[-1])
        assert newest.status_code == 200
        assert "memory" in newest.text
        assert list_tools(http, url, ids[1]).status_code == 200  # only one was ended


def test_sigterm_with_an_event_stream_open_ends_the_server_cleanly(
    server: tuple[str, Path, subprocess.Popen[str]],
) -> None:
    url, _, proc = server
    with httpx2.Client(timeout=30) as http:
        session = open_session(http, url).headers["mcp-session-id"]
        headers = {
            "Accept": "text/event-stream",
            "Mcp-Session-Id": session,
            "Mcp-Protocol-Version": PROTOCOL,
        }
        with http.stream("GET", url, headers=headers) as stream:
            assert stream.status_code == 200  # the stream is open
            proc.send_signal(signal.SIGTERM)
            for _ in stream.iter_bytes():  # ends when the server ends the session
                pass
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert out == ""


def test_the_cap_is_the_documented_one() -> None:
    assert MAX_SESSIONS == 100
    assert json.dumps(_serve.PATH) == '"/mcp"'
