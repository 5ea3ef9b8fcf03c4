"""A tiny chat-completions server on 127.0.0.1 for testing the OpenAI-compatible adapter.

It records every request (path, headers, JSON body) and answers with replies the
test queued, in order, so a test asserts both sides of the wire.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from toolnexus import define_tool


@define_tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


Reply = (
    tuple[int, Any] | tuple[int, Any, dict[str, str]] | Callable[[dict[str, Any]], tuple[int, Any]]
)


@dataclass(frozen=True)
class SSE:
    """A streamed reply: server-sent events, each `(event name or None, JSON data)`,
    or a raw data line as a string (`[DONE]`)."""

    events: tuple[tuple[str | None, Any] | str, ...]

    def body(self) -> bytes:
        out = []
        for event in self.events:
            if isinstance(event, str):
                out.append(f"data: {event}\n\n")
                continue
            name, data = event
            head = f"event: {name}\n" if name else ""
            out.append(f"{head}data: {json.dumps(data)}\n\n")
        return "".join(out).encode()


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class LoopbackServer:
    """Record requests and answer each with the next queued reply."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8")
                try:
                    body: Any = json.loads(raw)
                except json.JSONDecodeError:
                    body = raw
                with server._lock:
                    server.requests.append(
                        Recorded(
                            "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                        )
                    )
                    reply = server._replies.pop(0) if server._replies else None
                payload: Any
                headers: dict[str, str] = {}
                if reply is None:
                    status, payload = 500, {"error": {"message": "loopback: no reply queued"}}
                elif callable(reply):
                    status, payload = reply(body)
                elif len(reply) == 3:
                    status, payload, headers = reply
                else:
                    status, payload = reply
                kind = "application/json"
                if status == 200 and isinstance(body, dict) and body.get("stream"):
                    payload = as_stream(payload)  # a streamed request gets its answer streamed
                if isinstance(payload, SSE):
                    data, kind = payload.body(), "text/event-stream"
                else:
                    data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def reply(self, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        """Queue the next answer (an `SSE` payload is streamed)."""
        with self._lock:
            self._replies.append((status, payload, dict(headers or {})))

    def reply_with(self, fn: Callable[[dict[str, Any]], tuple[int, Any]]) -> None:
        """Queue a function that answers the next request from its body."""
        with self._lock:
            self._replies.append(fn)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received so far."""
        return [r.body for r in self.requests]


@contextmanager
def loopback_server() -> Iterator[LoopbackServer]:
    """Run a `LoopbackServer` for the duration of the block."""
    server = LoopbackServer()
    server._thread.start()
    try:
        yield server
    finally:
        server._httpd.shutdown()
        server._httpd.server_close()
        server._thread.join(timeout=10)


def completion(
    text: str | None = None,
    *,
    tool_calls: Sequence[tuple[str | None, str, str]] = (),
    model: str = "loopback-model",
) -> dict[str, Any]:
    """A chat-completions response body: text and/or (id, name, arguments-JSON) tool calls.

    An id of None leaves the `id` key out, as some local servers do.
    """
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {
                **({} if cid is None else {"id": cid}),
                "type": "function",
                "function": {"name": name, "arguments": args},
            }
            for cid, name, args in tool_calls
        ]
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def as_stream(payload: Any) -> Any:
    """A whole chat-completions or Messages API answer, as the stream that carries it."""
    if isinstance(payload, dict) and "choices" in payload:
        return _openai_stream(payload)
    if isinstance(payload, dict) and payload.get("type") == "message":
        return _anthropic_stream(payload)
    return payload


def openai_chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    *,
    usage: dict[str, Any] | None = None,
) -> tuple[None, Any]:
    """One `chat.completion.chunk` event: a delta of the first choice, or (`usage`) the
    usage-only chunk that ends a stream asked to include it."""
    head = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk", "created": 0}
    if usage is not None:
        return None, {**head, "model": "loopback-model", "choices": [], "usage": usage}
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return None, {**head, "model": "loopback-model", "choices": [choice]}


def anthropic_stream(
    *blocks: tuple[str, Any], stop: str | None, usage: dict[str, int], output_tokens: int = 7
) -> SSE:
    """A Messages API stream of `blocks`, each ("text", [pieces]) or ("tool_use", (id,
    name, [JSON pieces])); `usage` opens it, `output_tokens` closes it."""
    start = {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": "claude-loopback",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"output_tokens": 1, **usage},
    }
    events: list[Any] = [("message_start", {"type": "message_start", "message": start})]
    for index, (kind, value) in enumerate(blocks):
        if kind == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in value]
        else:
            id, name, pieces = value
            opened = {"type": "tool_use", "id": id, "name": name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            )
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop_delta = {"stop_reason": stop, "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": stop_delta,
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return SSE(tuple(events))


def _openai_stream(payload: dict[str, Any]) -> SSE:
    message = payload["choices"][0]["message"]
    events: list[Any] = [
        openai_chunk({"role": "assistant", "content": message.get("content") or ""})
    ]
    for n, call in enumerate(message.get("tool_calls") or ()):
        events.append(openai_chunk({"tool_calls": [{"index": n, **call}]}))
    events.append(openai_chunk({}, payload["choices"][0].get("finish_reason") or "stop"))
    if payload.get("usage"):
        events.append(openai_chunk(usage=payload["usage"]))
    events.append("[DONE]")
    return SSE(tuple(events))


def _anthropic_stream(payload: dict[str, Any]) -> SSE:
    usage = dict(payload.get("usage") or {})
    output = usage.pop("output_tokens", 0)
    blocks = [
        ("text", [block["text"]])
        if block["type"] == "text"
        else ("tool_use", (block["id"], block["name"], [json.dumps(block["input"])]))
        for block in payload["content"]
    ]
    return anthropic_stream(
        *blocks, stop=payload.get("stop_reason"), usage=usage, output_tokens=output
    )
