"""docs/architecture.md holds: packages import only what their row allows, modules only
lower layers, nothing in a circle.

The import graph is built from the source (module-level and function-level
imports alike; `if TYPE_CHECKING:` blocks aside), so no import order or lazy
import can hide an arrow. Every module of the package must sit in the table.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "toolnexus"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: A folder holding more modules than this no longer shows one concept.
MAX_MODULES_PER_FOLDER = 15


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layers() -> dict[str, int]:
    """Module -> layer number, from the modules table of docs/architecture.md (file paths
    inside the package folder)."""
    table: dict[str, int] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        row = re.match(r"^\|\s*(\d+)\s*\|\s*`([\w/]+\.py)`\s*\|", line)
        if row:
            table[module_name(PACKAGE / row.group(2))] = int(row.group(1))
    return table


def allowed_imports() -> dict[str, set[str]]:
    """Package -> the packages it may import, from the packages table of docs/architecture.md."""
    table: dict[str, set[str]] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        row = re.match(r"^\|\s*`([\w.]+)`\s*\|[^|]*\|([^|]*)\|\s*$", line)
        if row:
            table[row.group(1)] = set(re.findall(r"`([\w.]+)`", row.group(2)))
    return table


def package_of(name: str) -> str:
    """The package a module belongs to: its folder under toolnexus/ (the core for the top
    level), `soul` for toolnexus/soul.py, and `cli` for `python -m toolnexus`."""
    if name == "toolnexus.__main__":
        return "cli"
    if name == "toolnexus.soul":
        return "soul"
    folder = MODULES[name].parent.relative_to(PACKAGE).parts
    return ".".join(folder) or "toolnexus"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(importer: str, node: ast.ImportFrom) -> list[str]:
    """The package modules an `from ... import ...` statement loads."""
    if node.level:
        package = (
            importer if MODULES[importer].name == "__init__.py" else importer.rpartition(".")[0]
        )
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    found = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
    if len(found) < len(node.names) and base in MODULES:
        found.append(base)
    return found


def imports_of(name: str) -> set[str]:
    """Every package module `name` imports, at any depth of its code."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            found.update(_resolve(name, node))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def test_every_module_has_a_layer_and_every_layer_a_module() -> None:
    table = layers()
    assert sorted(MODULES) == sorted(table), "docs/architecture.md and the package differ"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_to_lower_layers(name: str) -> None:
    table = layers()
    up = sorted(dep for dep in GRAPH[name] if table[dep] > table[name])
    assert not up, f"{name} (layer {table[name]}) imports from a higher layer: {up}"


def test_no_import_cycles() -> None:
    done: set[str] = set()

    def walk(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            cycle = (*path[path.index(name) :], name)
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if name in done:
            return
        for dep in sorted(GRAPH[name]):
            walk(dep, (*path, name))
        done.add(name)

    for name in sorted(GRAPH):
        walk(name, ())


def test_the_graph_sees_function_level_imports() -> None:
    # cli/_main.py imports every verb's needs inside the verb: those arrows count too.
    assert "toolnexus.soul" in GRAPH["toolnexus.cli._main"]
    assert "toolnexus.home._door" in GRAPH["toolnexus.soul"]


def test_every_package_has_a_row_and_every_row_a_package() -> None:
    packages = {package_of(name) for name in MODULES}
    assert sorted(packages) == sorted(allowed_imports())


@pytest.mark.parametrize("name", sorted(MODULES))
def test_packages_import_only_what_their_row_allows(name: str) -> None:
    package = package_of(name)
    may = allowed_imports()[package]
    outside = sorted(
        f"{dep} ({package_of(dep)})"
        for dep in GRAPH[name]
        if package_of(dep) != package and package_of(dep) not in may
    )
    assert not outside, f"{name} ({package}) may not import {outside}"


def test_modules_import_modules_not_the_re_exports() -> None:
    """Inside the package, code imports the module that defines a name, never a package's
    lazy `__init__` (which would hide the arrow and could import in a circle). The root's
    `__version__` is a plain value, read by `--version` and the MCP handshake."""
    lazy = {
        name
        for name in MODULES
        if " = exports(" in MODULES[name].read_text(encoding="utf-8") and name != "toolnexus"
    }
    assert "toolnexus.agents" in lazy
    offenders = sorted(f"{name} -> {dep}" for name in MODULES for dep in GRAPH[name] if dep in lazy)
    assert not offenders, offenders


def test_the_tree_shows_its_concepts() -> None:
    """At least six subpackages, and no folder so full that it no longer shows one concept."""
    folders: dict[Path, int] = {}
    for path in MODULES.values():
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
    subpackages = [p for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
    assert len(subpackages) >= 6, subpackages
    crowded = {
        str(f.relative_to(ROOT)): n for f, n in folders.items() if n > MAX_MODULES_PER_FOLDER
    }
    assert not crowded, crowded


def test_only_the_store_names_postgresql() -> None:
    """Everything above the store holds a `Store` and never asks which: no module outside
    `toolnexus/store/` imports the PostgreSQL store or psycopg (a lazy re-export of the
    public `PgStore` by name aside)."""
    store = PACKAGE / "store"
    offenders = sorted(
        f"{name} -> {dep}"
        for name in MODULES
        if store not in MODULES[name].parents
        for dep in GRAPH[name]
        if dep.startswith("toolnexus.store.postgres")
    )
    assert not offenders, offenders
    for name, path in MODULES.items():
        if store in path.parents:
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) psycopg", text, re.M), name
        assert "isinstance(" not in text or "PgStore" not in text, name
