"""IDENTITY.md read through the door, parsed and memoised by content, and what it says of
the memory files' limits. Apart from `_load` so that the stores, which need the
persona's key and limits, can read it without loading a whole home."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import HomeError
from ._door import IDENTITY_FILE, Door, check_home
from ._identity import Identity, MemoryLimits, parse_identity
from ._memo import parsed

__all__ = ["find_identity", "load_identity", "resolve_limits"]


def find_identity(home: Path) -> tuple[str, Identity] | None:
    """Return IDENTITY.md's content hash and parsed identity; None when it is absent.

    Raises:
        HomeError: when it cannot be read or breaks a rule (every problem listed).
    """
    return parsed(Door(home), "identity", os.fspath(home / IDENTITY_FILE), _parse_identity)


def load_identity(home: Path) -> tuple[str, Identity]:
    """Return IDENTITY.md's content hash and parsed identity.

    Raises:
        HomeError: when the home or the file is missing, or the file breaks a rule.
    """
    found = find_identity(home)
    if found is None:
        check_home(home)
        raise HomeError(
            f"{home / IDENTITY_FILE}: missing: every home needs an IDENTITY.md with at "
            "least `name:` in its frontmatter"
        )
    return found


def _parse_identity(text: str, path: Path) -> Identity:
    return parse_identity(text, path=path)


def resolve_limits(home: Path, limits: Mapping[str, int] | None = None) -> MemoryLimits:
    """Lay `limits` over IDENTITY.md's `memory_limits` (or the package defaults).

    Raises:
        HomeError: when IDENTITY.md cannot be read or breaks a rule.
    """
    found = find_identity(home)
    base = found[1].config.memory_limits if found is not None else MemoryLimits()
    return base if limits is None else base.merged(limits)
