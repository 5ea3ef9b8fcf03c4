"""Run the library's coroutines from plain code: a script, a notebook, a REPL.

`run_sync` runs a coroutine on one event loop that lives, for the whole
process, in a background thread. One loop, not a fresh `asyncio.run` per call:
a provider's HTTP client binds its connections to the loop it first ran on, so
every sync call of a session must use the same loop. The same loop also works
where one is already running in the calling thread (a notebook cell), which
`asyncio.run` refuses.

A sync call made *inside* another one (a tool whose handler calls another
tool's `execute_sync`) must not wait on the background loop: it may be running
on that very loop, or on one of the loop's worker threads, and would wait for
itself. Such a call runs on a private loop in a thread of its own instead.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_pid = 0
_lock = threading.Lock()
#: Set while a coroutine started by `run_sync` runs (threads it starts see it too).
_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("toolnexus_sync", default=False)


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


async def _marked(coro: Coroutine[Any, Any, T]) -> T:
    _INSIDE.set(True)
    return await coro


def _run_apart(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on a fresh loop in a new thread and wait for it (a nested sync call)."""
    context = contextvars.copy_context()
    with ThreadPoolExecutor(1, thread_name_prefix="toolnexus-sync-nested") as pool:
        return pool.submit(context.run, asyncio.run, _marked(coro)).result()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion and return its result, from code that is not async.

    Ctrl-C (or any exception while waiting) cancels the coroutine, like
    cancelling an awaited call, and is raised again here; a sync tool handler
    already running in a worker thread finishes on its own (Python cannot stop a
    thread), so a handler with side effects should be written to be cancelled
    in its async form.
    """
    if _INSIDE.get():
        return _run_apart(coro)
    future = asyncio.run_coroutine_threadsafe(_marked(coro), _the_loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()  # the task is cancelled in the loop (a memory write not yet begun stops)
        raise


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
