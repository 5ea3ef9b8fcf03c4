"""Talk to Claude through the Anthropic Messages API, with prompt caching.

Install with `pip install "toolnexus[anthropic]"`. The official SDK is imported
only when an `AnthropicModel` is built, so the rest of toolnexus never needs it.

The frozen soul is what makes caching pay: every request of a session sends the
same tools and the same system prompt, byte for byte, so they are marked as a
cached prefix (`cache_control`), and so is the conversation so far, which the
next request of the tool loop (or the next turn) starts with. Reads from the
cache are billed at a fraction of the price; `AssistantMessage.usage` says how
many tokens were read from it and written to it.

Settings come from arguments first, then the environment:

| setting    | argument    | environment variable |
|------------|-------------|----------------------|
| endpoint   | `base_url`  | `ANTHROPIC_BASE_URL` (default: the Anthropic API) |
| key        | `api_key`   | `ANTHROPIC_API_KEY` |
| model name | `model`     | `TOOLNEXUS_MODEL` |
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from ..errors import ModelError
from ._base import (
    AssistantMessage,
    Message,
    ModelRequest,
    TextDelta,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ._provider import MODEL_ENV, BrokenStream, ProviderModel, Streamed, setting

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AnthropicModel",
    "from_anthropic_response",
    "to_anthropic_request",
]

#: Output tokens allowed per response unless told otherwise (the API requires a cap).
DEFAULT_MAX_TOKENS = 4096
_CACHED = {"type": "ephemeral"}


class AnthropicModel(ProviderModel):
    """A `Model` backed by the Anthropic Messages API, caching the frozen prefix.

    Args:
        model: The model name (e.g. `claude-sonnet-4-5`); default `$TOOLNEXUS_MODEL`.
        base_url: The API root; default `$ANTHROPIC_BASE_URL`, else the Anthropic API.
        api_key: The key; default `$ANTHROPIC_API_KEY`.
        max_tokens: Output tokens allowed per response.
        timeout: Seconds per request.
        max_retries: How often a 429, 408, 409, 5xx, timeout or lost connection is
            retried, after a bounded backoff (at most 20 s, honouring `retry-after`).
        settings: Extra Messages API parameters sent with every request
            (`temperature`, `top_p`, ...).
        client: A ready `anthropic.AsyncAnthropic` client to use instead of building
            one (then `base_url`, `api_key`, `timeout` and `max_retries` are ignored).

    Raises:
        ModelError: when the `anthropic` package is missing, or no model name or
            API key can be found.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 120.0,
        max_retries: int = 2,
        settings: Mapping[str, Any] | None = None,
        client: Any = None,
    ) -> None:
        name = setting(model, MODEL_ENV, who="AnthropicModel", what="a model name")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ModelError(f"max_tokens must be a whole number from 1, got {max_tokens!r}")
        self.model = name
        self.max_tokens = max_tokens
        self.settings: dict[str, Any] = dict(settings or {})
        self.max_retries = max_retries
        if client is not None:
            self._client: Any = client
        else:
            sdk = _import_sdk()
            key = setting(api_key, "ANTHROPIC_API_KEY", who="AnthropicModel", what="an API key")
            self._client = sdk.AsyncAnthropic(
                api_key=key,
                base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                timeout=timeout,
                max_retries=0,  # toolnexus retries itself: a bounded backoff
            )
        self.base_url = str(self._client.base_url)

    async def complete(self, request: ModelRequest, /) -> AssistantMessage:
        """Send one Messages API request and translate the answer.

        A 429, 408, 409, 5xx, timeout or lost connection is retried (`max_retries`
        times, a bounded backoff honouring the server's `retry-after`).

        Raises:
            ModelError: when the server cannot be reached, answers with an HTTP
                error, or answers something that is not a message.
        """
        sdk = _import_sdk()
        arguments = _arguments(self.request_body(request))

        async def once() -> AssistantMessage:
            response = await self._client.messages.create(**arguments)
            return from_anthropic_response(response, where=self.base_url)

        return await self._retried(sdk, once)

    def stream(self, request: ModelRequest, /) -> Streamed:
        """`complete`, streamed: the answer's text as it arrives, then the whole message.

        A failure before any text arrived is retried as `complete` retries; one
        after it (a connection lost mid-answer, a stream that ends early) is a
        ModelError.
        """
        sdk = _import_sdk()
        body = self.request_body(request)
        return self._retried_stream(sdk, lambda: self._stream_once(body))

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages API body `request` becomes: the cache breakpoints are on the last tool
        spec, the system prompt and the conversation's last block (prompt caching)."""
        return to_anthropic_request(
            request, model=self.model, max_tokens=self.max_tokens, settings=self.settings
        )

    async def _stream_once(self, body: dict[str, Any]) -> Streamed:
        blocks: list[dict[str, Any]] = []
        usage: dict[str, int] = {}
        stop = None
        ended = False
        events = await self._client.messages.create(**_arguments(body), stream=True)
        async with events:  # the response is released however the stream ends
            async for event in events:
                kind = event.type
                if kind == "message_start":
                    usage.update(_counts(event.message.usage))
                elif kind == "content_block_start":
                    block = event.content_block
                    blocks.append(
                        {
                            "type": block.type,
                            "text": getattr(block, "text", "") or "",
                            "id": getattr(block, "id", ""),
                            "name": getattr(block, "name", ""),
                            "input": getattr(block, "input", None),
                            "json": "",
                        }
                    )
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        blocks[event.index]["text"] += delta.text
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta":
                        blocks[event.index]["json"] += delta.partial_json
                elif kind == "message_delta":
                    stop = event.delta.stop_reason
                    usage.update(_counts(event.usage))
                elif kind == "message_stop":
                    ended = True
        if not ended:
            raise BrokenStream("the stream ended before the message did")
        response = SimpleNamespace(
            content=[_block(b) for b in blocks],
            stop_reason=stop,
            usage=SimpleNamespace(**usage),
        )
        yield from_anthropic_response(response, where=self.base_url)


