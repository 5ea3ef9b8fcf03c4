"""The soul: a frozen, deterministic system-prompt snapshot composed from a home.

The same files always give byte-identical text (sorted skills, normalised
newlines, no timestamps), and sections run from most stable to most volatile,
so a memory write changes only the tail and provider prompt caches stay warm.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel, ConfigDict, computed_field, model_validator

from ..errors import HomeError
from ._cache import load_cached
from ._memfile import normalize_text
from .home import (
    SKILLS_DIR,
    TEMPLATE_FILE,
    Home,
    MemoryFile,
    SkillScan,
    Source,
    problems_error,
)
from .identity import IDENTITY_FILE, Identity, IdentityConfig
from .memory import MEMORY_FILES
from .skills import SKILL_FILE

__all__ = [
    "MEMORY_WARN_RATIO",
    "SOUL_BUDGET_CHARS",
    "SkillSummary",
    "Soul",
    "Withheld",
    "compose_soul",
]

#: A soul longer than this (about 10k tokens) crowds the context window: a warning.
SOUL_BUDGET_CHARS = 40_000
#: A memory file (or the soul) at this share of its limit draws a warning.
MEMORY_WARN_RATIO = 0.9

_MEMORY_ORDER: tuple[Literal["user", "self"], ...] = ("user", "self")


class SkillSummary(BaseModel):
    """What the soul lists about a skill; the `skill` tool loads the rest on demand."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    #: The SKILL.md, relative to the home (POSIX separators).
    path: str


class Withheld(BaseModel):
    """A memory block kept out of the soul because it failed the safety check (still on disk)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    kind: Literal["entry", "prose"]
    text: str
    reasons: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.file}: {self.kind} {self.text!r}: {'; '.join(self.reasons)}"


class Soul(BaseModel):
    """An immutable snapshot of a home: the parsed parts, the system-prompt `text`, its sources.

    Build one with `compose_soul(dir)` or `Home(dir).compose()`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    home: Path
    config: IdentityConfig
    #: The prose of IDENTITY.md.
    identity: str
    skills: tuple[SkillSummary, ...]
    #: Entries of USER.md / MEMORY.md shown in `text` (withheld ones are in `withheld`).
    user_entries: tuple[str, ...]
    memory_entries: tuple[str, ...]
    text: str
    #: "sha256:<hex>" of `text`: equal digests mean byte-identical prompts.
    digest: str
    #: What the text was built from, for `is_stale`.
    sources: tuple[Source, ...]
    warnings: tuple[str, ...]
    withheld: tuple[Withheld, ...]

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        # `name` is derived from config and dumped for readers; a dumped soul loads back.
        if isinstance(data, dict) and "name" in data:
            data = {k: v for k, v in data.items() if k != "name"}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def name(self) -> str:
        """The persona's name (from IDENTITY.md)."""
        return self.config.name

    def is_stale(self) -> bool:
        """Tell whether the home on disk differs from this snapshot (the snapshot never changes).

        Creating or deleting MEMORY.md, USER.md, soul.md.j2 or a skill counts too.
        """
        try:
            now = _Loaded.from_home(Home(self.home)).hashes
        except HomeError:
            return True
        return now != tuple((s.path, s.sha256) for s in self.sources)


def compose_soul(dir: str | os.PathLike[str], *, strict: bool = True) -> Soul:
    """Compose the soul of the home at `dir` (the same as `Home(dir).compose()`).

    Args:
        dir: the home directory.
        strict: True (default) raises on any problem; False skips bad skills and
            records each as a warning on the soul.

    Raises:
        HomeError: listing every problem found (each names the file, line or key, and rule).
    """
    return compose_home(Home(dir), strict=strict)


# -- composing ---------------------------------------------------------------------

# The last soul per (home, strict) with its source hashes: reused while they are
# unchanged, since a soul is a pure function of its sources' content.
_SOULS: dict[tuple[Path, bool], tuple[tuple[tuple[str, str | None], ...], Soul]] = {}
_SOULS_MAX = 256


@dataclass(frozen=True, slots=True, kw_only=True)
class _Loaded:
    """Every file of a home, loaded through the parse cache; problems collected, not raised."""

    identity: Identity | None
    template: jinja2.Template | None
    memory: dict[str, MemoryFile]
    scan: SkillScan
    #: (path, sha256) per source: cheap to compare on every compose.
    hashes: tuple[tuple[str, str | None], ...]
    problems: tuple[str, ...]

    @classmethod
    def from_home(cls, home: Home) -> _Loaded:
        home.check_dir()
        problems: list[str] = []
        identity: Identity | None = None
        id_sha: str | None = None
        try:
            id_sha, identity = home.load_identity()
        except HomeError as exc:
            problems.extend(exc.problems)
        tpl_sha, compiled = load_cached(home.template_path, "template", _compile)
        template: jinja2.Template | None = _default_template()
        if isinstance(compiled, jinja2.Template):
            template = compiled
        elif compiled is not None:
            problems.append(compiled)
            template = None
        memory: dict[str, MemoryFile] = {}
        shas: dict[str, str | None] = {}
        for target in _MEMORY_ORDER:
            try:
                shas[target], memory[target] = home.load_memory_file(target)
            except HomeError as exc:
                problems.extend(exc.problems)
                shas[target] = "unreadable"
        scan = home.scan_skills()
        hashes = (
            (IDENTITY_FILE, id_sha),
            (TEMPLATE_FILE, tpl_sha),
            *((MEMORY_FILES[t], shas[t]) for t in _MEMORY_ORDER),
            *scan.hashes,
        )
        return cls(
            identity=identity,
            template=template,
            memory=memory,
            scan=scan,
            hashes=hashes,
            problems=tuple(problems),
        )


