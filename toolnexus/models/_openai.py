"""Talk to any OpenAI-compatible chat-completions endpoint (hosted APIs and local servers).

Install with `pip install "toolnexus[openai]"`. The official SDK is imported only
when an `OpenAIModel` is built, so the rest of toolnexus never needs it.

Settings come from arguments first, then the environment:

| setting    | argument    | environment variable |
|------------|-------------|----------------------|
| endpoint   | `base_url`  | `OPENAI_BASE_URL` (default: the OpenAI API) |
| key        | `api_key`   | `OPENAI_API_KEY` |
| model name | `model`     | `TOOLNEXUS_MODEL` |

`TOOLNEXUS_MODEL` is ours rather than an SDK variable: the SDK has none for the
model, and a toolnexus-specific name cannot clash with another tool's settings.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from types import SimpleNamespace
from typing import Any

from ..errors import ModelError
from ._base import AssistantMessage, ModelRequest, TextDelta, ToolCall, Usage
from ._chat import decode_arguments, to_chat
from ._provider import MODEL_ENV, BrokenStream, ProviderModel, Streamed, setting

__all__ = ["MODEL_ENV", "OpenAIModel"]


class OpenAIModel(ProviderModel):
    """A `Model` backed by the chat-completions API of any OpenAI-compatible server.

    Args:
        model: The model name; default `$TOOLNEXUS_MODEL`.
        base_url: The API root (e.g. `http://127.0.0.1:8080/v1` for a local server);
            default `$OPENAI_BASE_URL`, else the OpenAI API.
        api_key: The key; default `$OPENAI_API_KEY`. Local servers that need none
            still want some value: pass any placeholder.
        timeout: Seconds per request.
        max_retries: How often a 429, 408, 409, 5xx, timeout or lost connection is
            retried, after a bounded backoff (at most 20 s, honouring `retry-after`).
        settings: Extra chat-completions parameters sent with every request
            (`temperature`, `max_completion_tokens`, ...).
        client: A ready `openai.AsyncOpenAI` client to use instead of building one
            (then `base_url`, `api_key`, `timeout` and `max_retries` are ignored).

    Raises:
        ModelError: when the `openai` package is missing, or no model name or
            API key can be found.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        settings: Mapping[str, Any] | None = None,
        client: Any = None,
    ) -> None:
        name = setting(model, MODEL_ENV, who="OpenAIModel", what="a model name")
        self.model = name
        self.settings: dict[str, Any] = dict(settings or {})
        self.max_retries = max_retries
        if client is not None:
            self._client: Any = client
        else:
            sdk = _import_sdk()
            key = setting(
                api_key,
                "OPENAI_API_KEY",
                who="OpenAIModel",
                what="an API key",
                hint=" (a local server that checks none still wants a placeholder value)",
            )
            self._client = sdk.AsyncOpenAI(
                api_key=key,
                base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
                timeout=timeout,
                max_retries=0,  # toolnexus retries itself: a bounded backoff
            )
        self.base_url = str(self._client.base_url)

    async def complete(self, request: ModelRequest, /) -> AssistantMessage:
        """Send one chat-completions request and translate the answer.

        A 429, 408, 409, 5xx, timeout or lost connection is retried (`max_retries`
        times, a bounded backoff honouring the server's `retry-after`).

        Raises:
            ModelError: when the server cannot be reached, answers with an HTTP
                error, or returns no usable choice.
        """
        sdk = _import_sdk()
        body = self.request_body(request)

        async def once() -> AssistantMessage:
            response = await self._client.chat.completions.create(**body)
            return from_openai_response(response, where=self.base_url, **_ids(request))

        return await self._retried(sdk, once)

    def stream(self, request: ModelRequest, /) -> Streamed:
        """`complete`, streamed: the answer's text as it arrives, then the whole message.

        A failure before any text arrived is retried as `complete` retries; one
        after it (a connection lost mid-answer, a stream that ends early) is a
        ModelError.
        """
        sdk = _import_sdk()
        body = {
            **self.request_body(request),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        return self._retried_stream(sdk, lambda: self._stream_once(body, request))

    @staticmethod
    def usage_of(response: Any) -> Usage | None:
        """The `Usage` an OpenAI-format response reports: the cached part of the prompt is
        `cache_read_tokens`, `input_tokens` the rest."""
        return usage_of(response)

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The chat completions body `request` becomes (not streamed): the system message is
        the frozen soul, the tool specs frozen with it."""
        body: dict[str, Any] = {
            **self.settings,
            "model": self.model,
            "messages": to_openai_messages(request),
        }
        if request.tools:
            body["tools"] = [tool.to_openai() for tool in request.tools]
        return body

    async def _stream_once(self, body: dict[str, Any], request: ModelRequest) -> Streamed:
        texts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage: Any = None
        seen = finished = False
        chunks = await self._client.chat.completions.create(**body)
        async with chunks:  # the response is released however the stream ends
            async for chunk in chunks:
                usage = getattr(chunk, "usage", None) or usage
                for choice in getattr(chunk, "choices", None) or ():
                    seen = True
                    finished = finished or bool(choice.finish_reason)
                    delta = choice.delta
                    if delta.content:
                        texts.append(delta.content)
                        yield TextDelta(delta.content)
                    for tc in delta.tool_calls or ():
                        index = tc.index if isinstance(tc.index, int) else len(calls)
                        slot = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
                        slot["id"] = tc.id or slot["id"]
                        if tc.function is not None:
                            name = tc.function.name or ""
                            # Some servers repeat the name in every fragment.
                            if name and not slot["name"].endswith(name):
                                slot["name"] += name
                            slot["arguments"] += tc.function.arguments or ""
        if seen and not finished:
            raise BrokenStream("the stream ended before the answer did")
        message = SimpleNamespace(
            content="".join(texts),
            tool_calls=[
                SimpleNamespace(
                    id=slot["id"],
                    type="function",
                    function=SimpleNamespace(name=slot["name"], arguments=slot["arguments"]),
                )
                for _, slot in sorted(calls.items())
            ],
        )
        response = SimpleNamespace(
            choices=[SimpleNamespace(message=message)] if seen else [], usage=usage
        )
        yield from_openai_response(response, where=self.base_url, **_ids(request))


def _ids(request: ModelRequest) -> dict[str, Any]:
    """What `from_openai_response` needs to give every call an id of its own."""
    turn = 1 + sum(isinstance(m, AssistantMessage) for m in request.messages)
    taken = frozenset(
        tc.id for m in request.messages if isinstance(m, AssistantMessage) for tc in m.tool_calls
    )
    return {"turn": turn, "taken": taken}


def _import_sdk() -> Any:
    try:
        import openai
    except ImportError as exc:
        raise ModelError(
            'OpenAIModel needs the openai package: pip install "toolnexus[openai]"'
        ) from exc
    return openai


def to_openai_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """Translate a request into chat-completions messages, system prompt first."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": request.system}]
    messages.extend(to_chat(message) for message in request.messages)
    return messages


