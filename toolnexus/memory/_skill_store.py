"""The skills a persona writes, on disk: one skill's folder changed safely, with its history.

The same contract as the memory files (SPEC §15): every change goes to
`skills/<name>/` and nowhere else, through descriptors of folders opened one
by one without following links (a link anywhere on the way is refused, and
nothing is created outside the home); only regular files are read or
replaced, each within its cap, and each file is replaced atomically
(`home/_writer.update`) under the skill's lock (`skills/.<name>.lock`); the
change is recorded in the home's state database (`store/folder/_skill_records`)
with its source, so `undo` and `restore` can put any version back. A change
never touches a running session: its soul and skill list are a snapshot, so
the skill loads from the next session on.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from ..errors import HistoryError, HomeFileError, MemoryEditError
from ..home._door import FILE_CAP, READ_FLAGS, SKILL_FILE, SKILLS_DIR, decode, read_fd
from ..home._lock import Lock, LockIsLink, LockLost, WriteCancelled, locked
from ..home._openfolder import Folder
from ..home._writer import ReadOnlyFile, SwapConflict, refuse_read_only, update
from ..scanner._scanner import DEFAULT, Scanner
from ..store._records import digest
from ..store._review import HeldOp
from ..store.folder import _skill_records as records
from ..store.folder._skill_records import SkillChange
from ..store.folder._state import open_state, state_errors
from ..tools import call_source
from ._match import NOTHING, quote
from ._review import HELD, keep_held
from ._skill_edit import (
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    SkillOp,
    check_op,
    new_skill_text,
    patched,
    same_frontmatter,
    valid_skill_text,
)

__all__ = ["LOADS_NEXT", "SkillChange", "SkillOp", "SkillStore", "held_op", "skill_op"]

LOADS_NEXT = (
    "Saved now, loads next session: this session's system prompt and skill list do not change."
)
#: What a change to a skill already listed says: the skill tool reads its files when called.
SERVED_NOW = (
    "Saved now: the skill tool serves the new text from now on; the system prompt's list of "
    "skills (names and descriptions) changes from the next session."
)

_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NEW = {"create": "created", "patch": "patched", "write_file": "wrote", "remove": "removed"}


def held_op(op: SkillOp) -> HeldOp:
    """`op` as a held write keeps it."""
    text = {"create": op.body, "patch": op.text, "write_file": op.content}.get(op.action)
    return HeldOp(
        op.action,
        text or "",
        op.with_,
        name=op.name,
        path=op.path,
        description=op.description,
    )


def skill_op(held: HeldOp) -> SkillOp:
    """The change a held write keeps (`held_op` turned back)."""
    assert held.name is not None
    assert held.action in _NEW
    action = held.action
    return SkillOp(
        action,  # type: ignore[arg-type]
        held.name,
        description=held.description if action == "create" else None,
        body=held.text if action == "create" else None,
        text=held.text if action == "patch" else None,
        with_=held.with_ if action == "patch" else None,
        path=held.path if action in ("patch", "write_file") else None,
        content=held.text if action == "write_file" else None,
    )


#: What a change makes of a skill's files, given a reader of their bytes now: each file
#: (a path in the skill's folder) to its new bytes (None: delete it); the message.
Plan = Callable[[Callable[[str], bytes | None]], tuple[dict[str, bytes | None], str]]


@dataclass(frozen=True, slots=True)
class SkillStore:
    """The skills of the home `dir` that a persona writes: create, patch, write a file, remove,
    and the history's log, undo and restore. `scanner` checks new text (the home's, from
    `skill_manage_tool`); `fsync=False` trades crash durability for speed (tests)."""

    dir: Path
    scanner: Scanner = DEFAULT
    fsync: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "dir", Path(os.path.abspath(self.dir)))

    # -- the persona's changes -----------------------------------------------------------

    def create(self, name: str, description: str, body: str) -> str:
        """Write a new skill `skills/<name>/SKILL.md` (`apply` of a `create`)."""
        return self.apply(SkillOp("create", name, description=description, body=body))

    def patch(self, name: str, text: str, with_: str, *, path: str | None = None) -> str:
        """Put `with_` in place of the one occurrence of `text` in a file of skill `name`
        (SKILL.md unless `path` names another)."""
        return self.apply(SkillOp("patch", name, text=text, with_=with_, path=path))

    def write_file(self, name: str, path: str, content: str) -> str:
        """Write `content` to the file `path` inside skill `name`'s folder."""
        return self.apply(SkillOp("write_file", name, path=path, content=content))

    def remove(self, name: str) -> str:
        """Delete skill `name`'s folder and every file in it."""
        return self.apply(SkillOp("remove", name))

    def apply(
        self, op: SkillOp, *, source: str = "python", cancel: threading.Event | None = None
    ) -> str:
        """Apply one change (checked first: fields, caps, scanner); the message for the model.

        Raises:
            MemoryEditError: `invalid`, `exists`, `not_found`, `ambiguous`, `rejected`,
                `full`, `io` or `cancelled`; nothing is written then.
        """
        check_op(op, self.scanner)
        name = op.name
        shown = f"{SKILLS_DIR}/{name}/{op.file}"

        def plan(read: Callable[[str], bytes | None]) -> tuple[dict[str, bytes | None], str]:
            if op.action == "create":
                assert op.description is not None
                assert op.body is not None
                if read(SKILL_FILE) is not None:
                    raise MemoryEditError(
                        f"exists: skill {name!r} already exists: change it with patch or "
                        f"write_file, or remove it first. {NOTHING}",
                        kind="exists",
                    )
                text = new_skill_text(name, op.description, op.body)  # checked valid
                return {SKILL_FILE: text.encode()}, f"created skill {name!r} ({shown})"
            if read(SKILL_FILE) is None:
                raise _no_skill(self.dir, name)
            if op.action == "remove":
                return {}, f"removed skill {name!r} and every file in {SKILLS_DIR}/{name}/"
            if op.action == "write_file":
                assert op.content is not None
                existed = read(op.file) is not None
                verb = "replaced" if existed else "wrote"
                return {op.file: op.content.encode()}, f"{verb} {shown}"
            old = read(op.file)
            if old is None:
                raise MemoryEditError(
                    f"not found: no file {op.file!r} in skill {name!r} (write_file creates "
                    f"one). {NOTHING}",
                    kind="not_found",
                )
            try:
                text = decode(old, shown)
            except HomeFileError:
                raise MemoryEditError(
                    f"invalid arguments: path: {shown} is not UTF-8 text: it cannot be patched. "
                    f"{NOTHING}",
                    kind="invalid",
                ) from None
            new = patched(text, op, self.scanner, shown=shown)
            if op.file == SKILL_FILE:
                valid_skill_text(new, name)
                same_frontmatter(text, new, name, self.scanner)
            return {op.file: new.encode()}, f"patched {shown}"

        message = self._change(
            name,
            op.action,
            plan,
            source=source,
            cancel=cancel,
            create=op.action == "create",
            remove=op.action == "remove",
        )
        return f"{message}. {LOADS_NEXT if op.action in ('create', 'remove') else SERVED_NOW}"

    def hold(self, op: SkillOp, *, source: str, why: str) -> str:
        """Hold a change for a person's review instead of applying it (the same checks
        first: a refused change is refused, not held); the message for the model.

        Raises:
            MemoryEditError: `invalid`, `rejected`, `full`, or `io` when it cannot be kept.
        """
        check_op(op, self.scanner)
        held = keep_held(
            self.dir,
            "skill",
            [held_op(op)],
            batch=False,
            source=source,
            what="this skill change",
        )
        return (
            f"{HELD} (#{held.id}): {why}, so this change to skill {op.name!r} waits for a "
            "person, who will see it and decide. Nothing is saved now: the skill is unchanged, "
            "and the change loads in a later session only if they approve it. Do not write it "
            "again."
        )

    # -- the history ---------------------------------------------------------------------

    def log(self, skill: str | None = None, *, limit: int | None = None) -> list[SkillChange]:
        """The recorded changes, newest first: of one skill (None: all), at most `limit`.

        Raises:
            HistoryError: when the home's state database cannot be read.
        """
        state = open_state(self.dir, create=False)
        if state is None:
            return []
        with state_errors(self.dir):
            return records.log(state, skill, limit=limit)

    def undo(self, id: int | None = None) -> str:
        """Put back each file of change `id` (default: the newest change) as it was before it,
        when none has changed since; recorded as an `undo`.

        Raises:
            HistoryError: no such change (`not_found`), or a file changed since (`conflict`).
            MemoryEditError: when the files cannot be written (`io`).
        """
        change = self._find(id)
        return self._put_back(change, "undo", before=True)

    def restore(self, id: int) -> str:
        """Put each file of change `id` back as it was right after it; recorded as a `restore`.

        Raises:
            HistoryError: no such change (`not_found`).
            MemoryEditError: when the files cannot be written (`io`).
        """
        return self._put_back(self._find(id), "restore", before=False)

    def _find(self, id: int | None) -> SkillChange:
        state = open_state(self.dir, create=False)
        with state_errors(self.dir):
            if state is None:
                found = None
            elif id is None:
                newest = records.log(state, None, limit=1)
                found = newest[0] if newest else None
            else:
                found = records.find(state, id) if 0 < id < 2**63 else None
        if found is None:
            what = "no skill change is recorded" if id is None else f"no skill change #{id}"
            raise HistoryError(f"{what} (`toolnexus skills HOME log` lists them)", kind="not_found")
        return found

    def _put_back(self, change: SkillChange, action: str, *, before: bool) -> str:
        state = open_state(self.dir, create=False)
        assert state is not None  # the change was found in it
        wanted: dict[str, bytes | None] = {}
        with state_errors(self.dir):
            for f in change.files:
                dig = f.before if before else f.after
                data = None if dig == "" else records.state_bytes(state, dig)
                if dig and data is None:
                    raise HistoryError(
                        f"skill change #{change.id}: the version of {f.path} is no longer kept",
                        kind="not_found",
                    )
                wanted[f.path] = data

        def plan(read: Callable[[str], bytes | None]) -> tuple[dict[str, bytes | None], str]:
            if before:
                for f in change.files:
                    if digest(read(f.path)) != f.after:
                        raise HistoryError(
                            f"cannot undo skill change #{change.id}: "
                            f"{SKILLS_DIR}/{change.skill}/{f.path} changed since; "
                            f"`toolnexus skills HOME restore ID` puts back a version whole",
                            kind="conflict",
                        )
            what = "undid" if before else "restored"
            return wanted, f"{what} skill change #{change.id} ({change.action} of {change.skill!r})"

        message = self._change(
            change.skill,
            action,
            plan,
            source=f"{call_source('python')} {action} #{change.id}",
            cancel=None,
            create=True,
            remove=False,
        )
        return f"{message}. It loads next session."

    # -- one change under the skill's lock -----------------------------------------------

    def _change(
        self,
        name: str,
        action: str,
        plan: Plan,
        *,
        source: str,
        cancel: threading.Event | None,
        create: bool,
        remove: bool,
    ) -> str:
        """Run `plan` on the skill's files as read under its lock, write what it returns
        (each file atomically), and record it; the plan's message, and a note when the
        history could not record it. `create`: make the skill's folder when missing."""
        made: list[str] = []  # folders this change created: gone again if it fails
        try:
            with _opened(self.dir, create=create, made=made) as skills:
                if skills is None:
                    raise _no_skill(self.dir, name)
                folder = Folder(os.path.join(self.dir, SKILLS_DIR), skills)
                # The skill's folder first: a missing or linked one is refused with no lock
                # made. A folder removed while we waited for its lock is opened again.
                for _ in range(3):
                    with _opened_at(skills, SKILLS_DIR, folder.path, (name,), create, made) as root:
                        if root is None:
                            raise _no_skill(self.dir, name)
                        with locked(folder, name, cancel=cancel) as lock:
                            if not _still_at(root, skills, name):
                                continue
                            skill = _SkillFolder(root, os.path.join(folder.path, name), name)
                            message, note, gone = self._locked(
                                skill,
                                plan,
                                lock,
                                action=action,
                                source=source,
                                remove=remove,
                                made=made,
                            )
                            if gone:  # the skill's folder goes with its last file, locked
                                with suppress(OSError):
                                    os.rmdir(name, dir_fd=skills)
                            made.clear()  # in place: the folders stay
                            return message + note
                raise _no_skill(self.dir, name)
        except WriteCancelled:
            raise MemoryEditError(
                f"cancelled: the call was given up before anything was written. {NOTHING}",
                kind="cancelled",
            ) from None
        except ReadOnlyFile as exc:
            raise MemoryEditError(
                f"cannot write skill {name!r}: {exc.filename} is {exc.strerror}: "
                f"a person marked it so, and it is never replaced or deleted. {NOTHING}",
                kind="io",
            ) from None
        except (LockIsLink, LockLost, SwapConflict, HomeFileError) as exc:
            raise MemoryEditError(
                f"cannot write skill {name!r}: {exc}. {NOTHING}", kind="io"
            ) from None
        except OSError as exc:
            raise MemoryEditError(
                f"cannot write skill {name!r}: {_why(exc, self.dir)}. {NOTHING}", kind="io"
            ) from None
        finally:
            if made and made[0] == os.path.join(self.dir, SKILLS_DIR):
                with suppress(OSError):  # skills/ made for nothing: its lock goes with it
                    os.unlink(os.path.join(made[0], f".{name}.lock"))
            for path in reversed(made):  # folders made for a change that did not happen
                with suppress(OSError):
                    os.rmdir(path)

    def _locked(
        self,
        skill: _SkillFolder,
        plan: Plan,
        lock: Lock,
        *,
        action: str,
        source: str,
        remove: bool,
        made: list[str],
    ) -> tuple[str, str, bool]:
        """The change itself, under the skill's lock: the plan's message, the history's
        note, and whether the skill's folder is left empty (to be removed)."""
        wanted, message = plan(skill.read)
        entries = skill.entries()  # the folder walked once, for what is there and its room
        on_disk = skill.every_file(entries, refuse_special=remove)
        if remove:
            wanted = dict.fromkeys(on_disk)
        left = (set(on_disk) | {p for p, d in wanted.items() if d is not None}) - {
            p for p, d in wanted.items() if d is None
        }
        if SKILL_FILE not in left and left:
            # An undo or restore that would leave files with no SKILL.md: no skill at all.
            raise HistoryError(
                f"cannot leave {SKILLS_DIR}/{skill.name}/ without its {SKILL_FILE}: "
                f"{sorted(left)[0]} and other files would stay; undo the later changes "
                "first, or remove the skill",
                kind="conflict",
            )
        skill.check_room(entries, wanted)
        old = {path: skill.read(path) for path in wanted}
        skill.check_writable(wanted)
        self._outside_edits(skill)
        try:
            for path, data in wanted.items():
                skill.put(path, data, lock=lock, fsync=self.fsync, made=made)
                if old[path] != data:
                    skill.changed.append((path, old[path], data))
        except BaseException as exc:
            if not skill.changed:
                raise
            # Some files changed before the failure: said, and recorded, never hidden.
            note = self._record(skill.name, action, skill.changed, f"{source} (unfinished)")
            done = ", ".join(p for p, _, _ in skill.changed)
            raise MemoryEditError(
                f"cannot finish the change to skill {skill.name!r}: {exc}; {done} changed "
                "before it stopped, recorded in the history (`toolnexus skills HOME undo` "
                f"puts them back){note}",
                kind="io",
            ) from None
        if not left:
            skill.remove_folders()
        note = self._record(skill.name, action, skill.changed, source)
        return message, note, not left

    def _outside_edits(self, skill: _SkillFolder) -> None:
        """Record as an `outside-edit` each file of the skill a person changed since its
        last record, so the history holds their version and undo never goes past it."""
        state = open_state(self.dir, create=False)
        if state is None:
            return
        try:
            last = records.last_digests(state, skill.name)
            changed = []
            for path, dig in last.items():
                try:
                    data = skill.read(path)
                except (HomeFileError, MemoryEditError, OSError):
                    continue  # not a file this tool reads: left to a person
                if digest(data) != dig:
                    changed.append((path, records.state_bytes(state, dig) if dig else None, data))
            if changed:
                records.record(state, skill.name, "outside-edit", changed, "found on disk")
        except (HistoryError, sqlite3.Error):
            pass  # the write goes on; `_record` says the history could not keep it

    def _record(
        self,
        name: str,
        action: str,
        files: list[tuple[str, bytes | None, bytes | None]],
        source: str,
    ) -> str:
        if not files:
            return ""
        try:
            state = open_state(self.dir, create=True)
            assert state is not None
            with state_errors(self.dir):
                records.record(state, name, action, files, source)
        except HistoryError as exc:
            return f" (the change is in place, but not recorded in the history: {exc})"
        return ""


