"""The home's own state: the `.toolnexus/` folder and the SQLite database inside it.

Created on the first write that needs it (a memory change to record), never by
a read: composing a soul, `check` or `memory show` leave a home as they found
it. The folder holds a `.gitignore` of `*`, so a home kept in git never commits
its history by accident, and one database, `state.db`, in WAL mode with
`synchronous=NORMAL` (a crash may lose the last record, never a memory file's
change: the next write finds the file differing and records it) and
`secure_delete` on (text that `forget` blanks is overwritten on disk, not
merely unlinked from the b-tree).

The schema is versioned with `PRAGMA user_version`: `MIGRATIONS[k]` takes a
database from version k to k+1, each in one transaction, so a database made by
an older toolnexus is upgraded in place and one made by a newer toolnexus is
refused rather than misread.

Like every other file of a home, the state is reached without leaving it: a
`.toolnexus` that is a link, or a database file that is one, is refused.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ...errors import HistoryError
from ...home._door import STATE_DIR
from ._migrations import MIGRATIONS

__all__ = [
    "BUSY_MS",
    "DB_NAME",
    "MIGRATIONS",
    "STATE_DIR",
    "State",
    "open_state",
    "state_dir",
    "state_errors",
    "state_problems",
    "unusable",
]

DB_NAME = "state.db"
_GITIGNORE = "# toolnexus state: history and conversations, never committed\n*\n"
#: How long a writer waits for another process's transaction (seconds).
BUSY_MS = 30_000


def state_dir(home: Path) -> Path:
    """Where `home` keeps its state (which may not exist yet)."""
    return home / STATE_DIR


class State:
    """One open state database: a connection shared by the threads of one process.

    `transaction()` serialises them (SQLite connections are not for concurrent
    use) and opens an immediate transaction, so two processes never interleave
    a read-then-write.
    """

    __slots__ = ("_conn", "_lock", "ident", "path")

    def __init__(self, path: Path, conn: sqlite3.Connection, ident: tuple[int, int]) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = conn
        self.ident = ident
        self._lock = threading.RLock()

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection, opened again if a fork closed it (call under the lock)."""
        if self._conn is None:
            self._conn = _configure(_connect_raw(self.path), self.path)
        return self._conn

    def close(self) -> None:
        """Close the connection (it reopens on next use)."""
        with self._lock:
            if self._conn is not None:
                with suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block in one immediate transaction: committed on success, else rolled back."""
        with self._lock:
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    with suppress(sqlite3.Error):  # the first error is the one to report
                        conn.execute("ROLLBACK")
                raise

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """Read under the connection's lock (one consistent snapshot)."""
        with self._lock:
            yield self.conn

    def checkpoint(self) -> None:
        """Copy the log into the database and empty it, so old page images are gone."""
        with self._lock:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()


_open: dict[tuple[int, str], State] = {}
_open_lock = threading.Lock()


def open_state(home: Path, *, create: bool) -> State | None:
    """The home's state database, opened once per process; None when absent and not `create`.

    Raises:
        HistoryError: (kind `state`) when `.toolnexus` or the database is a link or
            not what it should be, cannot be created, or was made by a newer toolnexus.
    """
    db_name = os.path.join(os.path.abspath(home), STATE_DIR, DB_NAME)
    key = (os.getpid(), db_name)
    found = _open.get(key)
    if found is not None:  # the common case: open, and still the same plain folder and file
        try:
            folder_st = os.lstat(os.path.dirname(db_name))
            now = os.lstat(db_name)
        except OSError:
            pass
        else:
            if (
                stat.S_ISDIR(folder_st.st_mode)
                and stat.S_ISREG(now.st_mode)
                and (now.st_dev, now.st_ino) == found.ident
            ):
                return found
    db = Path(db_name)
    folder = db.parent
    with _open_lock:
        found = _open.get(key)
        try:
            st = _vet(folder, db)
        except BaseException:
            if found is not None:
                _close(key)
            raise
        if found is not None and st is not None and (st.st_dev, st.st_ino) == found.ident:
            return found
        if found is not None:  # deleted or replaced behind our back: open the new one
            _close(key)
        if st is None:
            if not create:
                return None
            _make_folder(folder)
        state = _connect(db)
        _open[key] = state
        return state


def _close(key: tuple[int, str]) -> None:
    state = _open.pop(key, None)
    if state is not None:
        state.close()


