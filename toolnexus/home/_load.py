"""Load a home: every file read through `home/_door.py`, parsed, checked, and memoised by content.

The loaders collect problems rather than stop at the first, so `check` reports
them all. Every parse goes through the content memos of `_memo`, so loading an
unchanged home parses nothing again and can never serve old content.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..errors import HomeError, HomeFileError, StoreError
from ..memory._document import MemoryDocument, parse_memory
from ..memory._trust import read_trust, trust_path
from ..memory._withhold import View, view
from ..scanner._scanner import Classifier, Scanner
from ..store._config import home_store
from ..store._protocol import Store
from ..store.folder._store import FolderStore
from ._door import (
    FILE_CAP,
    IDENTITY_FILE,
    MEMORY_FILES,
    MEMORY_ORDER,
    SKILL_FILE,
    SKILLS_DIR,
    TEMPLATE_FILE,
    Door,
    check_home,
    decode,
)
from ._identity import Identity, MemoryLimits, Target
from ._identity_file import find_identity, load_identity, resolve_limits
from ._memo import memo, parsed, remembered
from ._skill import Skill, SkillInfo, parse_skill
from ._template import DEFAULT_TEMPLATE, compile_template

if TYPE_CHECKING:
    import jinja2


__all__ = [
    "Loaded",
    "MemoryFile",
    "SkillScan",
    "Source",
    "home_scanner",
    "load_home",
    "load_memory",
    "load_skill",
    "load_template",
    "scan_skills",
    "valid_skills",
]

# -- what a home holds ------------------------------------------------------------------


class Source(BaseModel):
    """One thing a soul was built from: a path relative to the home and its content hash.

    `sha256` is None when the file is absent (an absent MEMORY.md is part of the
    snapshot too: creating it makes the soul stale), and `"unreadable"` when it
    exists but cannot be read. For the skills folder (`path == "skills/"`) the
    hash covers the sorted listing of its entries; for a skill folder without a
    SKILL.md (`path == "skills/<name>/"`), the names in it that differ from
    SKILL.md only in case (they change the problem's hint).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    sha256: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryFile:
    """A memory file as composing sees it: the parsed document and what the soul shows of it."""

    doc: MemoryDocument
    #: Each note once, unsafe units withheld (`_withhold`), by the home's scanner (memoised).
    view: View
    #: The SHA-256 of the file's trust marks (`_trust`): None when there are none.
    trust: str | None = None
    #: Why the trust marks cannot be read (they then trust nothing): a soul warning.
    trust_problem: str | None = None


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Loaded:
    """Every file of a home as loaded at one moment; problems collected, not raised."""

    home: Path
    identity: Identity | None
    #: The home's compiled template, or None for the package's default layout (when
    #: the home has none, or its own is broken: a "template" entry of `part_problems`).
    template: jinja2.Template | None
    #: How problems name the template: its path, or "default soul template".
    template_name: str
    memory: dict[Target, MemoryFile]
    #: The scanner that decided what the memory files withhold.
    scanner: Scanner
    scan: SkillScan
    #: (path, sha256) per source, in a fixed order: cheap to compare.
    hashes: tuple[tuple[str, str | None], ...]
    #: What is wrong with IDENTITY.md: no soul can be composed without it.
    identity_problems: tuple[str, ...]
    #: What is wrong with the rest, by the part it withholds: the template
    #: ("template") or a memory file (its target). Strict: errors; tolerant: that
    #: part is left out (the default template, an empty file) with a warning.
    part_problems: tuple[tuple[str, str], ...]

    @property
    def problems(self) -> tuple[str, ...]:
        """Every problem outside skills/ (skills report theirs in `scan`)."""
        return self.identity_problems + tuple(p for _, p in self.part_problems)


def load_memory(
    home: Path,
    target: Target,
    *,
    limit: int | None = None,
    scanner: Scanner | None = None,
    store: Store | None = None,
) -> tuple[str | None, MemoryFile]:
    """Return a memory file's content hash (None if absent) and its parsed, checked blocks.

    `limit` (characters) sets the file's byte cap (`memory_cap`); by default it is
    the home's `memory_limits`, or the package default when IDENTITY.md cannot
    tell. `scanner` decides what is withheld (default: `home_scanner(home)`);
    entries a person trusted (`memory/_trust.py`) are shown whatever it says. The
    file's text comes from `store` (default: the home's folder); trust marks are
    read where the store keeps them.

    Raises:
        HomeFileError: when the door refuses it (a link out, not a regular file,
            over its cap, not UTF-8 text).
        StoreError: when the database store cannot be reached.
    """
    if limit is None:
        limit = _limits(home).for_target(target)
    if scanner is None:
        scanner = home_scanner(home)
    if store is None:
        store = FolderStore(home)
    found = store.memory_file(target, limit=limit)
    sha, doc = (None, _EMPTY_DOC) if found is None else found
    trust_sha, trusted, trust_problem = (
        read_trust(home, target)
        if doc.entries and store.keeps_trust_marks
        else (None, frozenset[str](), None)
    )
    shown = remembered(
        ("view", sha, scanner, trusted),
        doc.chars,
        lambda: view(doc, scan=scanner, trusted=trusted),
        view=True,
    )
    return sha, MemoryFile(doc=doc, view=shown, trust=trust_sha, trust_problem=trust_problem)


def home_scanner(
    home: Path, scanner: Scanner | Classifier | None = None, *, identity: Identity | None = None
) -> Scanner:
    """The scanner of `home`: yours (a `Scanner`, or a classifier added to the built-in
    one) with the categories IDENTITY.md's `scanner: {off: [...]}` names switched off.

    A missing or broken IDENTITY.md switches nothing off (it is reported elsewhere).
    """
    if identity is None:
        try:
            found = find_identity(home)
        except HomeError:
            found = None
        identity = found[1] if found is not None else None
    off = identity.config.scanner.off if identity is not None else ()
    if isinstance(scanner, Scanner):
        return scanner.with_off(off) if off else scanner
    return Scanner(off=frozenset(off), classifier=scanner)


def _limits(home: Path) -> MemoryLimits:
    """The home's memory limits, or the defaults when IDENTITY.md is absent or broken."""
    try:
        return resolve_limits(home)
    except HomeError:
        return MemoryLimits()


def load_template(home: Path) -> tuple[str | None, jinja2.Template | str | None]:
    """Return soul.md.j2's hash and compiled template (or its problem); (None, None) if absent.

    Raises:
        HomeError: when it exists but cannot be read as UTF-8 text.
    """
    found = parsed(Door(home), "template", os.fspath(home / TEMPLATE_FILE), compile_template)
    return (None, None) if found is None else found


def scan_skills(home: Path) -> SkillScan:
    """Look at every entry of skills/ and report valid skills, problems and warnings.

    Hidden entries (a leading dot) are ignored; a plain file directly under
    skills/ is ignored with a warning (skills are folders); a folder without a
    SKILL.md, or with a bad one, is a problem, and so is a link that leaves the
    home (a link inside it is followed).
    """
    door = Door(home)
    # Strings, not Paths, in this loop: it runs per skill on every compose.
    root = os.fspath(home / SKILLS_DIR)
    try:
        found = door.resolve(root)
    except HomeFileError as exc:
        return SkillScan(skills=(), problems=(str(exc),), warnings=(), hashes=(_listing([]),))
    if found is None:
        return SkillScan(skills=(), problems=(), warnings=(), hashes=((_LISTING, None),))
    if not stat.S_ISDIR(found[1].st_mode):
        problem = f"{root}: is not a folder: skills live in skills/<name>/SKILL.md"
        return SkillScan(skills=(), problems=(problem,), warnings=(), hashes=(_listing([]),))
    try:
        with os.scandir(root) as it:
            entries = sorted((e for e in it if not e.name.startswith(".")), key=_entry_name)
    except OSError as exc:  # a folder without read permission, say
        problem = f"{root}: cannot be read: {exc.strerror or exc}"
        return SkillScan(skills=(), problems=(problem,), warnings=(), hashes=(_listing([]),))
    skills: list[SkillInfo] = []
    problems: list[str] = []
    warnings: list[str] = []
    names: list[str] = []
    hashes: list[tuple[str, str | None]] = []
    for entry in entries:
        name = entry.name
        if entry.is_symlink():
            try:
                is_dir = stat.S_ISDIR(door.follow(entry.path)[1].st_mode)
            except HomeFileError as exc:
                problems.append(str(exc))
                names.append(name + "/")
                hashes.append((f"{SKILLS_DIR}/{name}", _UNREADABLE))
                continue
        else:
            is_dir = entry.is_dir(follow_symlinks=False)
        if not is_dir:
            names.append(name)
            warnings.append(
                f"{entry.path}: ignored: not a skill folder "
                f"(a skill is a folder skills/<name>/ with a {SKILL_FILE})"
            )
            continue
        names.append(name + "/")
        path = entry.path + os.sep + SKILL_FILE
        sha: str | None = _UNREADABLE
        try:
            found_skill = memo(door, "skill", path, _parse_skill, cost=_skill_cost)
        except HomeError as exc:
            problems.extend(exc.problems)
        else:
            sha = None
            if found_skill is not None:
                sha, parsed_skill = found_skill
                if isinstance(parsed_skill, HomeError):
                    problems.extend(parsed_skill.problems)
                else:
                    skills.append(parsed_skill[0])
                    warnings.extend(parsed_skill[1])
        hashes.append((f"{SKILLS_DIR}/{name}/{SKILL_FILE}", sha))
        if sha is None:
            near = _near_skill_files(entry.path)
            problems.append(_missing_skill_file(Path(entry.path), near))
            # The hint names these, so a skill.md appearing must refresh it.
            hashes.append((f"{SKILLS_DIR}/{name}/", _listing(near)[1]))
    return SkillScan(
        skills=tuple(skills),
        problems=tuple(problems),
        warnings=tuple(warnings),
        hashes=(_listing(names), *hashes),
    )


def valid_skills(home: Path, *, strict: bool) -> tuple[SkillInfo, ...]:
    """The valid skills of `home` (sorted by name); strict, any problem in skills/ raises.

    Raises:
        HomeError: (strict) listing every problem in skills/.
    """
    scan = scan_skills(home)
    if strict and scan.problems:
        raise HomeError.of(scan.problems)
    return scan.skills


def load_skill(home: Path, path: Path) -> Skill:
    """Read and parse one SKILL.md of `home`, body included (not memoised: a body may be large).

    Raises:
        HomeError: when it is gone, refused by the door, or breaks a rule.
    """
    data = Door(home).read(os.fspath(path), cap=FILE_CAP)
    if data is None:
        raise HomeError(f"{path}: removed while loading skills")
    return parse_skill(decode(data, path), path=path)[0]  # it normalises line endings


def load_home(home: Path, classifier: Scanner | Classifier | None = None) -> Loaded:
    """Load every file of `home` at once, collecting problems instead of raising them.

    `classifier` joins the home's scanner (`home_scanner`).

    Raises:
        HomeError: only when `home` is not an existing folder.
    """
    check_home(home)
    identity_problems: tuple[str, ...] = ()
    part_problems: list[tuple[str, str]] = []
    identity: Identity | None = None
    id_sha: str | None = _UNREADABLE
    try:
        id_sha, identity = load_identity(home)
    except HomeError as exc:
        identity_problems = exc.problems
    template: jinja2.Template | None = None
    template_name = DEFAULT_TEMPLATE
    tpl_sha: str | None = _UNREADABLE
    try:
        tpl_sha, compiled = load_template(home)
    except HomeError as exc:
        part_problems.extend(("template", p) for p in exc.problems)
    else:
        if isinstance(compiled, str):
            part_problems.append(("template", compiled))
        elif compiled is not None:
            template, template_name = compiled, str(home / TEMPLATE_FILE)
    limits = identity.config.memory_limits if identity is not None else MemoryLimits()
    scanner = home_scanner(home, classifier, identity=identity)
    memory: dict[Target, MemoryFile] = {}
    shas: dict[Target, str | None] = {}
    store: Store = FolderStore(home)
    if identity is not None:
        try:
            store = home_store(home, (str(id_sha), identity))
        except HomeError as exc:
            identity_problems += exc.problems
    for target in MEMORY_ORDER:
        try:
            shas[target], memory[target] = load_memory(
                home, target, limit=limits.for_target(target), scanner=scanner, store=store
            )
        except (HomeError, StoreError) as exc:
            problems = (
                exc.problems if isinstance(exc, HomeError) else (f"{MEMORY_FILES[target]}: {exc}",)
            )
            part_problems.extend((target, p) for p in problems)
            shas[target], memory[target] = _UNREADABLE, _EMPTY_MEMORY
    scan = scan_skills(home)
    hashes = (
        (IDENTITY_FILE, id_sha),
        (TEMPLATE_FILE, tpl_sha),
        *((MEMORY_FILES[t], shas[t]) for t in MEMORY_ORDER),
        *scan.hashes,
        # Trust marks, when a memory file has some: adding one makes a soul stale.
        *(
            (trust_path(Path(), t).as_posix(), memory[t].trust)
            for t in MEMORY_ORDER
            if memory[t].trust is not None
        ),
    )
    return Loaded(
        home=home,
        identity=identity,
        template=template,
        template_name=template_name,
        memory=memory,
        scanner=scanner,
        scan=scan,
        hashes=hashes,
        identity_problems=identity_problems,
        part_problems=tuple(part_problems),
    )


# -- parsers for the memo (pure) --------------------------------------------------------

#: The hash recorded for a file that exists but cannot be read: editing it must show.
_UNREADABLE = "unreadable"


def _parse_skill(text: str, path: Path) -> tuple[SkillInfo, tuple[str, ...]]:
    # The body is left out: the soul lists names and descriptions, and the skill tool
    # reads bodies from disk when asked, so a memo entry stays small whatever the body.
    skill, warnings = parse_skill(text, path=path)
    return SkillInfo(meta=skill.meta, path=skill.path), warnings


def _skill_cost(value: tuple[SkillInfo, tuple[str, ...]]) -> int:
    info, warnings = value
    return len(info.meta.model_dump_json()) + sum(map(len, warnings))


_EMPTY_DOC = parse_memory("")
_EMPTY_MEMORY = MemoryFile(doc=_EMPTY_DOC, view=View(text="", entries=(), withheld=(), skipped=()))

_LISTING = f"{SKILLS_DIR}/"


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _listing(names: list[str]) -> tuple[str, str | None]:
    return _LISTING, hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()


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
