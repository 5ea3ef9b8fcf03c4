"""Shared fixtures: sample homes copied into a temp dir, so tests never touch the repo."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _loopback_openai import LoopbackServer, loopback_server
from _pgserver import PgServer, find_bindir

HOMES = Path(__file__).parent / "homes"
EXAMPLES = Path(__file__).parent.parent / "personas_example"


@pytest.fixture
def copy_home(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Copy `tests/homes/<case>` (or a path) into tmp_path and return the copy."""

    def copy(case: str | Path) -> Path:
        src = Path(case) if Path(case).is_absolute() else HOMES / case
        dest = tmp_path / src.name
        shutil.copytree(src, dest, symlinks=True)
        return dest

    return copy


#: Lines the suite prints at its end, whatever the output capture (the scanner's figures).
REPORT = pytest.StashKey[list[str]]()


@pytest.fixture
def report(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Call it with a line to print in the run's summary (figures a reader should see)."""
    return request.config.stash.setdefault(REPORT, []).append


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = config.stash.get(REPORT, [])
    if lines:
        terminalreporter.section("figures")
        for line in lines:
            terminalreporter.write_line(line)
    skipped = terminalreporter.stats.get("skipped", [])
    if any(NO_POSTGRES in str(getattr(r, "longrepr", "")) for r in skipped):
        terminalreporter.section("PostgreSQL store NOT TESTED", sep="!", red=True, bold=True)
        terminalreporter.write_line(NO_POSTGRES, red=True, bold=True)


#: The temp base this run made for itself (None when one was given with --basetemp).
OWN_BASETEMP = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """Give each run a temp base of its own, so two runs at once on one machine never share
    (pytest's default `pytest-of-USER/pytest-N` keeps only the newest three bases, and one
    run's clean-up would remove another's folders). It works under any TMPDIR, a private
    one included."""
    if config.option.basetemp is None:
        base = Path(tempfile.mkdtemp(prefix="toolnexus-tests-"))
        config.option.basetemp = str(base)
        config.stash[OWN_BASETEMP] = base
    # The Ctrl-C tests play a person pressing Ctrl-C on a command in the foreground. A
    # suite started in the background (`pytest &`: the shell ignores SIGINT for it) would
    # hand that ignoring down to every command it starts, and they would never hear it.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave nothing in the temp folder: the run's own base goes with it."""
    base = config.stash.get(OWN_BASETEMP, None)
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def count_scans(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """Call it when the count should start: every later real scan is appended to the list."""
    from toolnexus.scanner import _scanner as scanner

    def start() -> list[str]:
        scanned: list[str] = []
        scan = scanner._builtin_scan

        def counting(text: str, **options: Any) -> Any:
            scanned.append(text)
            return scan(text, **options)

        monkeypatch.setattr(scanner, "_builtin_scan", counting)
        return scanned

    return start


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home of its own, `ada/` in the test's folder: an IDENTITY.md naming Ada, nothing
    else (a test module may define its own `home`)."""
    path = tmp_path / "ada"
    path.mkdir()
    (path / "IDENTITY.md").write_text("---\nname: Ada\n---\nYou are Ada.\n", encoding="utf-8")
    return path


@pytest.fixture
def provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the machine's settings out of a provider test: no provider variables, no
    proxies, and 127.0.0.1 reached directly."""
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "TOOLNEXUS_MODEL",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """A loopback server speaking the providers' wire formats, for the test's length."""
    with loopback_server() as running:
        yield running


NO_POSTGRES = (
    "PostgreSQL server binaries (pg_ctl, initdb) not found: the PostgreSQL store tests "
    "did not run; install postgresql"
)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One real PostgreSQL server for the whole run (skipped without the binaries, failed
    on CI, where a silent skip would hide the store's tests)."""
    bindir = find_bindir()
    if bindir is None:
        if os.environ.get("CI") == "true":
            pytest.fail(NO_POSTGRES)
        pytest.skip(NO_POSTGRES)
    server = PgServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def pg_dsn(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The DSN of a fresh, empty database of the test's own, with PGPASSWORD set for it;
    the database is dropped afterwards if the server still runs."""
    name = f"t_{uuid.uuid4().hex}"
    pg_server.create_database(name)
    monkeypatch.setenv("PGPASSWORD", pg_server.password)
    yield pg_server.dsn(name)
    if pg_server.running:
        pg_server.drop_database(name)
