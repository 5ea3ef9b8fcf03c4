"""`toolnexus serve --transport http`: a call's latency on a kept-alive connection beside
a fresh connection, and how long SIGTERM takes with a client's event stream open.

Each call is one `tools/list` POST of an open MCP session (raw HTTP, so the client
adds nothing). "kept-alive" reuses one TCP connection for every call, as SDK
clients do; "fresh" opens a new TCP connection per call. Without TCP_NODELAY
the kept-alive calls wait for Nagle's algorithm (~40 ms each); with it they are
at least as quick as fresh ones. Target: kept-alive within 2x fresh.

    python bench/bench_serve.py [--calls 200]
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parent.parent
ACCEPT = "application/json, text/event-stream"


def start(home: Path) -> tuple[subprocess.Popen[str], str]:
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
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    return proc, line.split(" at ", 1)[1].split()[0]


def open_session(url: str) -> str:
    answer = httpx2.post(
        url,
        headers={"Accept": ACCEPT},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        },
    )
    return str(answer.headers["mcp-session-id"])


def calls(url: str, session: str, n: int, *, kept_alive: bool) -> list[float]:
    headers = {"Accept": ACCEPT, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    took = []
    client = httpx2.Client() if kept_alive else None
    try:
        for _ in range(n):
            start = time.perf_counter()
            if client is not None:
                answer = client.post(url, headers=headers, json=body)
            else:
                with httpx2.Client() as once:
                    answer = once.post(url, headers=headers, json=body)
            took.append(time.perf_counter() - start)
            assert answer.status_code == 200, answer.text
    finally:
        if client is not None:
            client.close()
    return took


def sigterm_with_a_stream_open(home: Path) -> float:
    proc, url = start(home)
    session = open_session(url)
    headers = {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": session,
        "Mcp-Protocol-Version": "2025-06-18",
    }
    with httpx2.Client(timeout=30) as http, http.stream("GET", url, headers=headers) as stream:
        assert stream.status_code == 200
        begin = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        return time.perf_counter() - begin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "ada"
        home.mkdir()
        (home / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
        proc, url = start(home)
        try:
            session = open_session(url)
            calls(url, session, 20, kept_alive=True)  # warm up
            kept, fresh = [], []
            for _ in range(4):  # interleaved, so a noisy moment slows both alike
                kept += calls(url, session, args.calls // 4, kept_alive=True)
                fresh += calls(url, session, args.calls // 4, kept_alive=False)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        stop = statistics.median(sigterm_with_a_stream_open(home) for _ in range(3))
    k, f = statistics.median(kept) * 1e3, statistics.median(fresh) * 1e3
    print(f"{'connection':12} {'calls':>6} {'median ms':>10}")
    print(f"{'kept-alive':12} {len(kept):6} {k:10.2f}")
    print(f"{'fresh':12} {len(fresh):6} {f:10.2f}")
    print(f"kept-alive / fresh: {k / f:.2f}x (target: within 2x)")
    print(f"SIGTERM with an event stream open: exits in {stop * 1e3:.0f} ms (median of 3)")


if __name__ == "__main__":
    main()
