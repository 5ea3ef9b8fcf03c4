"""A home's files: the one door every read goes through, their formats, and loading them.

The door (`_door`) and the writes beside it (`_openfolder`, `_lock`, `_writer`:
a file swapped atomically under its lock); the formats, pure and without I/O
(`_frontmatter`, `_identity` for IDENTITY.md, `_skill` for SKILL.md,
`_template` for the soul's layout); content memos of parses (`_memo`); and
`_load`, which reads a whole home through the door and collects its problems.

May import: the core, `scanner`, and (for `_load` alone) `memory`'s format and
`store`'s choice of where memory lives. `Home`, the object that ties a home's
loaders together, is in `agents`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._identity import Identity, IdentityConfig, MemoryLimits
    from ._load import Source
    from ._skill import Skill, SkillFrontmatter, parse_skill

__all__ = [
    "Identity",
    "IdentityConfig",
    "MemoryLimits",
    "Skill",
    "SkillFrontmatter",
    "Source",
    "parse_skill",
]

__getattr__, __dir__ = exports(
    __name__,
    {
        "Identity": "._identity",
        "IdentityConfig": "._identity",
        "MemoryLimits": "._identity",
        "Skill": "._skill",
        "SkillFrontmatter": "._skill",
        "Source": "._load",
        "parse_skill": "._skill",
    },
)