def compose_home(home: Home, *, strict: bool = True) -> Soul:
    """Compose `home`'s soul (what `Home.compose` runs).

    Raises:
        HomeError: listing every problem found.
    """
    loaded = _Loaded.from_home(home)
    problems = list(loaded.problems)
    if strict:
        problems += loaded.scan.problems
    if problems:
        raise problems_error(problems)
    memo_key = (home.path, strict)
    memo = _SOULS.get(memo_key)
    if memo is not None and memo[0] == loaded.hashes:
        return memo[1]
    soul = _render(home, loaded, strict=strict)
    if len(_SOULS) >= _SOULS_MAX:
        _SOULS.clear()
    _SOULS[memo_key] = (loaded.hashes, soul)
    return soul


def _render(home: Home, loaded: _Loaded, *, strict: bool) -> Soul:
    # 1. Collect the parts, holding back memory blocks that fail the safety check.
    assert loaded.identity is not None
    assert loaded.template is not None
    config = loaded.identity.config
    warnings = list(loaded.scan.warnings)
    if not strict:
        warnings += [f"skipped: {p}" for p in loaded.scan.problems]
    withheld: list[Withheld] = []
    shown: dict[str, str] = {}
    entries: dict[str, tuple[str, ...]] = {}
    for target in _MEMORY_ORDER:
        mem = loaded.memory[target]
        file = MEMORY_FILES[target]
        kept: list[str] = []
        kept_entries: list[str] = []
        for block, reasons in zip(mem.doc.blocks, mem.reasons, strict=True):
            if reasons:
                withheld.append(
                    Withheld(file=file, kind=block.kind, text=block.text, reasons=reasons)
                )
                continue
            kept.append(block.raw)
            if block.kind == "entry":
                kept_entries.append(block.text)
        shown[target] = "".join(kept).strip("\n")
        entries[target] = tuple(kept_entries)
        limit = config.memory_limits.for_target(target)
        chars = mem.doc.chars
        if chars >= MEMORY_WARN_RATIO * limit:
            warnings.append(
                f"{home.path / file}: {chars} of {limit} characters "
                f"({100 * chars // limit}%): consolidate entries before it fills up"
            )
    skills = tuple(
        SkillSummary(
            name=s.name,
            description=s.description,
            # A valid skill's folder is named after it (a rule), so no Path arithmetic.
            path=f"{SKILLS_DIR}/{s.name}/{SKILL_FILE}",
        )
        for s in loaded.scan.skills
    )
    # 2. Render: every value goes in as data, never as template source.
    context: dict[str, Any] = {
        "name": config.name,
        "description": config.description,
        "identity": loaded.identity.body,
        "config": config,
        "skills": skills,
        "user": shown["user"],
        "memory": shown["self"],
        "user_entries": entries["user"],
        "memory_entries": entries["self"],
    }
    try:
        rendered = loaded.template.render(context)
    except Exception as exc:
        raise HomeError(_render_problem(home, exc)) from exc
    text = _normalize(rendered)
    if len(text) >= MEMORY_WARN_RATIO * SOUL_BUDGET_CHARS:
        warnings.append(
            f"{home.path}: the soul is {len(text)} characters, budget {SOUL_BUDGET_CHARS}: "
            "shorten the identity, skill descriptions or memory"
        )
    digest = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Soul(
        home=home.path,
        config=config,
        identity=loaded.identity.body,
        skills=skills,
        user_entries=entries["user"],
        memory_entries=entries["self"],
        text=text,
        digest=digest,
        sources=tuple(Source(path=p, sha256=h) for p, h in loaded.hashes),
        warnings=tuple(warnings),
        withheld=tuple(withheld),
    )


def _normalize(rendered: str) -> str:
    """LF newlines and exactly one final newline (whatever the template does): stable bytes."""
    return normalize_text(rendered).strip("\n") + "\n"


# -- templates -----------------------------------------------------------------------


def _oneline(value: object) -> str:
    """Fold whitespace and newlines to single spaces: a value cannot start a new section."""
    return " ".join(str(value).split())


_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,  # Markdown, not HTML
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,
)
_ENV.filters["oneline"] = _oneline

# A home's own template may come from anywhere (a persona shared online): render it
# sandboxed, so `{{ config.__class__.__mro__ }}` and friends cannot reach Python.
_SANDBOX = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,
)
_SANDBOX.filters["oneline"] = _oneline


@cache
def _default_template() -> jinja2.Template:
    source = resources.files(__package__).joinpath("templates").joinpath(TEMPLATE_FILE)
    return _ENV.from_string(source.read_text(encoding="utf-8"))


def _compile(text: str, path: Path) -> jinja2.Template | str:
    """Compile a home's template, or return the problem naming its file and line."""
    try:
        return _SANDBOX.from_string(text)
    except jinja2.TemplateSyntaxError as exc:
        return f"{path}:{exc.lineno}: template syntax error: {exc.message}"


def _render_problem(home: Home, exc: Exception) -> str:
    """Name the template file and line where rendering failed."""
    where = str(home.template_path) if home.template_path.exists() else "default soul template"
    line = _template_line(exc.__traceback__)
    at = f"{where}:{line}" if line else where
    message = exc.message if isinstance(exc, jinja2.TemplateError) else None
    return f"{at}: template error: {message or f'{type(exc).__name__}: {exc}'}"


def _template_line(tb: TracebackType | None) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
