"""What both provider adapters share: settings, the client's lifetime, and retrying a
failed request with a bounded backoff, seconds not minutes.

The adapters retry here rather than in the SDKs, whose waits follow a server's
`Retry-After` up to minutes or hours: a 429, a 408 or 409, a 5xx, a timeout or a
lost connection is retried after the server's `retry-after-ms` / `retry-after`
when that is at most `MAX_WAIT` seconds (a longer one is reported at once), else
after an exponential backoff with jitter, at most `max_retries` times. A stream is
retried only while none of its text has been shown.
"""

from __future__ import annotations

import os
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import Any, TypeAlias, TypeVar

from ..errors import ModelError
from ._base import AssistantMessage, TextDelta

__all__ = [
    "MAX_WAIT",
    "MODEL_ENV",
    "BrokenStream",
    "ProviderModel",
    "Streamed",
    "detail",
    "failure",
    "next_wait",
    "retried",
    "retried_stream",
    "retry_wait",
    "server_wait",
    "setting",
]

#: The environment variable naming the model when an adapter is given none.
MODEL_ENV = "TOOLNEXUS_MODEL"

T = TypeVar("T")

#: What an adapter's `stream` returns: text pieces, then the whole message.
Streamed: TypeAlias = AsyncGenerator[TextDelta | AssistantMessage, None]
P = TypeVar("P", bound="ProviderModel")


def setting(given: str | None, env: str, *, who: str, what: str, hint: str = "") -> str:
    """An adapter's setting: the argument, else the environment variable `env`.

    Raises:
        ModelError: naming both ways to give it, when neither does.
    """
    value = given or os.environ.get(env)
    if not value:
        raise ModelError(f"{who} needs {what}: pass {_ARGUMENT[what]}=... or set ${env}{hint}")
    return value


_ARGUMENT = {"a model name": "model", "an API key": "api_key"}


class ProviderModel:
    """The part of a provider adapter that is the same for every provider: its
    model name and endpoint, how often it retries, and closing its client."""

    model: str
    base_url: str
    max_retries: int
    _client: Any

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    async def aclose(self) -> None:
        """Close the HTTP connections the client holds."""
        await self._client.close()

    async def __aenter__(self: P) -> P:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _retried(self, sdk: Any, once: Callable[[], Awaitable[T]]) -> T:
        return await retried(
            sdk, once, retries=self.max_retries, where=self.base_url, model=self.model
        )

    def _retried_stream(
        self, sdk: Any, once: Callable[[], AsyncGenerator[T, None]]
    ) -> AsyncGenerator[T, None]:
        return retried_stream(
            sdk, once, retries=self.max_retries, where=self.base_url, model=self.model
        )


#: The longest wait before a retry, in seconds; a server asking for more is not retried.
MAX_WAIT = 20.0
_FIRST, _LONGEST = 0.5, 8.0


