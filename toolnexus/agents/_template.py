"""Soul templates: compile and render with the one sandboxed jinja2 environment (pure, no I/O).

A home's own `soul.md.j2` may come from anywhere (a persona shared online), so
every template, the package's default too, renders sandboxed: `{{
config.__class__.__mro__ }}` and friends cannot reach Python. Values go in as
data, never as template source, so a memory entry `{{ 7*7 }}` shows literally.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..errors import HomeError

__all__ = ["DEFAULT_TEMPLATE", "compile_template", "default_template", "render"]

#: How problems name the package's own template (a home's is named by its path).
DEFAULT_TEMPLATE = "default soul template"


def _oneline(value: object) -> str:
    """Fold whitespace and newlines to single spaces: a value cannot start a new section."""
    return " ".join(str(value).split())


_ENV = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,  # Markdown, not HTML
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,
)
_ENV.filters["oneline"] = _oneline


@cache
def default_template() -> jinja2.Template:
    """The package's soul template (`templates/soul.md.j2`), compiled once per process."""
    source = resources.files(__package__).joinpath("templates").joinpath("soul.md.j2")
    return _ENV.from_string(source.read_text(encoding="utf-8"))


def compile_template(text: str, path: Path) -> jinja2.Template | str:
    """Compile a home's template, or return the problem naming its file and line."""
    try:
        return _ENV.from_string(text)
    except jinja2.TemplateSyntaxError as exc:
        return f"{path}:{exc.lineno}: template syntax error: {exc.message}"


def render(template: jinja2.Template, context: dict[str, Any], *, where: str) -> str:
    """Render `template` with `context` (data only).

    Args:
        where: the template's name in problems: its path, or `DEFAULT_TEMPLATE`.

    Raises:
        HomeError: naming `where`, the template's line and what went wrong.
    """
    try:
        return template.render(context)
    except Exception as exc:
        line = _template_line(exc.__traceback__)
        at = f"{where}:{line}" if line else where
        message = exc.message if isinstance(exc, jinja2.TemplateError) else None
        raise HomeError(
            f"{at}: template error: {message or f'{type(exc).__name__}: {exc}'}"
        ) from exc


def _template_line(tb: TracebackType | None) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
