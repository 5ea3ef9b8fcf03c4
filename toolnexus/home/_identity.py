"""IDENTITY.md: who a persona is (prose) and how it is configured (frontmatter). Pure, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo

from .._validation import field_errors
from ..errors import ArgumentError, HomeError
from ..scanner._rulebook import off_error, unknown_off
from ..store._address import UNREADABLE, holds_password, read_address
from ._frontmatter import split_frontmatter

__all__ = [
    "DEFAULT_MEMORY_LIMITS",
    "MAX_MEMORY_LIMIT",
    "Identity",
    "IdentityConfig",
    "MemoryLimits",
    "ReviewMode",
    "ScannerConfig",
    "Target",
    "check_dsn",
    "memory_limit",
    "parse_identity",
]

#: A memory target: "self" is MEMORY.md (the persona's own notes), "user" is USER.md.
Target = Literal["self", "user"]

#: Which memory writes by the model are held for a person's review (SPEC §3): those made
#: after untrusted text reached it (the default), every one, or none.
ReviewMode = Literal["untrusted", "all", "off"]

#: Characters per memory file: room for a few hundred short notes, small next to
#: a model's context window, so memory never crowds out the conversation.
DEFAULT_MEMORY_LIMITS: dict[Target, int] = {"self": 8000, "user": 4000}
#: The largest limit a file may have (about 2.5M tokens: past any context window).
MAX_MEMORY_LIMIT = 10_000_000


class MemoryLimits(BaseModel):
    """Characters allowed in MEMORY.md (`self`) and USER.md (`user`).

    The one place the rule for a limit lives (a whole number from 1 to
    `MAX_MEMORY_LIMIT`): IDENTITY.md's `memory_limits` and `memory_tool(limits=...)`
    are both checked here.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    self_: int = Field(
        default=DEFAULT_MEMORY_LIMITS["self"], alias="self", gt=0, le=MAX_MEMORY_LIMIT
    )
    user: int = Field(default=DEFAULT_MEMORY_LIMITS["user"], gt=0, le=MAX_MEMORY_LIMIT)

    def for_target(self, target: Target) -> int:
        """The limit for one memory target."""
        return self.self_ if target == "self" else self.user

    def merged(self, limits: Mapping[str, object]) -> MemoryLimits:
        """These limits with `limits` (a `memory_tool` argument) laid over them.

        Raises:
            TypeError: when `limits` is not a mapping or a value is not an int.
            ArgumentError: (a ValueError) for an unknown key or a value out of range.
        """
        if not isinstance(limits, Mapping):
            raise TypeError(
                f"limits must map 'self'/'user' to characters, got {type(limits).__name__}"
            )
        unknown = [key for key in limits if key not in DEFAULT_MEMORY_LIMITS]
        if unknown:
            raise ArgumentError(
                f"limits: unknown key {unknown[0]!r}; use 'self' (MEMORY.md) or 'user' (USER.md)"
            )
        given = {
            key: memory_limit(value, where=f"limits[{key!r}]") for key, value in limits.items()
        }
        return self.model_copy(update={_FIELDS[key]: value for key, value in given.items()})


_FIELDS = {"self": "self_", "user": "user"}


def memory_limit(value: object, *, where: str) -> int:
    """Check one limit given in code against `MemoryLimits`' rule; `where` names it in errors.

    Raises:
        TypeError: when `value` is not an int (a bool is not one).
        ArgumentError: (a ValueError) when it is out of range.
    """
    try:
        MemoryLimits.model_validate({"user": value}, strict=True)
    except ValidationError as exc:
        if field_errors(exc)[0].type == "int_type":
            raise TypeError(f"{where} must be an int, got {type(value).__name__}") from None
        raise ArgumentError(
            f"{where} must be a positive number of characters, at most {MAX_MEMORY_LIMIT:,}; "
            f"got {value!r}"
        ) from None
    assert isinstance(value, int)
    return value


class ScannerConfig(BaseModel):
    """IDENTITY.md `scanner:`: the memory scanner's switches for this home."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    off: tuple[str, ...] = Field(
        default=(), description="Categories of the memory scanner switched off for this home."
    )

    @model_validator(mode="before")
    @classmethod
    def _yaml_off(cls, data: object) -> object:
        # YAML 1.1 reads a bare `off:` key as the boolean false.
        if isinstance(data, dict) and False in data and "off" not in data:
            data = {("off" if key is False else key): value for key, value in data.items()}
        return data

    @field_validator("off")
    @classmethod
    def _known(cls, off: tuple[str, ...]) -> tuple[str, ...]:
        unknown = unknown_off(off)
        if unknown:
            raise ValueError(off_error(unknown))
        return tuple(dict.fromkeys(off))


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
    memory_review: ReviewMode = Field(
        default="untrusted",
        description=(
            "Which memory writes by the model wait for a person's review: `untrusted` "
            "(made after untrusted text reached it), `all`, or `off`."
        ),
    )
    tools: tuple[str, ...] = Field(default=(), description="Names of builtin tools to enable.")
    model: str | None = Field(default=None, description="The model to talk through, if any.")
    sessions: bool = Field(
        default=True, description="False (`off`): conversations are not saved in the home."
    )
    scanner: ScannerConfig = Field(
        default_factory=ScannerConfig, description="The memory scanner's switches for this home."
    )
    store: str | None = Field(
        default=None,
        description="A PostgreSQL DSN (no password) holding memory, history and conversations.",
    )
    store_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The persona's key in that store (default: its name).",
    )

    @field_validator("memory_review", mode="before")
    @classmethod
    def _yaml_review_off(cls, value: object) -> object:
        # YAML 1.1 reads a bare `off` as the boolean false.
        return "off" if value is False else value

    @field_validator("store")
    @classmethod
    def _dsn(cls, value: str | None) -> str | None:
        if value is not None:
            check_dsn(value)
        return value


def check_dsn(dsn: str) -> None:
    """Refuse a store DSN that is not PostgreSQL's or that carries a password.

    A home is copied, committed and shared: the password comes from `PGPASSWORD`
    or `~/.pgpass`, never from a file in it.
    """
    if not dsn.startswith(("postgresql://", "postgres://")):
        raise ValueError("a store must be a postgresql:// address (the folder is the default)")
    if holds_password(dsn):
        raise ValueError(
            "a store address must not hold a password: set PGPASSWORD or use ~/.pgpass"
            + ("" if read_address(dsn) is not None else f" ({UNREADABLE})")
        )


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
        problems = []
        for error in field_errors(exc):
            where = fm.at(path, error.loc[0]) if error.loc else f"{path}:2"
            key = error.key or "frontmatter"
            if error.type == "extra_forbidden":
                allowed = ", ".join(f.alias or n for n, f in _fields_for(error.loc).items())
                rule = f"unknown key {key!r} (allowed: {allowed})"
            elif error.type == "missing":
                rule = f"missing required key {key!r}"
            else:
                rule = f"key {key!r}: {error.message}"
            problems.append(f"{where}: {rule}")
        raise HomeError(f"{path}: invalid frontmatter", problems=problems) from exc
    return Identity(config=config, body=fm.body.strip("\n"))


def _fields_for(loc: tuple[str, ...]) -> dict[str, FieldInfo]:
    if len(loc) > 1 and loc[0] == "memory_limits":
        return dict(MemoryLimits.model_fields)
    if len(loc) > 1 and loc[0] == "scanner":
        return dict(ScannerConfig.model_fields)
    return dict(IdentityConfig.model_fields)
