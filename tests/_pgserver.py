"""A throwaway PostgreSQL server for tests: its own data dir, 127.0.0.1 and a free port,
password auth over TCP. As root it runs as uid/gid 65534 (PostgreSQL refuses root)."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from _unprivileged import NOBODY, reachable_base
from psycopg import sql

#: The unprivileged uid and gid the server runs as when the tests run as root ("nobody").
#: How long start and stop may take, in seconds.
TIMEOUT = 30.0
_TOOLS = ("pg_ctl", "initdb", "postgres")


def _complete(bindir: Path) -> bool:
    return all(os.access(bindir / tool, os.X_OK) for tool in _TOOLS)


def _version(bindir: Path) -> tuple[int, ...]:
    """The major version a /usr/lib/postgresql/<N>/bin path names, for picking the highest."""
    return tuple(int(part) for part in re.findall(r"\d+", bindir.parent.name)) or (0,)


def find_bindir() -> Path | None:
    """The directory holding pg_ctl, initdb and postgres: PATH's pg_ctl first (symlinks
    resolved, since postgres sits beside the real file), then the highest
    /usr/lib/postgresql/*/bin; None when there is none."""
    found = shutil.which("pg_ctl")
    if found:
        bindir = Path(found).resolve().parent
        if _complete(bindir):
            return bindir
    candidates = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if _complete(p)]
    return max(candidates, key=_version) if candidates else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PgServer:
    """One PostgreSQL cluster in a fresh temp dir. `start()` runs initdb the first time;
    `stop()` then `start()` restarts it on the same port and data; `close()` removes it all."""

    host = "127.0.0.1"
    user = "toolnexus"

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        #: True: fsync on, as in production (benchmarks); False: quicker tests.
        self.durable = durable
        self.password = secrets.token_urlsafe(18)
        self.port = _free_port()
        self._uid: int | None = NOBODY if os.geteuid() == 0 else None
        self.root = self._make_root()
        self.datadir = self.root / "data"
        self.logfile = self.root / "server.log"
        self._running = False

    # -- helpers ----------------------------------------------------------------

    def _make_root(self) -> Path:
        """A fresh dir owned by the server's user; under /tmp if TMPDIR is out of its reach."""
        base = Path(tempfile.gettempdir()) if self._uid is None else reachable_base(self._uid)
        root = Path(tempfile.mkdtemp(prefix="toolnexus-pg-", dir=base))
        if self._uid is not None:
            os.chown(root, self._uid, self._uid)
        return root

    def _run(self, *args: str | Path) -> None:
        """Run a server tool as the server's user; its output goes to a file (a detached
        postmaster must not hold a pipe of ours) and is shown if the tool fails."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C", LANG="C")
        user: dict[str, Any] = {}
        if self._uid is not None:
            user = {"user": self._uid, "group": self._uid, "extra_groups": []}
        out_path = self.root / "tool.out"
        with open(out_path, "w+b") as out:
            done = subprocess.run(
                [str(a) for a in args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.root,
                env=env,
                timeout=TIMEOUT + 15,
                check=False,
                **user,
            )
            out.seek(0)
            output = out.read().decode(errors="replace")
        out_path.unlink()
        if done.returncode:
            raise RuntimeError(
                f"{Path(args[0]).name} failed (exit {done.returncode}):\n{output}\n"
                f"--- server log ---\n{self.log()}"
            )

    def _initdb(self) -> None:
        pwfile = self.root / "pwfile"
        pwfile.write_text(self.password + "\n", encoding="utf-8")
        if self._uid is not None:
            os.chown(pwfile, self._uid, self._uid)
        try:
            self._run(
                self.bindir / "initdb",
                "-D", self.datadir,
                "-U", self.user,
                f"--pwfile={pwfile}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            )  # fmt: skip
        finally:
            pwfile.unlink()
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(self.port),
            "unix_socket_directories": f"'{self.root}'",
            "fsync": "on" if self.durable else "off",
            "max_connections": "200",
        }
        with open(self.datadir / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\n# tests/_pgserver.py\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def _connect(self, dbname: str = "postgres", **kwargs: Any) -> psycopg.Connection[Any]:
        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            dbname=dbname,
            **kwargs,
        )

    # -- life cycle -------------------------------------------------------------

    def start(self) -> None:
        """Start the server (initdb first if the cluster is new); return once it takes
        password connections on 127.0.0.1, or raise with the server log."""
        if self._running:
            return
        if not (self.datadir / "PG_VERSION").exists():
            self._initdb()
        deadline = time.monotonic() + TIMEOUT
        self._run(
            self.bindir / "pg_ctl", "start", "-w", "-t", str(int(TIMEOUT)),
            "-D", self.datadir, "-l", self.logfile,
        )  # fmt: skip
        while True:
            try:
                with self._connect(connect_timeout=5) as conn:
                    conn.execute("SELECT 1")
            except psycopg.OperationalError as error:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"PostgreSQL on port {self.port} does not accept connections: "
                        f"{error}\n--- server log ---\n{self.log()}"
                    ) from error
                time.sleep(0.1)
            else:
                self._running = True
                return

    def stop(self) -> None:
        """Stop the server (fast shutdown: sessions are ended) and wait until it is down."""
        if self.pid() is None:  # never started, or a start that failed early
            self._running = False
            return
        self._run(
            self.bindir / "pg_ctl", "stop", "-m", "fast", "-w", "-t", str(int(TIMEOUT)),
            "-D", self.datadir,
        )  # fmt: skip
        self._running = False

    def restart(self) -> None:
        """Stop, then start again on the same port with the same data."""
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server (an immediate shutdown if a clean one fails) and remove its temp dir."""
        try:
            self.stop()
        except (RuntimeError, subprocess.TimeoutExpired):
            pid = self.pid()
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGQUIT)
            self._running = False
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading it -------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether `start()` succeeded with no `stop()` since."""
        return self._running

    def pid(self) -> int | None:
        """The postmaster's process id, from postmaster.pid (None when it is not running)."""
        try:
            first = (self.datadir / "postmaster.pid").read_text(encoding="utf-8").split("\n")[0]
        except FileNotFoundError:
            return None
        return int(first)

    def log(self) -> str:
        """The server's log so far ("" before the first start)."""
        try:
            return self.logfile.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq URL for `dbname`, without the password (clients take it from PGPASSWORD)."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{dbname}"

    def create_database(self, name: str) -> None:
        """Create an empty database `name`."""
        with self._connect(autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def drop_database(self, name: str) -> None:
        """Drop database `name` if it exists, ending any sessions still connected to it."""
        with self._connect(autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