def server_wait(exc: Any) -> float | None:
    """The wait a failed response asks for (`retry-after-ms`, `retry-after` in seconds)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) * scale, 0.0)
        except ValueError:
            return None  # an HTTP date: use the backoff
    return None


def retry_wait(exc: Any, *, status: int | None, attempt: int) -> float | None:
    """Seconds to wait before retry `attempt` (0-based) of a request that failed with
    `exc` (`status` its HTTP status, None for a timeout or a lost connection); None
    when it is not worth retrying."""
    if status is not None and status not in (408, 409, 429) and status < 500:
        return None
    asked = server_wait(exc)
    if asked is not None:
        return asked if asked <= MAX_WAIT else None
    backoff: float = min(_FIRST * 2**attempt, _LONGEST)
    return backoff * random.uniform(0.75, 1.0)


class BrokenStream(Exception):
    """A streamed answer that ended before the provider said it was complete."""


#: Transport libraries under the SDKs: their errors mid-stream mean a lost connection.
_TRANSPORTS = ("httpx", "httpx2", "httpcore", "h11", "h2")


def _status(sdk: Any, exc: BaseException) -> tuple[bool, int | None]:
    """Whether `exc` may be retried at all, and its HTTP status (None: no response)."""
    if isinstance(exc, sdk.APIStatusError):
        # An error event inside a stream arrives with the stream's own 200.
        return True, None if exc.status_code == 200 else exc.status_code
    if isinstance(exc, (sdk.APIConnectionError, BrokenStream)):
        return True, None
    return type(exc).__module__.split(".")[0] in _TRANSPORTS, None


def next_wait(sdk: Any, exc: BaseException, *, attempt: int, retries: int) -> float | None:
    """Seconds before the next try of a request that failed with `exc`, or None."""
    if attempt >= retries:
        return None
    may, status = _status(sdk, exc)
    return retry_wait(exc, status=status, attempt=attempt) if may else None


def detail(exc: Any) -> str:
    """The server's own error message, on one line and not too long."""
    body = getattr(exc, "body", None)
    text = str(getattr(exc, "message", exc))
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if isinstance(message, str) and message:
            text = message
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def failure(sdk: Any, exc: BaseException, *, where: str, model: str) -> ModelError:
    """The one-line ModelError for a request that failed for good."""
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, sdk.APIStatusError):
        if exc.status_code == 200:
            return ModelError(f"{where}: the answer broke off with an error: {detail(exc)}")
        message = f"{where} answered HTTP {exc.status_code} for model {model!r}: {detail(exc)}"
        asked = server_wait(exc)
        if asked is not None and asked > MAX_WAIT:
            message += (
                f" (it asked to wait {asked:.0f} s; toolnexus waits {MAX_WAIT:.0f} s at most)"
            )
        return ModelError(message)
    if isinstance(exc, sdk.APIConnectionError):
        return ModelError(f"cannot reach {where}: {detail(exc)}")
    if isinstance(exc, BrokenStream) or _status(sdk, exc)[0]:
        return ModelError(
            f"{where}: the answer broke off: {' '.join(str(exc).split()) or type(exc).__name__}"
        )
    if isinstance(exc, ValueError):  # a body that is not JSON
        return ModelError(f"{where} answered something unreadable: {detail(exc)}")
    return ModelError(f"{where} request failed: {detail(exc)}")


async def retried(
    sdk: Any, once: Callable[[], Awaitable[T]], *, retries: int, where: str, model: str
) -> T:
    """`await once()`, tried again after each retryable failure; a failure for good
    is raised as a one-line ModelError."""
    import asyncio  # here, not at the top: the command line's start stays light

    attempt = 0
    while True:
        try:
            return await once()
        except Exception as exc:  # every failure ends as a ModelError, or a retry
            wait = next_wait(sdk, exc, attempt=attempt, retries=retries)
            if wait is None:
                raise failure(sdk, exc, where=where, model=model) from exc
        await asyncio.sleep(wait)
        attempt += 1


async def retried_stream(
    sdk: Any, once: Callable[[], AsyncGenerator[T, None]], *, retries: int, where: str, model: str
) -> AsyncGenerator[T, None]:
    """The items of `once()`, opened again after a retryable failure as long as no
    `TextDelta` was yielded; after one (a connection lost mid-answer, a stream that
    ends early), or for good, the failure is raised as a one-line ModelError."""
    import asyncio  # here, not at the top: the command line's start stays light

    attempt = 0
    while True:
        shown = False
        try:
            async with aclosing(once()) as items:
                async for item in items:
                    shown = shown or isinstance(item, TextDelta)
                    yield item
            return
        except Exception as exc:  # every failure ends as a ModelError, or a retry
            wait = None if shown else next_wait(sdk, exc, attempt=attempt, retries=retries)
            if wait is None:
                raise failure(sdk, exc, where=where, model=model) from exc
        await asyncio.sleep(wait)
        attempt += 1
