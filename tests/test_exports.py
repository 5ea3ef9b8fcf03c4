"""The public surface: what `toolnexus` and `toolnexus.agents` export, and nothing stray."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import toolnexus
from toolnexus import agents, errors

ROOT = Path(__file__).resolve().parent.parent

#: Every public module: where a user imports from. Everything else starts with `_`.
PUBLIC = [
    "toolnexus",
    "toolnexus.agents",
    "toolnexus.agents.models",
    "toolnexus.cli",
    "toolnexus.conversations",
    "toolnexus.errors",
    "toolnexus.home",
    "toolnexus.mcp",
    "toolnexus.memory",
    "toolnexus.models",
    "toolnexus.scanner",
    "toolnexus.soul",
    "toolnexus.store",
    "toolnexus.tools",
]
PUBLIC_MODULES = [importlib.import_module(name) for name in PUBLIC]
#: Folders that only group private modules: they export nothing.
GROUPING = ["toolnexus.store.folder", "toolnexus.store.postgres"]


def test_the_public_modules_are_the_modules_without_an_underscore() -> None:
    package = Path(toolnexus.__file__).parent
    found = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        name = ".".join(parts).removesuffix(".__init__")
        if not any(part.startswith("_") for part in name.split(".")):
            found.add(name)
    assert sorted(found) == sorted(PUBLIC + GROUPING)
    for name in GROUPING:
        module = importlib.import_module(name)
        assert not hasattr(module, "__all__")
        assert not [n for n in vars(module) if not n.startswith("_") and n != "annotations"]


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda m: m.__name__)
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
        "FolderStore",
        "Home",
        "HomeError",
        "PgStore",
        "Review",
        "Scanner",
        "Session",
        "SkillStore",
        "Soul",
        "Store",
        "Uses",
        "compose_soul",
        "from_dir",
        "memory_tool",
        "recall_tool",
        "skill_manage_tool",
        "skill_tool",
        "watch_home",
    ]
    assert agents.HomeError is errors.HomeError


@pytest.mark.parametrize(
    ("module", "name"),
    [
        (m, n)
        for m in PUBLIC_MODULES
        for n in m.__all__
        if not isinstance(getattr(m, n), (ModuleType, str, int, tuple, frozenset))
        and getattr(getattr(m, n), "__module__", "").startswith("toolnexus")
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
        "exists",
    )
    with pytest.raises(ValueError, match="'typo' is not one of invalid, not_found"):
        errors.MemoryEditError("x", kind="typo")  # type: ignore[arg-type]


def test_unknown_agents_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        agents.nope  # noqa: B018


def test_every_error_derives_from_the_root() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.ToolnexusError)


@pytest.mark.parametrize("module", PUBLIC_MODULES, ids=lambda m: m.__name__)
def test_every_public_exception_is_in_the_tree(module: ModuleType) -> None:
    for name in module.__all__:
        value = getattr(module, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert issubclass(value, errors.ToolnexusError), f"{module.__name__}.{name}"


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_documented_object_is_public() -> None:
    """Each `::: path` the API pages render is a public module's name, in its `__all__`."""
    documented = [
        (doc.name, match)
        for doc in _docs()
        for match in re.findall(r"^::: ([\w.]+)$", doc.read_text(encoding="utf-8"), re.M)
    ]
    assert len(documented) > 40
    for doc, dotted in documented:
        if dotted in PUBLIC:
            continue
        module, _, name = dotted.rpartition(".")
        assert module in PUBLIC, f"{doc}: {dotted} is not in a public module"
        assert name in importlib.import_module(module).__all__, f"{doc}: {dotted}"


def test_the_docs_name_no_private_module() -> None:
    private = re.compile(r"\btoolnexus(?:\.\w+)*\._\w+")
    found = [
        f"{doc.relative_to(ROOT)}: {match}"
        for doc in _docs()
        for match in private.findall(doc.read_text(encoding="utf-8"))
        if not match.endswith(("__version__", "__all__"))
    ]
    assert not found, found


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
    assert "toolnexus.soul" in names
    code = "import importlib, sys\nimportlib.import_module(sys.argv[1])\n"
    for name in names:
        result = subprocess.run(
            [sys.executable, "-c", code, name], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, f"{name}: {result.stderr}"


def test_the_package_is_marked_typed() -> None:
    """PEP 561: type checkers use toolnexus's annotations only with a py.typed marker."""
    assert (Path(toolnexus.__file__).parent / "py.typed").is_file()
