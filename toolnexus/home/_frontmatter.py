"""YAML frontmatter: the one parser for IDENTITY.md and SKILL.md headers (pure, no I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import HomeError
from ..memory._document import normalize_text

__all__ = ["Frontmatter", "key_line", "normalize_newlines", "split_frontmatter"]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FENCE = "---"


@dataclass(frozen=True, slots=True, kw_only=True)
class Frontmatter:
    """A parsed Markdown file: its YAML mapping, the text of that YAML, and the body."""

    data: dict[str, Any]
    yaml_text: str
    body: str

    def at(self, path: Path, key: str) -> str:
        """`<path>:<line>` of the line setting top-level `key`, to start a problem."""
        return f"{path}:{key_line(self, key)}"


def normalize_newlines(text: str) -> str:
    """Drop a leading BOM and turn CRLF / CR into LF, so editors' files compose identically."""
    return normalize_text(text.removeprefix("\ufeff"))


def key_line(fm: Frontmatter, key: str) -> int:
    """The 1-based file line where top-level `key` is set (line 2 if it cannot be found)."""
    match = re.search(rf"^{re.escape(key)}\s*:", fm.yaml_text, re.MULTILINE)
    if match is None:
        return 2
    return fm.yaml_text.count("\n", 0, match.start()) + 2


def split_frontmatter(text: str, *, path: Path) -> Frontmatter:
    """Parse `---`-fenced YAML at the top of `text`.

    Raises:
        HomeError: naming `path`, the line and the rule when the fence is missing,
            unclosed, the YAML is invalid, or it is not a mapping.
    """
    text = normalize_newlines(text)
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != _FENCE:
        raise HomeError(
            f"{path}:1: no YAML frontmatter: the file must start with a '---' line, "
            "then YAML keys, then a closing '---' line"
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() == _FENCE)
    except StopIteration:
        raise HomeError(
            f"{path}:1: frontmatter is never closed: add a '---' line after the YAML keys"
        ) from None
    yaml_text = "\n".join(lines[1:end])
    try:
        data = yaml.load(yaml_text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 2
        problem = getattr(exc, "problem", None) or str(exc)
        raise HomeError(f"{path}:{line}: invalid YAML in frontmatter: {problem}") from exc
    except ValueError as exc:  # a number too long to convert (thousands of digits)
        digits = re.search(r"\d{1000,}", yaml_text)
        line = yaml_text.count("\n", 0, digits.start()) + 2 if digits else 2
        raise HomeError(
            f"{path}:{line}: invalid value in frontmatter: a number with too many digits"
        ) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise HomeError(
            f"{path}:2: frontmatter must be a YAML mapping of keys, got {type(data).__name__}"
        )
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise HomeError(f"{path}:2: frontmatter keys must be strings, got {bad_keys[0]!r}")
    body = "\n".join(lines[end + 1 :])
    return Frontmatter(data=data, yaml_text=yaml_text, body=body)
