"""Text from outside, made safe to print: no character a terminal would act on.

A message imported from a chat file, a JSON-RPC id sent by an MCP client, a
title or a note may hold escape sequences (set the window title, write the
clipboard, move the cursor, hide a line) or bidirectional overrides that
reorder what is shown. Wherever such text reaches a terminal or a one-line
record it goes through here: each such character is shown as its escape
(`\\x1b`, `\\u202e`), so what is printed is what was there.
"""

from __future__ import annotations

import re

__all__ = ["one_line", "terminal_safe"]

# C0 and C1 controls but newline and tab, DEL, bidirectional embeddings, overrides and
# isolates, and the line and paragraph separators.
_ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_ACTIVE_OR_BREAK = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\u0085]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every character a terminal would act on shown as its escape; line
    breaks and tabs kept."""
    return _ACTIVE.sub(_escaped, text)


def one_line(text: str) -> str:
    """`text` for a one-line record: `terminal_safe`, with line breaks and tabs escaped too,
    so no text can forge a line of its own."""
    return _ACTIVE_OR_BREAK.sub(_escaped, text)
