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

import json
import os
from collections.abc import Collection, Mapping
from typing import Any

from ...errors import ModelError
from ._base import (
    AssistantMessage,
    Message,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["MODEL_ENV", "OpenAIModel"]

#: The environment variable naming the model when `OpenAIModel(model=None)`.
MODEL_ENV = "TOOLNEXUS_MODEL"


class OpenAIModel:
    """A `Model` backed by the chat-completions API of any OpenAI-compatible server.

    Args:
        model: The model name; default `$TOOLNEXUS_MODEL`.
        base_url: The API root (e.g. `http://127.0.0.1:8080/v1` for a local server);
            default `$OPENAI_BASE_URL`, else the OpenAI API.
        api_key: The key; default `$OPENAI_API_KEY`. Local servers that need none
            still want some value: pass any placeholder.
        timeout: Seconds per request.
        max_retries: How often the SDK retries connection errors, 429s and 5xxs.
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
        name = model or os.environ.get(MODEL_ENV)
        if not name:
            raise ModelError(f"OpenAIModel needs a model name: pass model=... or set ${MODEL_ENV}")
        self.model: str = name
        self.settings: dict[str, Any] = dict(settings or {})
        if client is not None:
            self._client: Any = client
        else:
            sdk = _import_sdk()
            key = api_key or os.environ.get("OPENAI_API_KEY")
            if not key:
                raise ModelError(
                    "OpenAIModel needs an API key: pass api_key=... or set $OPENAI_API_KEY "
                    "(a local server that checks none still wants a placeholder value)"
                )
            self._client = sdk.AsyncOpenAI(
                api_key=key,
                base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
                timeout=timeout,
                max_retries=max_retries,
            )
        self.base_url: str = str(self._client.base_url)

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r})"

    async def complete(self, request: ModelRequest, /) -> AssistantMessage:
        """Send one chat-completions request and translate the answer.

        Raises:
            ModelError: when the server cannot be reached, answers with an HTTP
                error, or returns no usable choice.
        """
        sdk = _import_sdk()
        body: dict[str, Any] = {
            **self.settings,
            "model": self.model,
            "messages": to_openai_messages(request),
        }
        if request.tools:
            body["tools"] = [tool.to_openai() for tool in request.tools]
        try:
            response = await self._client.chat.completions.create(**body)
        except sdk.APIStatusError as exc:
            raise ModelError(
                f"{self.base_url} answered HTTP {exc.status_code} for model "
                f"{self.model!r}: {_status_detail(exc)}"
            ) from exc
        except sdk.APIConnectionError as exc:
            raise ModelError(f"cannot reach {self.base_url}: {exc.message}") from exc
        except sdk.OpenAIError as exc:
            raise ModelError(f"{self.base_url} request failed: {exc}") from exc
        turn = 1 + sum(isinstance(m, AssistantMessage) for m in request.messages)
        taken = frozenset(
            tc.id
            for m in request.messages
            if isinstance(m, AssistantMessage)
            for tc in m.tool_calls
        )
        return from_openai_response(response, where=self.base_url, turn=turn, taken=taken)

    async def aclose(self) -> None:
        """Close the HTTP connections the client holds."""
        await self._client.close()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _status_detail(exc: Any) -> str:
    """The server's own error message, without the SDK's "Error code: N - " prefix."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if isinstance(message, str) and message:
            return message
    return str(exc.message)


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
    messages.extend(_to_openai_message(message) for message in request.messages)
    return messages


def _to_openai_message(message: Message) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.text}
    if isinstance(message, ToolResultMessage):
        return {"role": "tool", "tool_call_id": message.call_id, "content": message.output}
    if not message.tool_calls:
        # Chat completions rejects an assistant message with neither content nor calls.
        return {"role": "assistant", "content": message.text}
    return {
        "role": "assistant",
        "content": message.text or None,
        "tool_calls": [
            {
                "id": tc.id,
                "type": "function",
                "function": {
                    "name": tc.name,
                    "arguments": (
                        tc.raw_arguments
                        if tc.raw_arguments is not None and tc.raw_arguments.strip()
                        # Blank text (some servers' "no arguments") goes back as a JSON object.
                        else json.dumps(dict(tc.arguments), ensure_ascii=False)
                    ),
                },
            }
            for tc in message.tool_calls
        ],
    }


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
    return AssistantMessage(text, tool_calls=tuple(calls))


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


def decode_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Decode a tool call's argument text into an object, or say why it is not one.

    Empty text means "no arguments": some servers send "" for tools without parameters.
    """
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        shown = raw if len(raw) <= 200 else raw[:197] + "..."
        return {}, f"invalid arguments: not valid JSON ({exc.msg} at position {exc.pos}): {shown}"
    if not isinstance(value, dict):
        return {}, f"invalid arguments: expected a JSON object, got {type(value).__name__}"
    return value, None