def _arguments(body: dict[str, Any]) -> dict[str, Any]:
    """`messages.create` arguments: the request's own keys as such; extra settings ride
    in the body, so any parameter the API takes works whatever this SDK version names."""
    core = ("model", "max_tokens", "system", "messages", "tools")
    extra = {k: v for k, v in body.items() if k not in core}
    return {**{k: body[k] for k in core if k in body}, "extra_body": extra or None}


def _counts(usage: Any) -> dict[str, int]:
    """The token counts a streamed event reports (the later ones update the earlier)."""
    names = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    return {n: v for n in names if isinstance(v := getattr(usage, n, None), int)}


def _block(block: dict[str, Any]) -> SimpleNamespace:
    """A streamed content block put back together."""
    if block["type"] != "tool_use":
        return SimpleNamespace(type=block["type"], text=block["text"])
    try:
        if block["json"].strip():
            arguments: Any = json.loads(block["json"])
        else:  # no deltas: the input came whole with the block's start, if at all
            arguments = block["input"] if isinstance(block["input"], dict) else {}
    except json.JSONDecodeError:
        arguments = block["json"]  # not an object: from_anthropic_response says so
    return SimpleNamespace(type="tool_use", id=block["id"], name=block["name"], input=arguments)


def _import_sdk() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise ModelError(
            'AnthropicModel needs the anthropic package: pip install "toolnexus[anthropic]"'
        ) from exc
    return anthropic


def to_anthropic_request(
    request: ModelRequest,
    *,
    model: str,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Messages API body for `request`, with three cache breakpoints.

    The tools (the last one marked) and the system prompt (marked) form a prefix
    that is byte-identical on every request of a session, and across sessions of
    an unchanged home; the last block of the conversation is marked too, so the
    next request reads everything before it from the cache.
    """
    body: dict[str, Any] = {**(settings or {}), "model": model, "max_tokens": max_tokens}
    if request.tools:
        tools = [tool.to_anthropic() for tool in request.tools]
        tools[-1] = {**tools[-1], "cache_control": _CACHED}
        body["tools"] = tools
    body["system"] = [{"type": "text", "text": request.system, "cache_control": _CACHED}]
    messages = to_anthropic_messages(request.messages)
    if messages:
        last = messages[-1]["content"]
        last[-1] = {**last[-1], "cache_control": _CACHED}
    body["messages"] = messages
    return body


def to_anthropic_messages(history: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The conversation as Messages API turns: tool results ride in user turns, and
    consecutive turns of one role are merged, as the API expects."""
    turns: list[dict[str, Any]] = []
    for message in history:
        role, blocks = _blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        text = message.text if message.text.strip() else "(empty message)"
        return "user", [{"type": "text", "text": text}]  # whitespace alone is refused
    if isinstance(message, ToolResultMessage):
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": tool_id(message.call_id),
            "content": message.output,
        }
        if message.is_error:
            block["is_error"] = True
        return "user", [block]
    blocks: list[dict[str, Any]] = []
    if message.text.strip():
        blocks.append({"type": "text", "text": message.text})
    for tc in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": tool_id(tc.id), "name": tc.name, "input": dict(tc.arguments)}
        )
    if not blocks:  # the API refuses an empty turn; an empty answer is still an answer
        blocks.append({"type": "text", "text": "(no answer)"})
    return "assistant", blocks


_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def tool_id(id: str) -> str:
    """A tool call's id as the API accepts it (letters, digits, `_`, `-`): an id made
    elsewhere (`functions.memory:0`, an imported one) is mapped, the same way each
    time, with a digest of the original so that two ids never become one."""
    if id and not _ID_CHARS.search(id):
        return id
    digest = hashlib.sha256(id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{_ID_CHARS.sub('_', id)[:40]}_{digest}"


def from_anthropic_response(response: Any, *, where: str) -> AssistantMessage:
    """Translate a Messages API response (the SDK object) into an assistant message.

    A tool call cut off by `max_tokens` comes back with `arguments_error`, so the
    loop tells the model instead of running a half-formed call.

    Raises:
        ModelError: when the response holds no content list.
    """
    content = getattr(response, "content", None)
    if not isinstance(content, list):
        raise ModelError(f"{where} answered without a message: {response!r}")
    stop = getattr(response, "stop_reason", None)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {}
            error = None
            if stop == "max_tokens":
                error = (
                    "invalid arguments: the answer was cut off at max_tokens before this "
                    "call was complete; answer in fewer words or raise max_tokens"
                )
            elif not isinstance(block.input, dict):
                error = f"invalid arguments: expected a JSON object, got {block.input!r}"
            calls.append(
                ToolCall(
                    block.name,
                    arguments,
                    id=block.id,
                    raw_arguments=json.dumps(block.input, ensure_ascii=False),
                    arguments_error=error,
                )
            )
    text = "".join(texts)
    if not text and not calls and stop == "refusal":
        text = "(the model declined to answer)"
    return AssistantMessage(text, tool_calls=tuple(calls), usage=usage_of(response))


def usage_of(response: Any) -> Usage | None:
    """The response's token usage: uncached input, output, cache reads and writes."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    return Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
    )
