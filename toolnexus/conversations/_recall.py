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


def format_hits(query: str, hits: Sequence[Hit]) -> str:
    """Hits as the recall tool and the command line show them, one per line."""
    if not hits:
        return (
            f"nothing found for {query!r} in past conversations or the memory history; "
            "try other words, or fewer"
        )
    lines = [f"{len(hits)} hit{'s' if len(hits) != 1 else ''} for {query!r}, best first:"]
    for n, hit in enumerate(hits, start=1):
        where = [hit.time[:16].replace("T", " ")]
        if hit.session:
            where.append(f"session {hit.session}")
        if hit.change is not None:
            where.append(f"change {hit.change}")
        head = f"{n}. [{hit.role} · {' · '.join(where)}]"
        if hit.withheld:
            lines.append(
                f"{head} (withheld: the text did not pass the memory scanner: {hit.withheld})"
            )
        else:
            lines.append(f"{head} {hit.snippet}")
    return "\n".join(lines)


RECALL_DESCRIPTION = (
    "Search what you have lived: your past conversations with the user and every change "
    "to your memory files (MEMORY.md, USER.md). Use it when the user refers to something "
    "earlier that your notes do not hold, or to find when and how you learned something. "
    "Give a few distinctive words (all must match, else any; end a word with * to match "
    "its beginning). Each hit gives the time, the conversation and a snippet, best first. "
    "The current conversation is not searched: you already have it."
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
            hits = await asyncio.to_thread(
                conversations.recall, args.query, limit=args.limit, exclude=exclude
            )
        except ConversationError as exc:  # an unusable database: the model reads why
            raise ToolError(f"recall is unavailable: {exc}") from None
        return format_hits(args.query, hits)

    return define_tool(
        name="recall", description=RECALL_DESCRIPTION, input_model=RecallArgs, handler=handle
    )