def _fail(path: Path, why: str) -> HistoryError:
    return HistoryError(f"{path}: {why}", kind="state")


def _look(folder: Path, db: Path) -> tuple[tuple[Path, str] | None, os.stat_result | None]:
    """What is wrong with the folder or the database files (the part, and why), if they are
    not plain (no links); and the database's stat (None: none yet)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None, None
    if stat.S_ISLNK(st.st_mode):
        return (folder, _IS_LINK), None
    if not stat.S_ISDIR(st.st_mode):
        why = "is not a folder: move it aside so toolnexus can keep its state there"
        return (folder, why), None
    found: os.stat_result | None = None
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
        try:
            st = os.lstat(folder / name)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            return (folder / name, _NOT_REGULAR), None
        if name == DB_NAME:
            found = st
    return None, found


_IS_LINK = "is a link: refused (the home's state must live in the home)"
_NOT_REGULAR = "is not a regular file (a link?): refused"


def _vet(folder: Path, db: Path) -> os.stat_result | None:
    """Check the folder and the database are plain (no links); the database's stat, or None."""
    odd, found = _look(folder, db)
    if odd is not None:
        raise _fail(*odd)
    return found


def _make_folder(folder: Path) -> None:
    """Create `.toolnexus/` (private: it holds what the persona was told) and its .gitignore."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise _fail(folder, f"cannot be created: {exc.strerror or exc}") from None
    else:
        home_st = os.stat(folder.parent)
        if hasattr(os, "geteuid") and os.geteuid() == 0 and home_st.st_uid != 0:
            with suppress(OSError):  # root in a person's home: the state stays theirs
                os.chown(folder, home_st.st_uid, home_st.st_gid)
    ignore = folder / ".gitignore"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(ignore, flags, 0o644)
    except FileExistsError:
        return
    except OSError as exc:
        raise _fail(ignore, f"cannot be created: {exc.strerror or exc}") from None
    try:
        os.write(fd, _GITIGNORE.encode())
    finally:
        os.close(fd)


def _connect_raw(db: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(
            db, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise _fail(db, f"cannot be opened: {exc}") from None


def _configure(conn: sqlite3.Connection, db: Path) -> sqlite3.Connection:
    """Set the connection's pragmas (closing it and raising HistoryError on failure)."""
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        _wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA journal_size_limit = 1048576")  # a checkpointed log shrinks back
        conn.execute("PRAGMA cache_size = -16384")  # 16 MiB at most: a large import stays quick
    except sqlite3.Error as exc:
        conn.close()
        raise unusable(db, exc) from None
    return conn


def _wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode, waiting for a process that is creating it too.

    Switching a new database to WAL needs it to itself for a moment, and SQLite
    answers "locked" at once (its busy wait does not cover this) when another
    process has it open: two processes creating one home's state at the same
    moment would otherwise fail. Retried for up to `BUSY_MS`.
    """
    deadline = time.monotonic() + BUSY_MS / 1000
    pause = 0.002
    while True:
        try:
            if conn.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal":
                return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        if time.monotonic() > deadline:
            raise sqlite3.OperationalError("database is locked")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


@contextmanager
def state_errors(home: Path) -> Iterator[None]:
    """Report a database SQLite refuses while the block uses `home`'s state (busy,
    damaged, read-only) as a HistoryError (kind `state`) naming it."""
    try:
        yield
    except sqlite3.Error as exc:
        raise unusable(state_dir(home) / DB_NAME, exc) from None


def state_problems(home: Path) -> list[str]:
    """What keeps `home`'s history from being kept, each with its repair (empty: nothing).

    Reads only: the database is opened read-only and checked (`PRAGMA quick_check`).
    """
    folder = state_dir(home)
    db = folder / DB_NAME
    odd, found = _look(folder, db)
    if odd is not None:
        part, why = odd
        fix = (
            "remove the link; toolnexus keeps its state in a folder of its own and never "
            "writes through a link"
            if why in (_IS_LINK, _NOT_REGULAR)
            else f"move it aside (mv {part} <somewhere else>)"
        )
        return [f"{_fail(part, why)}; repair: {fix}"]
    if found is None:
        return []
    aside = (
        f"repair: move it aside (mv {db} {db}.damaged, and its -wal and -shm files too); "
        "the next write starts a new history"
    )
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            checked = conn.execute("PRAGMA quick_check").fetchone()
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        error = str(unusable(db, exc))
        if "is busy" in error:
            return []  # in use right now: nothing to repair
        return [f"{error.removesuffix(_ASIDE)}; {aside}"]
    if checked is None or checked[0] != "ok":
        return [f"{db}: is damaged ({checked[0] if checked else 'no answer'}); {aside}"]
    if version > len(MIGRATIONS):
        return [f"{db}: was made by a newer toolnexus; repair: upgrade toolnexus"]
    if not os.access(db, os.W_OK) or not os.access(folder, os.W_OK | os.X_OK):
        return [f"{db}: cannot be written (check the permissions of {folder} and the files in it)"]
    return []


_ASIDE = "; move it aside to start a new history"


def unusable(db: Path, exc: sqlite3.Error) -> HistoryError:
    """The error for a database SQLite refused: busy, read-only, or damaged, each as such."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        why = "is busy: another process has held it too long; try again"
    elif "full" in text or (("disk I/O" in text or "I/O error" in text) and _disk_full(db)):
        why = "cannot be written: the disk is full (free some space)"
    elif "readonly" in text or "read-only" in text or "unable to open" in text:
        why = f"cannot be written ({text}): check the permissions of {db.parent}"
    elif "not a database" in text or "malformed" in text or "corrupt" in text:
        why = f"is damaged ({text}){_ASIDE}"
    else:
        why = f"cannot be used ({text})"
    return _fail(db, why)


