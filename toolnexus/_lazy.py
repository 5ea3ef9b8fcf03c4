"""Lazy re-exports: a public module's names are imported on first use.

Every public package re-exports names that live in its private modules. Loading
them lazily keeps `toolnexus --help` free of pydantic and a verb free of what it
does not use, and lets a private module import a sibling package's private
module without running that package's re-exports (which would import in a
circle).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    package: str, names: Mapping[str, str], *, modules: Mapping[str, str] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return `__getattr__` and `__dir__` for `package`, loading each name on first use.

    Args:
        package: the re-exporting module's `__name__`.
        names: each exported name and the module (relative to `package`) it lives in.
        modules: exported submodules, by name, and their module path.
    """
    namespace = sys.modules[package].__dict__
    submodules = dict(modules or {})

    def __getattr__(name: str) -> Any:
        if name in submodules:
            value = importlib.import_module(submodules[name], package)
        elif name in names:
            value = getattr(importlib.import_module(names[name], package), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names, *submodules})

    return __getattr__, __dir__
