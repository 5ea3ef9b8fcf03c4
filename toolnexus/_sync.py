"""Run the library's coroutines from plain code: a script, a notebook, a REPL.

`run_sync` runs a coroutine on one event loop that lives, for the whole
process, in a background thread. One loop, not a fresh `asyncio.run` per call:
a provider's HTTP client binds its connections to the loop it first ran on, so
every sync call of a session must use the same loop. The same loop also works
where one is already running in the calling thread (a notebook cell), which
`asyncio.run` refuses.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_pid = 0
_lock = threading.Lock()


def _the_loop() -> asyncio.AbstractEventLoop:
    global _loop, _pid
    with _lock:
        # A forked child has the loop but not its thread: it starts its own.
        if _loop is None or _loop.is_closed() or _pid != os.getpid():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="toolnexus-sync", daemon=True)
            thread.start()
            _loop, _pid = loop, os.getpid()
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion on the process's background loop and return its result.

    Ctrl-C (or any exception while waiting) cancels the coroutine, like
    cancelling an awaited call, and is raised again here.
    """
    future = asyncio.run_coroutine_threadsafe(coro, _the_loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()  # the task is cancelled in the loop (a memory write not yet begun stops)
        raise
