"""Watch a home and re-compose its soul when its files change (`watch_home`).

For persona authors (`toolnexus soul --watch`) and for servers that want to
know a new session would differ. It only composes new souls: a running
session keeps its frozen snapshot whatever happens here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ..errors import HomeError
from ..home._door import IDENTITY_FILE, MEMORY_FILES, SKILLS_DIR, STATE_DIR, TEMPLATE_FILE
from ..home._skill import SKILL_NAME_RE
from ..soul import Soul
from ..store._config import configured_store
from ._home import Home

__all__ = ["is_relevant", "watch_home"]

#: Files directly in the home that shape the soul; everything under skills/ counts too.
_TOP_FILES = frozenset({IDENTITY_FILE, TEMPLATE_FILE, *MEMORY_FILES.values()})
_TRUST_FILES = frozenset(f"trusted-{name}.json" for name in MEMORY_FILES.values())

#: Editor leftovers: vim swap files and its `4913` write test, emacs backups and
#: autosaves, JetBrains safe-write temps. Dotfiles (the memory tool's temp and
#: lock files `.MEMORY.md.*`, emacs locks `.#x`, hidden folders) are skipped by name.
_EDITOR_JUNK = re.compile(r"(\.sw[a-p]x?|~|\.tmp|___jb_\w+___)$|^(4913|#.*#)$")


def is_relevant(home: Home, path: str | os.PathLike[str]) -> bool:
    """Tell whether a change at `path` can change `home`'s soul.

    True for IDENTITY.md, MEMORY.md, USER.md, soul.md.j2, the trust marks in
    .toolnexus/ and anything under skills/ (the folder itself included), except
    dotfiles, anything in a hidden
    folder, and editor leftovers (judged by the file's own name; `skills/4913`
    is a skill's folder, not vim's write test).
    """
    rel = os.path.relpath(os.fspath(path), home.path)
    if rel == os.curdir or rel.startswith(os.pardir):
        return False
    parts = rel.split(os.sep)
    if parts[0] == STATE_DIR and len(parts) == 2 and parts[1] in _TRUST_FILES:
        return True  # trust marks (`memory add --trust`) change what the soul shows
    if any(part.startswith(".") for part in parts):
        return False  # dotfiles, and anything in a hidden folder (.git/)
    # Editor leftovers are files, so only the last part is matched, and skills/<name>
    # with a valid skill name is a skill's folder: a skill may be named `4913`.
    is_skill_folder = len(parts) == 2 and parts[0] == SKILLS_DIR and SKILL_NAME_RE.match(parts[1])
    if not is_skill_folder and _EDITOR_JUNK.search(parts[-1]):
        return False
    if len(parts) == 1:
        return parts[0] in _TOP_FILES or parts[0] == SKILLS_DIR
    return parts[0] == SKILLS_DIR


async def watch_home(
    home: Home | str | os.PathLike[str],
    *,
    strict: bool = True,
    initial: bool = False,
    debounce_ms: int = 100,
    max_delay_ms: int = 2000,
    stop_event: asyncio.Event | None = None,
    force_polling: bool | None = None,
    poll_delay_ms: int = 300,
) -> AsyncGenerator[Soul | HomeError, None]:
    """Yield a freshly composed soul each time the home's files change.

    One item per burst of writes: after a change the watcher waits until the
    home has been quiet for `debounce_ms` (but no longer than `max_delay_ms`),
    then composes once. Only changes that alter the result are yielded (a file
    saved unchanged yields nothing). A home that is invalid mid-edit yields the
    `HomeError` instead of a soul, and the watch goes on: fix the file and the
    next item is a soul again.

    Stops when `stop_event` is set or when the consumer leaves the `async for`.

    Args:
        home: The home (or its directory).
        strict: Compose strictly (`False`: bad skills become soul warnings).
        initial: Also yield the current soul first, once the watcher is running:
            every write after that first item is seen.
        debounce_ms: Quiet time that ends a burst of writes.
        max_delay_ms: Longest wait during an unbroken stream of writes.
        stop_event: Set it to end the iteration.
        force_polling: Poll instead of using OS notifications (network drives).
        poll_delay_ms: Poll interval when polling.

    Raises:
        HomeError: when the home is not an existing folder.
    """
    # Imported here, not at the top: `import toolnexus.agents` stays cheap for a
    # command line that never watches (watchfiles loads a native extension).
    from watchfiles import awatch

    if not isinstance(home, Home):
        home = Home(home)
    home.check_dir()
    watched = home

    def keep(_change: Any, path: str) -> bool:
        return is_relevant(watched, path)

    files = awatch(
        home.path,
        watch_filter=keep,
        debounce=max_delay_ms,
        step=debounce_ms,
        stop_event=stop_event,
        force_polling=force_polling,
        poll_delay_ms=poll_delay_ms,
        recursive=True,
    )
    # A home kept in a database also changes when another machine writes to it.
    store = configured_store(home.path)
    changes = _merged(files, store.notifications()) if store.announces_changes else files
    # Start the watcher before composing the baseline, so no write after it is missed:
    # the OS watch is in place once the first step of this task has run.
    pending: asyncio.Future[Any] | None = asyncio.ensure_future(changes.__anext__())
    try:
        await asyncio.sleep(0)
        current = await _compose(home, strict=strict)
        last = _key(current)
        if initial:
            yield current
        while True:
            if pending is None:
                pending = asyncio.ensure_future(changes.__anext__())
            try:
                await pending
            except StopAsyncIteration:
                return
            finally:
                pending = None
            current = await _compose(home, strict=strict)
            key = _key(current)
            if key != last:
                last = key
                yield current
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
        await changes.aclose()


async def _merged(
    first: AsyncIterator[Any], second: AsyncIterator[Any]
) -> AsyncGenerator[Any, None]:
    """Items of both iterators as they come; ends when `first` does."""
    queue: asyncio.Queue[Any] = asyncio.Queue()
    end = object()

    async def pump(source: AsyncIterator[Any], last: bool) -> None:
        try:
            async for item in source:
                await queue.put(item)
        finally:
            if last:
                queue.put_nowait(end)

    tasks = [asyncio.ensure_future(pump(first, True)), asyncio.ensure_future(pump(second, False))]
    try:
        while (item := await queue.get()) is not end:
            yield item
        for task in tasks:
            if task.done() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _compose(home: Home, *, strict: bool) -> Soul | HomeError:
    try:
        return await asyncio.to_thread(home.compose, strict=strict)
    except HomeError as exc:
        return exc


def _key(item: Soul | HomeError) -> tuple[str, ...]:
    """What makes two results differ for a reader: the text, warnings and withheld entries."""
    if isinstance(item, HomeError):
        return ("error", str(item))
    return (item.digest, *item.warnings, *(str(w) for w in item.withheld))
