"""Waiting in tests without fixed pauses: poll a condition until a deadline.

A deadline here is a bound on a hang, never a speed claim: it is generous (tens
of seconds), and a test that reaches it fails naming what never happened. Speed
is measured in `bench/`, not asserted in tests.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio

__all__ = ["DEADLINE", "finishes", "holds_open", "wait_until", "wait_until_async"]

T = TypeVar("T")

#: How long a test waits for something that should happen at once.
DEADLINE = 30.0


def wait_until(check: Callable[[], bool], *, what: str, timeout: float = DEADLINE) -> None:
    """Poll `check` until it holds; fail naming `what` once `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    pause = 0.002
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


async def wait_until_async(
    check: Callable[[], bool | Awaitable[bool]], *, what: str, timeout: float = DEADLINE
) -> None:
    """`wait_until` for async code: `check` may be a coroutine function."""
    pause = 0.002
    try:
        with anyio.fail_after(timeout):
            while True:
                done = check()
                if not isinstance(done, bool):
                    done = await done
                if done:
                    return
                await anyio.sleep(pause)
                pause = min(pause * 2, 0.05)
    except TimeoutError:
        raise AssertionError(f"waited {timeout:g} s for {what}") from None


def holds_open(pid: int, path: Path) -> bool:
    """Whether process `pid` has `path` open (Linux: its descriptors in /proc)."""
    target = os.path.realpath(path)
    folder = Path(f"/proc/{pid}/fd")
    try:
        links = list(folder.iterdir())
    except FileNotFoundError:
        return False
    for link in links:
        try:
            if os.readlink(link) == target:
                return True
        except OSError:
            continue  # closed meanwhile
    return False


def finishes(run: Callable[[], T], *, what: str, timeout: float = DEADLINE) -> T:
    """Run `run` in a thread and return its result; fail naming `what` if it is still
    running after `timeout` seconds (it blocked: a FIFO opened, a lock never let go)."""
    results: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            results.append(run())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError(f"{what} was still running after {timeout:g} s")
    if errors:
        raise errors[0]
    return results[0]
