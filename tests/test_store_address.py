"""A store's address: read strictly, shown without its password, however it is written.

A password with an unencoded `/`, `@`, `%`, `?`, `#` or space is misread by
libpq (part of it lands in the host or the database name, and from there in
every message); a malformed address used to end in a driver traceback. Each
case here is run through the real command line too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolnexus.agents import compose_soul
from toolnexus.errors import HomeError
from toolnexus.store._address import UNREADABLE, holds_password, read_address, scrubbed, shown

MALFORMED = [
    pytest.param("postgresql://u:SEC/RETPW@127.0.0.1:1/db", id="slash"),
    pytest.param("postgresql://u:SEC%ZZRETPW@127.0.0.1:1/db", id="bad-percent"),
    pytest.param("postgresql://u:SEC RETPW@127.0.0.1:1/db", id="space"),
    pytest.param("postgresql://u:SEC@RETPW@127.0.0.1:1/db", id="at"),
    pytest.param("postgresql://u:SEC?RETPW@127.0.0.1:1/db", id="question-mark"),
    pytest.param("postgresql://u:SEC#RETPW@127.0.0.1:1/db", id="hash"),
]


@pytest.mark.parametrize("dsn", MALFORMED)
def test_a_malformed_address_is_not_read_and_shows_nothing_of_itself(dsn: str) -> None:
    assert read_address(dsn) is None
    assert holds_password(dsn)
    assert "SEC" not in shown(dsn)
    assert "RETPW" not in shown(dsn)


def test_a_well_formed_address_shows_hosts_and_database_only() -> None:
    address = read_address("postgresql://ana:S%2FEC%40RET@db1:5432,db2/app%20db?sslmode=require")
    assert address is not None
    assert address.password == "S/EC@RET"
    assert address.shown == "postgresql://db1:5432,db2/app db"
    assert shown("postgresql://ana@/app") == "postgresql://localhost/app"
    assert not holds_password("postgresql://ana@db/app")
    assert holds_password("postgresql://db/app?sslmode=require&password=x")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcXYZ019/@%?# :&=._-", min_size=1, max_size=16))
def test_no_part_of_any_password_is_ever_shown(tail: str) -> None:
    password = "Qz" + tail  # "Qz" is in no host or database name below
    for dsn in (
        f"postgresql://ana:{password}@127.0.0.1:1/db",
        f"postgresql://127.0.0.1:1/db?password={password}",
    ):
        assert "Qz" not in shown(dsn)
        message = f'could not connect to "{password}"; host "{password.split("/")[-1]}"'
        assert "Qz" not in scrubbed(message, dsn)


def test_driver_text_loses_every_piece_of_the_password() -> None:
    dsn = "postgresql://u:SEC/RETPW@127.0.0.1:1/db"
    text = 'failed to resolve host "u", port "SEC": database "RETPW@127.0.0.1:1/db"'
    assert (
        scrubbed(text, dsn)
        == 'failed to resolve host "u", port "***": database "***@127.0.0.1:1/db"'
    )


# -- through the command line ----------------------------------------------------------------


def toolnexus(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolnexus", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "ada"
    home.mkdir()
    (home / "IDENTITY.md").write_text("---\nname: ada\n---\nYou are Ada.\n", encoding="utf-8")
    return home


@pytest.mark.parametrize("dsn", MALFORMED)
@pytest.mark.parametrize(
    "verb", [("soul",), ("memory", "add", "hello"), ("check",), ("sessions", "list"), ("serve",)]
)
def test_every_verb_refuses_a_malformed_address_in_one_line_without_it(
    home: Path, dsn: str, verb: tuple[str, ...]
) -> None:
    args = (verb[0], str(home), *verb[1:])
    done = toolnexus(*args, env={"TOOLNEXUS_STORE": dsn})
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    assert "SEC" not in output
    assert "RETPW" not in output
    assert "the store address cannot be read" in output
    assert not (home / "MEMORY.md").exists()


def test_identity_md_refuses_a_password_however_it_is_written(home: Path) -> None:
    for dsn in ("postgresql://u:SEC/RETPW@db/app", "postgresql://u:SECRETPW@db/app"):
        (home / "IDENTITY.md").write_text(
            f"---\nname: ada\nstore: {dsn}\n---\nYou are Ada.\n", encoding="utf-8"
        )
        with pytest.raises(HomeError, match="must not hold a password") as info:
            compose_soul(home)
        assert "SEC" not in str(info.value)
        assert "RETPW" not in str(info.value)
    assert UNREADABLE.startswith("the store address cannot be read")
