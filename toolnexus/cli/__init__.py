"""The `toolnexus` command line: parse arguments, call the library, print.

`_main` parses (only the named verb's parser is built) and runs the small
verbs; each larger verb has a module of its own (`_memory`, `_chat`,
`_conversations`, `_serve`, `_store`). Logic stays below: nothing imports this
package.
"""

from __future__ import annotations

from ._main import main

__all__ = ["main"]
