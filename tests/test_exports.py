"""The public surface: what `toolnexus` and `toolnexus.agents` export, and nothing stray."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import toolnexus
from toolnexus import agents, errors


@pytest.mark.parametrize("module", [toolnexus, agents, errors], ids=lambda m: m.__name__)
def test_all_is_sorted_and_every_name_resolves(module: object) -> None:
    names = module.__all__  # type: ignore[attr-defined]
    assert list(names) == sorted(names)
    for name in names:
        assert getattr(module, name) is not None, name


def test_the_public_surface_is_exactly_pinned() -> None:
    assert toolnexus.__all__ == [
        "Tool",
        "ToolError",
        "ToolResult",
        "agents",
        "define_tool",
        "errors",
    ]
    assert agents.__all__ == [
        "Agent",
        "Conversations",
        "Finding",
        "Home",
        "HomeError",
        "Scanner",
        "Session",
        "Soul",
        "compose_soul",
        "from_dir",
        "memory_tool",
        "recall_tool",
        "skill_tool",
        "watch_home",
    ]
    assert agents.HomeError is errors.HomeError


@pytest.mark.parametrize(
    ("module", "name"),
    [
        (m, n)
        for m in (toolnexus, agents, errors)
        for n in m.__all__
        if n not in ("agents", "errors")
    ],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_every_public_name_has_a_docstring(module: object, name: str) -> None:
    value = getattr(module, name)
    assert (value.__doc__ or "").strip(), f"{module.__name__}.{name} has no docstring"  # type: ignore[attr-defined]
    # Its own docstring, not one inherited from a base class.
    own = value.__dict__.get("__doc__") if isinstance(value, type) else value.__doc__
    assert (own or "").strip(), f"{module.__name__}.{name} inherits its docstring"  # type: ignore[attr-defined]


def test_memory_edit_kinds_are_a_closed_set() -> None:
    assert errors.MEMORY_EDIT_KINDS == (
        "invalid",
        "not_found",
        "ambiguous",
        "full",
        "rejected",
        "io",
        "cancelled",
        "internal",
    )
    with pytest.raises(ValueError, match="'typo' is not one of invalid, not_found"):
        errors.MemoryEditError("x", kind="typo")  # type: ignore[arg-type]


def test_unknown_agents_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        agents.nope  # noqa: B018


def test_every_error_derives_from_the_root() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.ToolnexusError)


def test_importing_the_package_stays_light() -> None:
    """`import toolnexus` must not pull in jinja2, asyncio, watchfiles or SDKs (CLI start-up)."""
    code = (
        "import sys, toolnexus\n"
        "heavy = [m for m in ('jinja2', 'asyncio', 'watchfiles', 'openai') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_every_module_imports_on_its_own() -> None:
    """Each module imports first in a fresh interpreter: no import order hides a cycle."""
    root = Path(toolnexus.__file__).parent
    names = sorted(
        "toolnexus." + ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for p in root.rglob("*.py")
        if p.name != "__main__.py"
    )
    assert "toolnexus.agents.soul" in names
    code = "import importlib, sys\nimportlib.import_module(sys.argv[1])\n"
    for name in names:
        result = subprocess.run(
            [sys.executable, "-c", code, name], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, f"{name}: {result.stderr}"


def test_the_package_is_marked_typed() -> None:
    """PEP 561: type checkers use toolnexus's annotations only with a py.typed marker."""
    assert (Path(toolnexus.__file__).parent / "py.typed").is_file()
