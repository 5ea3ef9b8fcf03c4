"""Models: the one-method `Model` protocol, the conversation types, and the shipped models.

`ScriptedModel` replays planned turns (tests, tutorials); `OpenAIModel` talks to
any OpenAI-compatible endpoint and needs the `openai` extra only when built.
"""

from __future__ import annotations

from ._base import (
    AssistantMessage,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from .openai import OpenAIModel
from .scripted import ScriptedModel, Turn, call

__all__ = [
    "AssistantMessage",
    "Message",
    "Model",
    "ModelRequest",
    "ModelResponse",
    "OpenAIModel",
    "ScriptedModel",
    "ToolCall",
    "ToolResultMessage",
    "Turn",
    "Usage",
    "UserMessage",
    "call",
]
