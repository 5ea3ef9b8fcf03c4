"""A trusted write's marks: refused while the marks cannot be read, left once the entry is in
place (`MemoryStore.add(text, trust=True)`, `toolnexus memory add --trust`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import MemoryEditError
from ..home._door import STATE_DIR
from ..home._identity import Target
from ..scanner._scanner import Scanner
from ..store.folder._state import open_state
from ._document import MemoryDocument, nfc
from ._match import NOTHING
from ._trust import read_trust, write_trust

__all__ = ["check_trustable", "mark_trusted"]


def check_trustable(home: Path, target: Target) -> None:
    """Refuse a trusted write while the trust marks cannot be read (it would drop them).

    Raises:
        MemoryEditError: (kind `io`) naming the broken file.
    """
    problem = read_trust(home, target)[2]
    if problem is not None:
        raise MemoryEditError(
            f"cannot trust: {problem}; a person must fix or delete that file first "
            f"(it would lose the marks it holds). {NOTHING}",
            kind="io",
        )


def mark_trusted(
    home: Path, target: Target, entry: str, doc: MemoryDocument, scanner: Scanner, *, fsync: bool
) -> str:
    """Mark `entry` trusted (under the file's lock), dropping marks whose entry is gone;
    what the write's message ends with."""
    marks = {e for e in read_trust(home, target)[1] if doc.note(e) is not None}
    marks.add(nfc(entry))
    state = open_state(home, create=True)  # makes `.toolnexus/`
    assert state is not None
    write_trust(home, target, marks, fsync=fsync)
    flagged = scanner.reasons(entry)
    why = f" (the scanner says: {'; '.join(flagged)})" if flagged else ""
    return (
        f" Marked trusted in {STATE_DIR}/{why}: a person vouched for it, so the soul "
        "shows it as written; editing it ends the mark."
    )
