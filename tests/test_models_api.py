"""The public surface of `toolnexus.agents.models`."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from toolnexus import models


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert list(models.__all__) == sorted(models.__all__)
    for name in models.__all__:
        assert getattr(models, name) is not None, name


def test_importing_models_does_not_import_the_openai_sdk() -> None:
    code = "import sys, toolnexus.agents.models\nprint('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_messages_are_frozen() -> None:
    message = models.UserMessage("hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.text = "changed"  # type: ignore[misc]


def test_tool_calls_given_as_a_list_are_stored_as_a_tuple() -> None:
    calls = [models.ToolCall("t")]
    message = models.AssistantMessage("a", tool_calls=calls)  # type: ignore[arg-type]
    assert message.tool_calls == (models.ToolCall("t"),)
