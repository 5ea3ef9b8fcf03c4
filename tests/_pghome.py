"""Homes pointed at a PostgreSQL store, shared by the store's test modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolnexus.memory import MemoryStore

CLI = [sys.executable, "-m", "toolnexus"]


def make_home(
    root: Path, dsn: str | None, *, name: str = "Ada", body: str = "You are Ada.", key: str = ""
) -> Path:
    """A home whose IDENTITY.md points at `dsn` (None: the folder)."""
    root.mkdir(parents=True)
    lines = [f"name: {name}"]
    if dsn is not None:
        lines.append(f"store: {dsn}")
    if key:
        lines.append(f"store_key: {key}")
    (root / "IDENTITY.md").write_text(
        "---\n" + "\n".join(lines) + f"\n---\n{body}\n", encoding="utf-8"
    )
    return root


def cli(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def memory(home: Path, target: str = "self") -> MemoryStore:
    return MemoryStore(home, target, limit=8000 if target == "self" else 4000)  # type: ignore[arg-type]
