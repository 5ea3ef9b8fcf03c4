"""Skill history: every change to a skill the persona writes, as a record in the state database.

A record is `id, time, skill, action, files, source`: `files` lists each file
the change touched in the skill's folder with the digests of its bytes before
and after ('' for no file), and each distinct version of a file is kept once,
compressed, in `skill_states`, so undo and restore can put any of them back
exactly. Skills live in the home's folder whatever store keeps the memory
files, and so does their history. Nothing here touches a skill's files: the
skill writer (`memory/_skill_store.py`) does, under the skill's lock, and
records here.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._records import digest, now
from ._state import State

__all__ = ["FileChange", "SkillChange", "find", "last_digests", "log", "record", "state_bytes"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file a skill change touched: its path in the skill's folder, and the digests of
    its bytes before and after ('' for no file)."""

    path: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class SkillChange:
    """One recorded change to a skill: what `toolnexus skills HOME log` shows."""

    id: int
    time: str
    skill: str
    action: str
    files: tuple[FileChange, ...]
    source: str

    @property
    def paths(self) -> tuple[str, ...]:
        """The files it touched, relative to the skill's folder."""
        return tuple(f.path for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        """One line of `skills HOME log --json`."""
        return {
            "id": self.id,
            "time": self.time,
            "skill": self.skill,
            "action": self.action,
            "files": list(self.paths),
            "source": self.source,
        }


_COLUMNS = "id, time, skill, action, files, source"


def _change(row: Sequence[Any]) -> SkillChange:
    id, time, skill, action, files, source = row
    listed = tuple(FileChange(*item) for item in json.loads(files))
    return SkillChange(int(id), str(time), str(skill), str(action), listed, str(source))


def record(
    state: State,
    skill: str,
    action: str,
    files: Sequence[tuple[str, bytes | None, bytes | None]],
    source: str,
) -> int:
    """Record a change to `skill`: each file's path and its bytes before and after; its id."""
    listed = []
    with state.transaction() as conn:
        for path, before, after in files:
            for data in (before, after):
                if data is not None:
                    conn.execute(
                        "INSERT OR IGNORE INTO skill_states (digest, body) VALUES (?, ?)",
                        (digest(data), zlib.compress(data, 1)),
                    )
            listed.append([path, digest(before), digest(after)])
        cursor = conn.execute(
            "INSERT INTO skill_changes (time, skill, action, files, source) VALUES (?, ?, ?, ?, ?)",
            (now(), skill, action, json.dumps(listed, ensure_ascii=False), source),
        )
        id = cursor.lastrowid
    assert id is not None
    return id


def log(state: State, skill: str | None, *, limit: int | None) -> list[SkillChange]:
    """The records, newest first: of one skill (None: all), at most `limit`."""
    args: list[object] = [] if skill is None else [skill]
    where = "" if skill is None else "WHERE skill = ?"
    sql = f"SELECT {_COLUMNS} FROM skill_changes {where} ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    with state.reading() as conn:
        return [_change(row) for row in conn.execute(sql, args).fetchall()]


def find(state: State, id: int) -> SkillChange | None:
    """Record `id` (None: no such record)."""
    with state.reading() as conn:
        row = conn.execute(f"SELECT {_COLUMNS} FROM skill_changes WHERE id = ?", (id,)).fetchone()
    return None if row is None else _change(row)


def last_digests(state: State, skill: str) -> dict[str, str]:
    """Each file of `skill` that has a record: the digest of its bytes after its latest one."""
    found: dict[str, str] = {}
    with state.reading() as conn:
        rows = conn.execute(
            "SELECT files FROM skill_changes WHERE skill = ? ORDER BY id", (skill,)
        ).fetchall()
    for (files,) in rows:
        for path, _before, after in json.loads(files):
            found[path] = after
    return found


def state_bytes(state: State, dig: str) -> bytes | None:
    """A kept version of a file by its digest (None: not kept)."""
    with state.reading() as conn:
        row = conn.execute("SELECT body FROM skill_states WHERE digest = ?", (dig,)).fetchone()
    return None if row is None else zlib.decompress(row[0])
