"""IDENTITY.md: who a persona is (prose) and how it is configured (frontmatter)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from ..errors import HomeError
from ._frontmatter import Frontmatter, key_line, split_frontmatter

__all__ = [
    "DEFAULT_MEMORY_LIMITS",
    "IDENTITY_FILE",
    "Identity",
    "IdentityConfig",
    "MemoryLimits",
    "load_identity",
    "parse_identity",
]

IDENTITY_FILE = "IDENTITY.md"

#: Characters per memory file: room for a few hundred short notes, small next to
#: a model's context window, so memory never crowds out the conversation.
DEFAULT_MEMORY_LIMITS: dict[Literal["self", "user"], int] = {"self": 8000, "user": 4000}


class MemoryLimits(BaseModel):
    """Characters allowed in MEMORY.md (`self`) and USER.md (`user`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    self_: int = Field(default=DEFAULT_MEMORY_LIMITS["self"], alias="self", gt=0)
    user: int = Field(default=DEFAULT_MEMORY_LIMITS["user"], gt=0)

    def for_target(self, target: Literal["self", "user"]) -> int:
        """The limit for one memory target."""
        return self.self_ if target == "self" else self.user


class IdentityConfig(BaseModel):
    """The frontmatter of IDENTITY.md. Unknown keys are errors: typos must not pass silently."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="The persona's name.")
    description: str = Field(default="", description="One line on what the persona is for.")
    read_only: bool = Field(
        default=False, description="True: from_dir wires no memory tool (memory still shows)."
    )
    memory_limits: MemoryLimits = Field(
        default_factory=MemoryLimits, description="Characters per memory file."
    )
    tools: tuple[str, ...] = Field(default=(), description="Names of builtin tools to enable.")
    model: str | None = Field(default=None, description="The model to talk through, if any.")


class Identity(BaseModel):
    """A parsed IDENTITY.md: its config and its prose body (the persona's identity)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config: IdentityConfig
    body: str


def parse_identity(text: str, *, path: Path) -> Identity:
    """Parse IDENTITY.md text.

    Raises:
        HomeError: naming the file, the line and key, and the rule broken, for
            every bad key at once.
    """
    fm = split_frontmatter(text, path=path)
    try:
        config = IdentityConfig.model_validate(fm.data)
    except ValidationError as exc:
        raise HomeError(f"{path}: invalid frontmatter", problems=_describe(exc, fm, path)) from exc
    return Identity(config=config, body=fm.body.strip("\n"))


def load_identity(home: Path) -> Identity:
    """Read and parse `home`/IDENTITY.md.

    Raises:
        HomeError: when the file is missing or unreadable, or breaks a rule.
    """
    path = home / IDENTITY_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HomeError(
            f"{path}: missing: every home needs an IDENTITY.md with at least `name:` "
            "in its frontmatter"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HomeError(f"{path}: cannot be read as UTF-8 text: {exc}") from exc
    return parse_identity(text, path=path)


def _describe(exc: ValidationError, fm: Frontmatter, path: Path) -> list[str]:
    problems = []
    for error in exc.errors(include_url=False):
        loc = [str(part) for part in error["loc"]]
        key = ".".join(loc) or "frontmatter"
        line = key_line(fm, loc[0]) if loc else 2
        if error["type"] == "extra_forbidden":
            allowed = ", ".join(f.alias or n for n, f in _fields_for(loc).items())
            rule = f"unknown key {key!r} (allowed: {allowed})"
        elif error["type"] == "missing":
            rule = f"missing required key {key!r}"
        else:
            rule = f"key {key!r}: {error['msg']}"
        problems.append(f"{path}:{line}: {rule}")
    return problems


def _fields_for(loc: list[str]) -> dict[str, FieldInfo]:
    if len(loc) > 1 and loc[0] == "memory_limits":
        return dict(MemoryLimits.model_fields)
    return dict(IdentityConfig.model_fields)
