"""The one translator of pydantic `ValidationError`s: each error as a `FieldError`.

Tool arguments, IDENTITY.md and SKILL.md frontmatter, and function arguments all
word their messages from these. A module of its own, apart from `_schema`, so
that reading a home does not load the function-to-schema machinery.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["FieldError", "field_errors"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldError:
    """One problem pydantic found: where (field names, aliases as written), what kind, why."""

    loc: tuple[str, ...]
    #: pydantic's error type: "missing", "extra_forbidden", "greater_than", ...
    type: str
    #: pydantic's message, without the "Value error, " a validator's ValueError gets.
    message: str

    @property
    def key(self) -> str:
        """The dotted path of the field (`memory_limits.self`); empty for the whole input."""
        return ".".join(self.loc)


def field_errors(exc: ValidationError) -> list[FieldError]:
    """Translate a pydantic `ValidationError`: the one place that reads its raw errors."""
    return [
        FieldError(
            loc=tuple(str(part) for part in error["loc"]),
            type=error["type"],
            message=str(error["msg"]).removeprefix("Value error, "),
        )
        for error in exc.errors(include_url=False)
    ]