def from_openai_response(
    response: Any, *, where: str, turn: int = 1, taken: Collection[str] = ()
) -> AssistantMessage:
    """Translate a chat-completions response (the SDK object) into an assistant message.

    Every tool call gets an id the results can answer: a call whose id is missing,
    or repeats one in this answer or in `taken` (the ids already in the history),
    gets `call_<turn>_<n>` (the n-th call of the turn-th assistant message), the
    same shape `ScriptedModel` uses.

    Raises:
        ModelError: when the response has no choices.
    """
    choices = getattr(response, "choices", None)
    if not choices:
        raise ModelError(f"{where} answered without any choice: {response!r}")
    message = choices[0].message
    text = message.content or getattr(message, "refusal", None) or ""
    seen = set(taken)
    calls: list[ToolCall] = []
    for n, tc in enumerate(message.tool_calls or (), start=1):
        call_id = getattr(tc, "id", None)
        if not isinstance(call_id, str) or not call_id or call_id in seen:
            call_id = _fresh_id(f"call_{turn}_{n}", seen)
        seen.add(call_id)
        calls.append(_from_openai_tool_call(tc, call_id))
    return AssistantMessage(text, tool_calls=tuple(calls), usage=usage_of(response))


def usage_of(response: Any) -> Usage | None:
    """The response's token usage; the cached part of the prompt counts as cache reads."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cache_read_tokens=cached,
    )


def _fresh_id(base: str, seen: set[str]) -> str:
    candidate, extra = base, 1
    while candidate in seen:
        extra += 1
        candidate = f"{base}_{extra}"
    return candidate


def _from_openai_tool_call(tc: Any, call_id: str) -> ToolCall:
    function = getattr(tc, "function", None)
    if getattr(tc, "type", "function") != "function" or function is None:
        kind = getattr(tc, "type", "?")
        name = getattr(getattr(tc, kind, None), "name", "") or kind
        return ToolCall(
            name,
            id=call_id,
            arguments_error=f"unsupported tool call type {kind!r}: only function tools exist here",
        )
    raw = function.arguments or ""
    arguments, error = decode_arguments(raw)
    return ToolCall(function.name, arguments, id=call_id, raw_arguments=raw, arguments_error=error)
