"""Models: the one-method `Model` protocol, the conversation types, and the shipped models.

`ScriptedModel` replays planned turns (tests, tutorials); `OpenAIModel` talks to
any OpenAI-compatible endpoint and `AnthropicModel` to the Anthropic Messages API,
each needing its SDK (the `openai` / `anthropic` extra) only when built.
"""

from __future__ import annotations

from ._anthropic import AnthropicModel
from ._base import (
    AssistantMessage,
    Done,
    Event,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCall,
    ToolFinished,
    ToolResultMessage,
    ToolStarted,
    Usage,
    UsageReport,
    UserMessage,
)
from ._openai import OpenAIModel
from ._scripted import ScriptedModel, Turn, call

__all__ = [
    "AnthropicModel",
    "AssistantMessage",
    "Done",
    "Event",
    "Message",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "ScriptedModel",
    "TextDelta",
    "ToolCall",
    "ToolFinished",
    "ToolResultMessage",
    "ToolStarted",
    "Turn",
    "Usage",
    "UsageReport",
    "UserMessage",
    "call",
]
