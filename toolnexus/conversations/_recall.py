"""The `recall` tool: a persona searches its past conversations and memory history.

What it finds comes back as a tool result, so the running session's system
prompt never changes; each snippet has passed the memory scanner (see
`Conversations.recall`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ConversationError, ToolError
from ..tools import Tool, call_context, define_tool
from ._saved import DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT, Conversations, Hit

__all__ = ["RecallArgs", "format_hits", "recall_tool"]


#: The most characters of one turn around a hit that the tool shows.
TURN_CHARS = 300


def format_hits(query: str, hits: Sequence[Hit]) -> str:
    """Hits as the recall tool and the command line show them: each with its time,
    conversation and role, the part of the message that matched, and the turns around it."""
    if not hits:
        return (
            f"nothing found for {query!r} in past conversations or the memory history; "
            "try other words"
        )
    lines = [f"{len(hits)} hit{'s' if len(hits) != 1 else ''} for {query!r}, best first:"]
    for n, hit in enumerate(hits, start=1):
        where = [hit.time[:16].replace("T", " ")]
        if hit.session:
            where.append(f"session {hit.session}")
        if hit.change is not None:
            where.append(f"change {hit.change}")
        own = next((t for t in hit.window if t.seq == hit.seq), None)
        who = f" · {own.name}" if own is not None and own.name else ""
        head = f"{n}. [{hit.role}{who} · {' · '.join(where)}]"
        if hit.withheld:
            lines.append(
                f"{head} (withheld: the text did not pass the memory scanner: {hit.withheld})"
            )
        else:
            lines.append(f"{head} {hit.snippet}")
        for turn in hit.window:
            if turn.seq == hit.seq:
                continue
            mark = (
                "also found" if turn.hit else ("before" if turn.seq < (hit.seq or 0) else "after")
            )
            speaker = f" · {turn.name}" if turn.name else ""
            text = " ".join(turn.text.split())
            if len(text) > TURN_CHARS:
                text = text[: TURN_CHARS - 1] + "…"
            lines.append(f"   {mark}: [{turn.role}{speaker}] {text}")
    return "\n".join(lines)


RECALL_DESCRIPTION = (
    "Search what you have lived: your past conversations with the user and every change "
    "to your memory files (MEMORY.md, USER.md; the files themselves are in your system "
    "prompt, so they are not searched). Use it when the user refers to something earlier "
    "that your notes do not hold, or to find when and how you learned something. Ask in "
    "plain words, even a whole question: every message holding any of the telling words "
    'is ranked, with the turns around it; a quoted "phrase" is found as one, a word '
    'ending in * matches its beginning, and a date or time phrase ("in May", '
    '"2023-05-07", "last week") favours what was said then. Each hit gives the time, '
    "the conversation, the speaker, what matched and the turns before and after it, best "
    "first. The current conversation is not searched: you already have it."
)


class RecallArgs(BaseModel):
    """The recall tool's input."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1, max_length=1000, description="Words to look for in past conversations."
    )
    limit: int = Field(
        default=DEFAULT_RECALL_LIMIT,
        ge=1,
        le=MAX_RECALL_LIMIT,
        description="How many hits to return, best first.",
    )


def recall_tool(dir: str | os.PathLike[str]) -> Tool:
    """Build the `recall` tool: full-text search over `dir`'s saved conversations and
    memory history. It reads only; the running session's prompt never changes.
    """
    conversations = Conversations(dir)

    async def handle(args: RecallArgs) -> str:
        import asyncio  # here, not at the top: the command line's start stays light

        context = call_context()
        exclude = context.session if context is not None else None
        try:
            hits, notes = await asyncio.to_thread(
                conversations.recall_noted, args.query, limit=args.limit, exclude=exclude
            )
        except ConversationError as exc:  # an unusable database: the model reads why
            raise ToolError(f"recall is unavailable: {exc}") from None
        return "\n".join([format_hits(args.query, hits), *(f"({note})" for note in notes)])

    return define_tool(
        name="recall", description=RECALL_DESCRIPTION, input_model=RecallArgs, handler=handle
    )