# -- folders, opened without following links ------------------------------------------------


def _why(exc: OSError, home: Path) -> str:
    where = f"{_relative(exc.filename, home)}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _relative(path: object, home: Path) -> str:
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else str(path)
    return os.path.relpath(text, home) if os.path.isabs(text) else text


def _no_skill(home: Path, name: str) -> MemoryEditError:
    folder = home / SKILLS_DIR
    try:
        with os.scandir(folder) as it:
            have = sorted(
                e.name
                for e in it
                if not e.name.startswith(".") and os.path.isfile(os.path.join(e.path, SKILL_FILE))
            )
    except OSError:
        have = []
    listed = ", ".join(have) if have else "none yet: create one"
    return MemoryEditError(
        f"not found: no skill {quote(name, 80)} (skills: {listed}). {NOTHING}", kind="not_found"
    )


def _still_at(fd: int, parent: int, name: str) -> bool:
    """Whether the open folder `fd` is still `name` in `parent` (not removed meanwhile)."""
    try:
        now = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _open_dir(parent: int, part: str, shown: str) -> int:
    try:
        return os.open(part, _DIR | _NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        try:
            link = stat.S_ISLNK(os.stat(part, dir_fd=parent, follow_symlinks=False).st_mode)
        except OSError:
            link = exc.errno == errno.ELOOP
        if link:
            raise HomeFileError(
                f"{shown} is a link: a skill write follows no links", path=shown, reason="link_out"
            ) from None
        raise HomeFileError(
            f"{shown} is a file, not a folder", path=shown, reason="special"
        ) from None


@contextmanager
def _opened(home: Path, *, create: bool, made: list[str]) -> Iterator[int | None]:
    """The home's `skills/` folder (made when `create`); None when it is missing."""
    fd = os.open(home, _DIR)
    try:
        with _opened_at(fd, "", str(home), (SKILLS_DIR,), create, made) as inner:
            yield inner
    finally:
        os.close(fd)


@contextmanager
def _opened_at(
    fd: int, shown: str, path: str, parts: tuple[str, ...], create: bool, made: list[str]
) -> Iterator[int | None]:
    """The folder `parts` below the open folder `fd` (`shown` as messages name it, `path`
    on disk), made when `create` (each made folder's path goes to `made`); None when it is
    missing and not `create`. Every step is opened without following a link."""
    opened: list[int] = []
    try:
        current = fd
        for part in parts:
            path = os.path.join(path, part)
            shown = f"{shown}/{part}" if shown else part
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=current)
                    made.append(path)
                except FileExistsError:
                    pass
            try:
                current = _open_dir(current, part, shown)
            except FileNotFoundError:
                yield None
                return
            opened.append(current)
        yield current
    finally:
        for inner in opened:
            os.close(inner)


