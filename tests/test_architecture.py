"""The layers of docs/architecture.md hold: imports point to lower layers, never up or round.

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
MAX_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layers() -> dict[str, int]:
    """Module -> layer number, from the table rows of docs/architecture.md."""
    table: dict[str, int] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        row = re.match(r"^\|\s*(\d+)\s*\|\s*`([\w.]+)`\s*\|", line)
        if row:
            table[row.group(2)] = int(row.group(1))
    return table


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
    # cli.py imports every verb's needs inside the verb: those arrows count too.
    assert "toolnexus.agents.soul" in GRAPH["toolnexus.cli"]
    assert "toolnexus.agents._files" in GRAPH["toolnexus.agents.soul"]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_over_the_size_limit(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it"
