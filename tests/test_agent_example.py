"""The documented example runs as a standalone script: a persona remembers across sessions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = """\
import asyncio
import tempfile
from pathlib import Path

from toolnexus import agents
from toolnexus.agents.models import ScriptedModel, call


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "IDENTITY.md").write_text(
            "---\\nname: Ada\\n---\\nYou are Ada, a concise assistant.\\n", encoding="utf-8"
        )

        # A scripted model plays the LLM: first it saves a note, then it answers.
        model = ScriptedModel(
            [
                call("memory", action="add", target="user", text="prefers metric units"),
                "Noted: metric from now on.",
                lambda request: "Metric it is: 5 km."
                if "prefers metric units" in request.system
                else "5 kilometres, or about 3.1 miles.",
            ]
        )
        agent = agents.from_dir(home, model=model)
        print("tools:", [tool.name for tool in agent.uses.tools])

        first = agent.session()
        print("ada:", await first.send("Please use metric units from now on."))
        # The note is on disk now, but this session's system prompt is frozen.
        print("USER.md:", (home / "USER.md").read_text(encoding="utf-8").strip())
        print("in this session's prompt:", "prefers metric units" in first.system_prompt)
        print("stale:", first.stale)

        second = agent.session()  # a new session composes afresh and sees the note
        print("in the next session's prompt:", "prefers metric units" in second.system_prompt)
        print("ada:", await second.send("How long is a 5k run?"))


asyncio.run(main())
"""

OUTPUT = """\
tools: ['memory']
ada: Noted: metric from now on.
USER.md: - prefers metric units
in this session's prompt: False
stale: True
in the next session's prompt: True
ada: Metric it is: 5 km.
"""


def test_remember_example_runs_as_a_script(tmp_path: Path) -> None:
    script = tmp_path / "remember.py"
    script.write_text(EXAMPLE, encoding="utf-8")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
        check=False,
    )
    assert done.stderr == ""
    assert done.returncode == 0
    assert done.stdout == OUTPUT