def _disk_full(db: Path) -> bool:
    """Whether the disk holding `db` has (almost) no room left: SQLite often reports a full
    disk as a "disk I/O error"."""
    try:
        return shutil.disk_usage(db.parent if db.parent.exists() else db).free < 1 << 20
    except OSError:
        return False


def _connect(db: Path) -> State:
    conn = _configure(_connect_raw(db), db)
    try:
        _migrate(conn, db)
        st = os.stat(db)
    except sqlite3.Error as exc:
        conn.close()
        raise unusable(db, exc) from None
    except BaseException:
        conn.close()
        raise
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        folder_st = os.stat(db.parent)
        for name in (db, db.with_name(f"{DB_NAME}-wal"), db.with_name(f"{DB_NAME}-shm")):
            try:
                if os.lstat(name).st_uid != folder_st.st_uid:
                    os.chown(name, folder_st.st_uid, folder_st.st_gid)
            except OSError:
                continue
    return State(db, conn, (st.st_dev, st.st_ino))


def _migrate(conn: sqlite3.Connection, db: Path) -> None:
    """Bring the schema to the newest version, one migration per transaction."""
    # Current already (the usual case): no write lock, so opening never waits on a writer.
    if conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS):
        return
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > len(MIGRATIONS):
                raise _fail(
                    db,
                    f"was made by a newer toolnexus (schema version {version}; this one "
                    f"knows up to {len(MIGRATIONS)}): upgrade toolnexus to use it",
                )
            if version == len(MIGRATIONS):
                conn.execute("COMMIT")
                return
            try:
                for statement in _statements(MIGRATIONS[version]):
                    conn.execute(statement)
            except sqlite3.Error as exc:
                raise _fail(
                    db,
                    f"cannot be upgraded to schema version {version + 1} ({exc}); it is "
                    "left as it was",
                ) from None
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def _before_fork() -> None:
    """Close every connection before a fork: SQLite's state must not cross it."""
    _open_lock.acquire()
    for state in _open.values():
        state._lock.acquire()
        state.close()


def _after_fork_in_parent() -> None:
    for state in _open.values():
        state._lock.release()
    _open_lock.release()


def _after_fork_in_child() -> None:
    global _open_lock
    _open_lock = threading.Lock()
    for state in _open.values():
        state._lock = threading.RLock()
    _open.clear()  # keyed by the parent's pid: never used here


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )


def _statements(script: str) -> Iterator[str]:
    """Split a migration into statements (`executescript` would commit on its own)."""
    lines = [line for line in script.splitlines() if not line.strip().startswith("--")]
    buf = ""
    for piece in "\n".join(lines).split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):  # a ';' inside a string does not end it
            if buf.strip(" \n;"):
                yield buf.strip()
            buf = ""
    if buf.strip(" \n;"):
        raise ValueError(f"incomplete SQL in a migration: {buf.strip()[:60]}")