class _SkillFolder:
    """One skill's open folder: its files read, replaced and deleted through descriptors.

    Paths here are the tool's own (checked by `parts_of` when a model gave them) or found
    on disk: they are split on `/`, never checked again, and never followed through a link.
    """

    def __init__(self, fd: int, path: str, name: str) -> None:
        self.fd, self.path, self.name = fd, path, name
        self._read: dict[str, bytes | None] = {}
        #: What was written: each file's path, and its bytes before and after.
        self.changed: list[tuple[str, bytes | None, bytes | None]] = []

    def shown(self, rel: str) -> str:
        return f"{SKILLS_DIR}/{self.name}/{rel}"

    def read(self, rel: str) -> bytes | None:
        """A file's bytes now (None: no file); refused when not a regular file or a link."""
        if rel in self._read:
            return self._read[rel]
        parts = tuple(rel.split("/"))
        data = None
        with _opened_at(
            self.fd, self.shown("").rstrip("/"), self.path, parts[:-1], False, []
        ) as folder:
            if folder is not None:
                try:
                    fd = os.open(parts[-1], READ_FLAGS | _NOFOLLOW, dir_fd=folder)
                except FileNotFoundError:
                    fd = -1
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise HomeFileError(
                            f"{self.shown(rel)} is a link: a skill write follows no links",
                            path=self.shown(rel),
                            reason="link_out",
                        ) from None
                    raise
                if fd >= 0:
                    try:
                        data = read_fd(fd, self.shown(rel), FILE_CAP)[0]
                    finally:
                        os.close(fd)
        self._read[rel] = data
        return data

    def entries(self) -> list[tuple[str, os.stat_result]]:
        """Every entry below the folder (not following links): its path and lstat, folders
        before what they hold."""
        found: list[tuple[str, os.stat_result]] = []
        stack: list[tuple[str, int]] = []
        try:
            stack.append(("", os.dup(self.fd)))
            while stack:
                prefix, fd = stack.pop()
                try:
                    with os.scandir(fd) as it:
                        listed = [(e.name, e.stat(follow_symlinks=False)) for e in it]
                    for entry, st in listed:
                        rel = f"{prefix}{entry}"
                        found.append((rel, st))
                        if stat.S_ISDIR(st.st_mode):
                            stack.append((rel + "/", _open_dir(fd, entry, self.shown(rel))))
                finally:
                    os.close(fd)
        finally:
            for _, fd in stack:  # a walk that stopped early leaks no descriptor
                os.close(fd)
        return found

    def every_file(
        self, entries: Sequence[tuple[str, os.stat_result]], *, refuse_special: bool
    ) -> list[str]:
        """Every file among the skill's `entries`; with `refuse_special`, refused when it
        holds a link or a FIFO (which a person removes by hand), else those are left out."""
        files = []
        for rel, st in entries:
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                if refuse_special:
                    raise HomeFileError(
                        f"{self.shown(rel)} is not a regular file (a link, pipe or device): a "
                        "person removes this skill by hand",
                        path=self.shown(rel),
                        reason="special",
                    )
                continue
            files.append(rel)
        return files

    def check_room(
        self, entries: Sequence[tuple[str, os.stat_result]], wanted: Mapping[str, bytes | None]
    ) -> None:
        """Refuse a change after which the skill, now `entries`, would hold too many files or
        bytes."""
        sizes = {rel: st.st_size for rel, st in entries if not stat.S_ISDIR(st.st_mode)}
        for rel, data in wanted.items():
            if data is None:
                sizes.pop(rel, None)
            else:
                sizes[rel] = len(data)
        if len(sizes) > MAX_SKILL_FILES:
            raise MemoryEditError(
                f"full: skill {self.name!r} would hold {len(sizes)} files; a skill holds at "
                f"most {MAX_SKILL_FILES}. {NOTHING}",
                kind="full",
            )
        total = sum(sizes.values())
        if total > MAX_SKILL_BYTES:
            raise MemoryEditError(
                f"full: skill {self.name!r} would hold {total:,} bytes; a skill holds at most "
                f"{MAX_SKILL_BYTES:,}: shorten it, or keep less beside SKILL.md. {NOTHING}",
                kind="full",
            )

    def check_writable(self, wanted: Mapping[str, bytes | None]) -> None:
        """Refuse, before any file changes, a change one of whose files could not be
        written: a file without write permission is a person's choice, never replaced or
        deleted."""
        for rel, data in wanted.items():
            old = self._read.get(rel)
            if old is None or old == data:  # a new file, or no change: nothing to protect
                continue
            st = os.stat(rel, dir_fd=self.fd, follow_symlinks=False)
            refuse_read_only(st, self.shown(rel))

    def put(
        self, rel: str, data: bytes | None, *, lock: Lock, fsync: bool, made: list[str]
    ) -> None:
        """Replace (or with None delete) one file, atomically."""
        parts = tuple(rel.split("/"))
        expected = self._read.get(rel)
        base = self.shown("").rstrip("/")
        with _opened_at(self.fd, base, self.path, parts[:-1], data is not None, made) as folder_fd:
            if folder_fd is None:
                return  # deleting a file whose folder is gone: nothing to do
            if data is None:
                with suppress(FileNotFoundError):
                    os.unlink(parts[-1], dir_fd=folder_fd)
                self._prune(parts[:-1])
                return
            folder = Folder(os.path.join(self.path, *parts[:-1]), folder_fd)

            def apply(found: bytes | None) -> bytes:
                if found != expected:
                    raise MemoryEditError(
                        f"cannot write {self.shown(rel)}: it changed while being written; "
                        f"try again. {NOTHING}",
                        kind="io",
                    )
                return data

            update(
                folder,
                parts[-1],
                apply,
                lock=lock,
                cap=FILE_CAP,
                shown=self.shown(rel),
                fsync=fsync,
            )

    def _prune(self, folders: tuple[str, ...]) -> None:
        """Remove the folders on `folders`' path that are left empty, deepest first, each
        through its parent's descriptor."""
        base = self.shown("").rstrip("/")
        for depth in range(len(folders), 0, -1):
            with _opened_at(self.fd, base, self.path, folders[: depth - 1], False, []) as parent:
                if parent is None:
                    continue
                try:
                    os.rmdir(folders[depth - 1], dir_fd=parent)
                except OSError:
                    return  # not empty: nor are the folders above it

    def remove_folders(self) -> None:
        """Remove the skill's emptied folders, deepest first."""
        folders = [rel for rel, st in self.entries() if stat.S_ISDIR(st.st_mode)]
        for rel in sorted(folders, key=lambda r: r.count("/"), reverse=True):
            self._prune(tuple(rel.split("/")))
