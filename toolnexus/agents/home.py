"""A persona's home directory: where its files are, and loading them (never creating them).

Loads go through the parse cache in `_cache.py` (see `load_cached` for why it can
never serve content older than what is on disk); of a skill it keeps only what
the soul lists, never the body.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..errors import HomeError
from ._cache import load_cached, read_regular_file, verdict
from ._frontmatter import normalize_newlines
from .identity import IDENTITY_FILE, Identity, load_identity, parse_identity
from .memory import MEMORY_FILES, MemoryDocument, Target, parse_memory
from .skills import SKILL_FILE, Skill, SkillInfo, parse_skill

if TYPE_CHECKING:
    import asyncio

    from .soul import Soul

__all__ = ["SKILLS_DIR", "TEMPLATE_FILE", "Home", "MemoryFile", "SkillScan", "Source"]

SKILLS_DIR = "skills"
TEMPLATE_FILE = "soul.md.j2"


class Source(BaseModel):
    """One thing a soul was built from: a path relative to the home and its content hash.

    `sha256` is None when the file is absent (an absent MEMORY.md is part of the
    snapshot too: creating it makes the soul stale). For the skills folder
    (`path == "skills/"`) the hash covers the sorted listing of its entries; for a
    skill folder without a SKILL.md (`path == "skills/<name>/"`), the names in it
    that differ from SKILL.md only in case (they change the problem's hint).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    sha256: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryFile:
    """A memory file as composing sees it: the parsed document and each block's safety verdict."""

    doc: MemoryDocument
    #: Per block of `doc.blocks`: why it must not enter a system prompt (empty = safe).
    reasons: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillScan:
    """What the skills folder holds: valid skills (sorted by name) and what is wrong."""

    skills: tuple[SkillInfo, ...]
    #: Rule breaks (a folder without SKILL.md, a bad SKILL.md): errors in strict mode.
    problems: tuple[str, ...]
    #: Soft limits and ignored entries: never errors.
    warnings: tuple[str, ...]
    #: (path relative to the home, sha256 or None if absent) for skills/ and each SKILL.md.
    hashes: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True, init=False)
