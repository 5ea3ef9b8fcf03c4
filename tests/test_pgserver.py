"""The test PostgreSQL server itself: password logins, no root, a restart on the same port."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg
import pytest
from _pgserver import PgServer


def test_a_password_login_runs_a_query(pg_server: PgServer) -> None:
    with psycopg.connect(pg_server.dsn(), password=pg_server.password) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_tcp_logins_need_the_password(pg_server: PgServer) -> None:
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(pg_server.dsn(), password="not-the-password", connect_timeout=5)


def test_pg_dsn_is_a_fresh_database_reached_through_pgpassword(pg_dsn: str) -> None:
    assert os.environ["PGPASSWORD"]
    assert ":" not in pg_dsn.split("@")[0].removeprefix("postgresql://")  # no password
    with psycopg.connect(pg_dsn) as conn:
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        assert tables.fetchone() == (0,)


def test_the_server_does_not_run_as_root(pg_server: PgServer) -> None:
    pid = pg_server.pid()
    assert pid is not None
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
    assert "0" not in uids, status


@pytest.mark.slow
def test_stop_then_start_serves_the_same_data_on_the_same_port(pg_server: PgServer) -> None:
    server = PgServer(pg_server.bindir)  # an instance of its own: the shared one keeps running
    try:
        server.start()
        port = server.port
        server.create_database("kept")
        server.stop()
        assert not server.running
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(server.dsn("kept"), password=server.password, connect_timeout=5)
        server.start()
        assert server.port == port
        with psycopg.connect(server.dsn("kept"), password=server.password) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("kept",)
        assert "database system is shut down" in server.log()
    finally:
        server.close()
    assert not server.root.exists()
