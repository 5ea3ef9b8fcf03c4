"""The models a session talks to, where the persona side's users look for them.

The same names as `toolnexus.models` (the `Model` protocol, the conversation
types, `ScriptedModel`, `OpenAIModel`, `AnthropicModel`), re-exported.
"""

from __future__ import annotations

from ..models import (
    AnthropicModel,
    AssistantMessage,
    Done,
    Event,
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    OpenAIModel,
    ScriptedModel,
    TextDelta,
    ToolCall,
    ToolFinished,
    ToolResultMessage,
    ToolStarted,
    Turn,
    Usage,
    UsageReport,
    UserMessage,
    call,
)

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
