"""A persona's home directory: where its files are, and loading them (never creating them).

Every read goes through `home/_door.py`, the one door to a home's files; composing the
soul is `soul.compose_soul`. `Home` is the object that ties them to one folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..home._door import IDENTITY_FILE, MEMORY_FILES, SKILLS_DIR, TEMPLATE_FILE, check_home
from ..home._identity import Identity, Target
from ..home._identity_file import load_identity
from ..home._load import (
    SkillScan,
    load_memory,
    load_skill,
    scan_skills,
    valid_skills,
)
from ..home._skill import Skill
from ..memory._document import MemoryDocument
from ..memory._held import HeldWrite, Review
from ..memory._history import Change, History
from ..soul import Soul, compose_soul
from ..store._config import configured_store

__all__ = ["Home"]


@dataclass(frozen=True, slots=True, init=False)
class Home:
    """A persona's home directory. Knows the paths; loads files; never creates anything.

    A `Home` is path-like (`os.fspath(home)` is its folder), so it goes wherever a
    home folder does: `compose_soul(home)`, `memory_tool(home)`, `from_dir(home)`.
    """

    path: Path

    def __init__(self, dir: str | os.PathLike[str]) -> None:
        object.__setattr__(self, "path", Path(os.path.abspath(dir)))

    def __fspath__(self) -> str:
        return str(self.path)

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
        check_home(self.path)

    def identity(self) -> Identity:
        """Load IDENTITY.md.

        Raises:
            HomeError: when it is missing or breaks a rule (every problem listed).
        """
        return load_identity(self.path)[1]

    def memory(self) -> MemoryDocument:
        """Load MEMORY.md (empty when absent), through the same door as composing.

        Raises:
            HomeFileError: when it is refused: a link out of the home, not a regular
                file, over its byte cap, or not UTF-8 text.
            StoreError: when the home's database store cannot be reached.
        """
        return load_memory(self.path, "self", store=configured_store(self.path))[1].doc

    def user(self) -> MemoryDocument:
        """Load USER.md (empty when absent), through the same door as composing.

        Raises:
            HomeFileError: when it is refused: a link out of the home, not a regular
                file, over its byte cap, or not UTF-8 text.
            StoreError: when the home's database store cannot be reached.
        """
        return load_memory(self.path, "user", store=configured_store(self.path))[1].doc

    def scan_skills(self) -> SkillScan:
        """Look at every entry of skills/ and report valid skills, problems and warnings.

        Hidden entries (a leading dot) are ignored; a plain file directly under
        skills/ is ignored with a warning (skills are folders); a folder without a
        SKILL.md, or with a bad one, is a problem.
        """
        return scan_skills(self.path)

    def skills(self, *, strict: bool = True) -> tuple[Skill, ...]:
        """Load every skill with its body, sorted by name.

        Bodies are read from disk here: `scan_skills` (what composing uses) is
        the cheap call when names and descriptions are enough.

        Args:
            strict: True (default) raises on any bad skill; False skips bad ones.

        Raises:
            HomeError: (strict) listing every problem in skills/; or when a skill
                changes into a bad one between the scan and reading its body.
        """
        infos = valid_skills(self.path, strict=strict)
        return tuple(load_skill(self.path, info.path) for info in infos)

    def compose(self, *, strict: bool = True) -> Soul:
        """Compose the soul: a frozen, deterministic system-prompt snapshot of this home.

        Args:
            strict: True (default) raises on any problem; False skips bad skills and
                records each as a warning on the soul.

        Raises:
            HomeError: listing every problem found.
        """
        return compose_soul(self.path, strict=strict)

    # -- memory history (see `history.History`) ------------------------------------

    def history(
        self, target: Target | None = "self", *, limit: int | None = None, grep: str | None = None
    ) -> list[Change]:
        """The changes to MEMORY.md (`"user"`: USER.md; None: both), newest first.

        Every change the memory tool or the command line made, and each version
        someone else wrote (recorded when found: by the next write, or by this
        call). `limit` keeps the newest N; `grep` keeps changes whose text
        contains it (case-insensitive): how did the persona learn that?

        Raises:
            HistoryError: when the home's state database cannot be used.
        """
        return History(self.path).log(target, limit=limit, grep=grep)

    def undo(self, id: int | None = None, *, target: Target = "self") -> str:
        """Revert change `id` (default: the latest of `target`'s file) as a new change.

        Raises:
            HistoryError: no such change, or its entry changed since (`conflict`).
        """
        return History(self.path).undo(id, target=target)

    def restore(self, id: int) -> str:
        """Put the file back exactly as it was right after change `id` (itself recorded).

        Raises:
            HistoryError: no such change, or that version is no longer kept.
        """
        return History(self.path).restore(id)

    def compact(self, *, keep_days: int) -> str:
        """Drop history older than `keep_days` days (each file's latest change stays)."""
        return History(self.path).compact(keep_days=keep_days)

    def forget(self, id: int) -> str:
        """Blank change `id`'s texts for good: a secret written by mistake leaves the history.

        Raises:
            HistoryError: no such change.
        """
        return History(self.path).forget(id)

    # -- writes held for review (see `memory.Review`) -------------------------------------

    def pending(self) -> list[HeldWrite]:
        """The memory writes held for a person's review, oldest first (SPEC §3): writes the
        model made after untrusted text reached it. None of them is in a soul.

        Raises:
            HistoryError: when the home's state cannot be read.
        """
        return Review(self.path).pending()

    def approve(self, id: int) -> str:
        """Apply held write `id` under the normal rules (match, limit, scanner); it loads
        next session. A refused approval keeps it held.

        Raises:
            HistoryError: no held write `id`.
            MemoryEditError: the write is refused now.
        """
        return Review(self.path).approve(id)

    def reject(self, id: int) -> str:
        """Drop held write `id`; nothing is written.

        Raises:
            HistoryError: no held write `id`.
        """
        return Review(self.path).reject(id)