class Home:
    """A persona's home directory. Knows the paths; loads files; never creates anything."""

    path: Path

    def __init__(self, dir: str | os.PathLike[str]) -> None:
        object.__setattr__(self, "path", Path(os.path.abspath(dir)))

    @property
    def identity_path(self) -> Path:
        """IDENTITY.md: the persona's config (frontmatter) and identity (prose). Required."""
        return self.path / IDENTITY_FILE

    @property
    def memory_path(self) -> Path:
        """MEMORY.md: the persona's own notes (memory target "self"). Absent means empty."""
        return self.path / MEMORY_FILES["self"]

    @property
    def user_path(self) -> Path:
        """USER.md: what the persona knows about its user (target "user"). Absent means empty."""
        return self.path / MEMORY_FILES["user"]

    @property
    def skills_dir(self) -> Path:
        """skills/: one folder per skill, each with a SKILL.md. Absent means no skills."""
        return self.path / SKILLS_DIR

    @property
    def template_path(self) -> Path:
        """soul.md.j2: optional; overrides the package's soul template."""
        return self.path / TEMPLATE_FILE

    def check_dir(self) -> None:
        """Raise HomeError unless the home is an existing folder.

        Raises:
            HomeError: naming the path.
        """
        if not self.path.is_dir():
            what = "does not exist" if not self.path.exists() else "is not a folder"
            raise HomeError(f"{self.path}: {what}: a home is a folder with an IDENTITY.md in it")

    def load_identity(self) -> tuple[str | None, Identity]:
        """Return IDENTITY.md's content hash and parsed identity.

        Raises:
            HomeError: when it is missing or breaks a rule (every problem listed).
        """
        sha, result = load_cached(self.identity_path, "identity", _parse_identity_file)
        if result is None:
            self.check_dir()
            # Raises the one "missing IDENTITY.md" error (or loads a file that just appeared).
            return None, load_identity(self.path)
        if isinstance(result, tuple):
            raise problems_error(result)
        return sha, result

    def identity(self) -> Identity:
        """Load IDENTITY.md.

        Raises:
            HomeError: when it is missing or breaks a rule (every problem listed).
        """
        return self.load_identity()[1]

    def load_memory_file(self, target: Target) -> tuple[str | None, MemoryFile]:
        """Return the content hash (None if absent) and parsed memory file for a target."""
        path = self.memory_path if target == "self" else self.user_path
        sha, result = load_cached(path, "memory", _parse_memory_file)
        if result is None:
            return None, _EMPTY_MEMORY
        return sha, result

    def memory(self) -> MemoryDocument:
        """Load MEMORY.md (empty when absent)."""
        return self.load_memory_file("self")[1].doc

    def user(self) -> MemoryDocument:
        """Load USER.md (empty when absent)."""
        return self.load_memory_file("user")[1].doc

    def scan_skills(self) -> SkillScan:
        """Look at every entry of skills/ and report valid skills, problems and warnings.

        Hidden entries (a leading dot) are ignored; a plain file directly under
        skills/ is ignored with a warning (skills are folders); a folder without a
        SKILL.md, or with a bad one, is a problem.
        """
        # Strings, not Paths, in this loop: it runs per skill on every compose.
        root = os.fspath(self.skills_dir)
        try:
            with os.scandir(root) as it:
                entries = sorted((e for e in it if not e.name.startswith(".")), key=_entry_name)
        except (FileNotFoundError, NotADirectoryError):
            if os.path.lexists(root):
                problem = f"{root}: is not a folder: skills live in skills/<name>/SKILL.md"
                return SkillScan(
                    skills=(), problems=(problem,), warnings=(), hashes=(_listing([]),)
                )
            return SkillScan(skills=(), problems=(), warnings=(), hashes=((_LISTING, None),))
        skills: list[SkillInfo] = []
        problems: list[str] = []
        warnings: list[str] = []
        names: list[str] = []
        hashes: list[tuple[str, str | None]] = []
        for entry in entries:
            name = entry.name
            if not entry.is_dir():
                names.append(name)
                warnings.append(
                    f"{entry.path}: ignored: not a skill folder "
                    f"(a skill is a folder skills/<name>/ with a {SKILL_FILE})"
                )
                continue
            names.append(name + "/")
            try:
                sha, result = load_cached(
                    entry.path + os.sep + SKILL_FILE, "skill", _parse_skill_file, cost=_skill_cost
                )
            except HomeError as exc:
                # The real bytes' hash when there are bytes: editing the file must show.
                sha, result = getattr(exc, "sha256", "unreadable"), None
                problems.extend(exc.problems)
            hashes.append((f"{SKILLS_DIR}/{name}/{SKILL_FILE}", sha))
            if sha is None:
                near = _near_skill_files(entry.path)
                problems.append(_missing_skill_file(Path(entry.path), near))
                # The hint names these, so a skill.md appearing must refresh it.
                hashes.append((f"{SKILLS_DIR}/{name}/", _listing(near)[1]))
            elif isinstance(result, HomeError):
                problems.extend(result.problems)
            elif result is not None:
                skills.append(result[0])
                warnings.extend(result[1])
        return SkillScan(
            skills=tuple(skills),
            problems=tuple(problems),
            warnings=tuple(warnings),
            hashes=(_listing(names), *hashes),
        )

    def skills(self, *, strict: bool = True) -> tuple[Skill, ...]:
        """Load every skill with its body, sorted by name.

        Bodies are read from disk here, not cached: `scan_skills` (what composing
        uses) is the cheap call when names and descriptions are enough.

        Args:
            strict: True (default) raises on any bad skill; False skips bad ones.

        Raises:
            HomeError: (strict) listing every problem in skills/; or when a skill
                changes into a bad one between the scan and reading its body.
        """
        scan = self.scan_skills()
        if strict and scan.problems:
            raise problems_error(scan.problems)
        return tuple(_load_skill(info.path) for info in scan.skills)

    def compose(self, *, strict: bool = True) -> Soul:
        """Compose the soul: a frozen, deterministic system-prompt snapshot of this home.

        Args:
            strict: True (default) raises on any problem; False skips bad skills and
                records each as a warning on the soul.

        Raises:
            HomeError: listing every problem found.
        """
        from .soul import compose_home

        return compose_home(self, strict=strict)

    def watch(
        self,
        *,
        strict: bool = True,
        initial: bool = False,
        debounce_ms: int = 100,
        max_delay_ms: int = 2000,
        stop_event: asyncio.Event | None = None,
        force_polling: bool | None = None,
        poll_delay_ms: int = 300,
    ) -> AsyncIterator[Soul | HomeError]:
        """Re-compose the soul whenever the home changes (async iterator of Soul | HomeError).

        Debounced (one item per burst of writes); an invalid intermediate state is
        yielded as its HomeError and the watch goes on. It never touches a running
        session. The options are those of `toolnexus.agents._watch.watch_home`.
        """
        from ._watch import watch_home

        return watch_home(
            self,
            strict=strict,
            initial=initial,
            debounce_ms=debounce_ms,
            max_delay_ms=max_delay_ms,
            stop_event=stop_event,
            force_polling=force_polling,
            poll_delay_ms=poll_delay_ms,
        )


