"""The models a session talks to, where the persona side's users look for them.

The same names as `toolnexus.models` (the `Model` protocol, the conversation
types, `ScriptedModel`, `OpenAIModel`, `AnthropicModel`), re-exported.
"""

from __future__ import annotations

from ..models import *  # noqa: F403 - the same public names, by definition
from ..models import __all__ as __all__