def problems_error(problems: tuple[str, ...] | list[str]) -> HomeError:
    """One HomeError listing every problem (the problem itself when there is just one)."""
    if len(problems) == 1:
        return HomeError(problems[0])
    return HomeError(f"{len(problems)} problems in the home", problems=problems)


def _parse_identity_file(text: str, path: Path) -> Identity | tuple[str, ...]:
    try:
        return parse_identity(text, path=path)
    except HomeError as exc:
        return exc.problems


def _parse_memory_file(text: str, path: Path) -> MemoryFile:
    doc = parse_memory(text)
    return MemoryFile(doc=doc, reasons=tuple(verdict(block.text) for block in doc.blocks))


def _parse_skill_file(text: str, path: Path) -> tuple[SkillInfo, tuple[str, ...]] | HomeError:
    # The body is left out: the soul lists names and descriptions, and the skill tool
    # reads bodies from disk when asked, so a cache entry stays small whatever the body.
    try:
        skill, warnings = parse_skill(text, path=path)
    except HomeError as exc:
        return exc
    return SkillInfo(meta=skill.meta, path=skill.path), warnings


def _skill_cost(value: tuple[SkillInfo, tuple[str, ...]] | HomeError) -> int:
    if isinstance(value, HomeError):
        return sum(map(len, value.problems))
    info, warnings = value
    return len(info.meta.model_dump_json()) + sum(map(len, warnings))


_EMPTY_MEMORY = MemoryFile(doc=parse_memory(""), reasons=())


_LISTING = f"{SKILLS_DIR}/"


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _listing(names: list[str]) -> tuple[str, str | None]:
    return _LISTING, hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()


def _load_skill(path: Path) -> Skill:
    """Read and parse one SKILL.md, body included (no cache: bodies may be large)."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as exc:
        raise HomeError(f"{name}: cannot be read: {exc.strerror or exc}") from exc
    data = read_regular_file(name, st)
    if data is None:
        raise HomeError(f"{name}: removed while loading skills")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HomeError(f"{name}: not UTF-8 text (byte {exc.start}): save it as UTF-8") from None
    return parse_skill(normalize_newlines(text), path=path)[0]


def _near_skill_files(folder: str) -> list[str]:
    """Names in `folder` equal to SKILL.md but for case (sorted)."""
    try:
        with os.scandir(folder) as it:
            return sorted(e.name for e in it if e.name.lower() == SKILL_FILE.lower())
    except OSError:
        return []


def _missing_skill_file(folder: Path, near: list[str]) -> str:
    hint = "add one with `name:` and `description:` frontmatter"
    if near:
        hint = f"found {near[0]}: rename it to {SKILL_FILE}"
    return f"{folder}: no {SKILL_FILE}: every skill folder needs one ({hint})"
