"""`toolnexus serve`: a real server process, driven by the official MCP SDK's client.

Over stdio (the client starts the server) and over streamable HTTP on
127.0.0.1 (one server for the module). One connection is one session: the
`soul` prompt is frozen for it, a memory write lands on disk at once and shows
in the next connection's prompt. Resources are read live, and a subscriber
hears of a change.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from _mcp_wire import HANDSHAKE, raw_stdio
from _waits import DEADLINE

mcp = pytest.importorskip("mcp")

import httpx2  # noqa: E402  (installed with the mcp extra)
import mcp.types as types  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from toolnexus.agents import (  # noqa: E402
    Conversations,
    Home,
    compose_soul,
)

pytestmark = [
    pytest.mark.slow,
    # The 2025-era subscribe call is marked deprecated by the SDK; hosts use it today.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

TOKEN = "s3cret-token"


def serve_cmd(home: Path | str, *options: str) -> list[str]:
    """The command line that serves `home`, as a client or a test starts it."""
    return [sys.executable, "-m", "toolnexus", "serve", str(home), *options]


def make_home(path: Path, name: str = "Ada", *, read_only: bool = False) -> Path:
    path.mkdir(parents=True)
    extra = "read_only: true\n" if read_only else ""
    (path / "IDENTITY.md").write_text(
        f"---\nname: {name}\n{extra}---\nYou are {name}, a careful assistant.\n", encoding="utf-8"
    )
    (path / "MEMORY.md").write_text("- prefers metric units\n", encoding="utf-8")
    skill = path / "skills" / "deploy"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: How to deploy the service safely.\n---\n"
        "Run the deploy script, then watch the dashboards for ten minutes.\n",
        encoding="utf-8",
    )
    (skill / "references" / "guide.md").write_text("The rollback guide.\n", encoding="utf-8")
    return path


class Heard:
    """Notifications a client received."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    async def __call__(self, message: Any) -> None:
        self.items.append(message)

    async def wait_for(self, kind: type, timeout: float = 15) -> Any:
        with anyio.fail_after(timeout):
            while True:
                for item in self.items:
                    if isinstance(item, kind):
                        self.items.remove(item)
                        return item
                await anyio.sleep(0.05)


@asynccontextmanager
async def over_stdio(
    home: Path, heard: Heard | None = None, *, trust: bool = True
) -> AsyncIterator[Client]:
    """A client of `home` served over stdio; `trust`: the person's own client
    (`--trust-client`), whose memory writes are applied, not held for review."""
    command, *args = serve_cmd(home, *(["--trust-client"] if trust else []))
    params = StdioServerParameters(command=command, args=args)
    async with Client(params, mode="legacy", message_handler=heard) as client:
        yield client


@asynccontextmanager
async def over_http(url: str, heard: Heard | None = None) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy", message_handler=heard) as client:
            yield client


async def soul_of(client: Client) -> str:
    prompt = await client.get_prompt("soul")
    [message] = prompt.messages
    assert isinstance(message.content, types.TextContent)
    return message.content.text


async def call(client: Client, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(name, args)
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return bool(result.is_error), content.text


async def read(client: Client, uri: str) -> str:
    [content] = (await client.read_resource(uri)).contents
    assert isinstance(content, types.TextResourceContents)
    return content.text


async def watcher_ready(client: Client, home: Path, heard: Heard) -> None:
    """Return once the server's file watcher reports changes: touch IDENTITY.md (its text
    stays as it is) until a subscriber hears of it, then forget what was heard."""
    uri = "toolnexus://ada/IDENTITY.md"
    await client.subscribe_resource(uri)
    identity = home / "IDENTITY.md"
    with anyio.fail_after(DEADLINE):
        while True:
            os.utime(identity)
            with anyio.move_on_after(0.5):
                await heard.wait_for(types.ResourceUpdatedNotification)
                break
    await client.unsubscribe_resource(uri)
    # Late echoes of the touches are heard by no one now; what was heard is dropped.
    heard.items.clear()


# -- stdio ----------------------------------------------------------------------------------


async def test_stdio_prompt_is_the_soul_and_frozen_for_the_connection(tmp_path: Path) -> None:
    home = make_home(tmp_path / "ada")
    with anyio.fail_after(60):
        async with over_stdio(home) as client:
            first = await soul_of(client)
            assert first == compose_soul(home).text
            assert [p.name for p in (await client.list_prompts()).prompts] == ["soul"]
            assert {t.name for t in (await client.list_tools()).tools} == {"memory", "skill"}
            add = {"action": "add", "text": "drinks green tea"}
            error, text = await call(client, "memory", add)
            assert not error, text
            assert "loads next session" in text
            assert "- drinks green tea" in (home / "MEMORY.md").read_text(encoding="utf-8")
            assert await soul_of(client) == first  # byte for byte: the same session
            # Its tool specs are those of the session's tools, schema and all.
            memory = next(t for t in (await client.list_tools()).tools if t.name == "memory")
            assert memory.input_schema["properties"]["action"]["enum"] == [
                "add",
                "replace",
                "remove",
            ]
        async with over_stdio(home) as client:
            again = await soul_of(client)
            assert again != first
            assert "drinks green tea" in again
            assert again == compose_soul(home).text
            # The history has a change now, so recall joins the tools, as from_dir does.
            assert "recall" in {t.name for t in (await client.list_tools()).tools}
    added, found = Home(home).history()  # newest first: the add, then the file as found
    assert (added.action, found.action) == ("add", "outside-edit")
    assert added.source.startswith("mcp session=")
    assert Conversations(home).list() == []  # serve saves no transcript


async def test_stdio_resources_are_read_live_and_a_subscriber_hears_a_change(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path / "ada")
    heard = Heard()
    with anyio.fail_after(60):
        async with over_stdio(home, heard) as client:
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert listed == [
                "toolnexus://ada/IDENTITY.md",
                "toolnexus://ada/MEMORY.md",
                "toolnexus://ada/USER.md",
                "toolnexus://ada/skills/deploy/SKILL.md",
            ]
            [template] = (await client.list_resource_templates()).resource_templates
            assert template.uri_template == "toolnexus://ada/skills/{skill}/{+path}"
            assert await read(client, "toolnexus://ada/USER.md") == ""  # missing means empty
            await watcher_ready(client, home, heard)
            await client.subscribe_resource("toolnexus://ada/MEMORY.md")
            with (home / "MEMORY.md").open("a", encoding="utf-8") as f:
                f.write("- edited by hand\n")
            updated = await heard.wait_for(types.ResourceUpdatedNotification)
            assert updated.params.uri == "toolnexus://ada/MEMORY.md"
            assert (await read(client, "toolnexus://ada/MEMORY.md")).endswith("- edited by hand\n")
            # A new skill changes the list: every client hears it.
            new = home / "skills" / "triage"
            new.mkdir()
            (new / "SKILL.md").write_text(
                "---\nname: triage\ndescription: Sort incoming issues.\n---\nSort them.\n",
                encoding="utf-8",
            )
            await heard.wait_for(types.ResourceListChangedNotification)
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert "toolnexus://ada/skills/triage/SKILL.md" in listed
            # ... but this connection's skill tool keeps the skills it began with.
            error, text = await call(client, "skill", {"name": "triage"})
            assert error, text


async def test_stdio_skill_tool_and_skill_files(tmp_path: Path) -> None:
    home = make_home(tmp_path / "ada")
    with anyio.fail_after(60):
        async with over_stdio(home) as client:
            error, text = await call(client, "skill", {"name": "deploy"})
            assert not error, text
            assert "watch the dashboards for ten minutes" in text
            error, text = await call(client, "skill", {"name": "nope"})
            assert error
            uri = "toolnexus://ada/skills/deploy/references/guide.md"
            assert await read(client, uri) == "The rollback guide.\n"
            skill_md = await read(client, "toolnexus://ada/skills/deploy/SKILL.md")
            assert skill_md.startswith("---\nname: deploy\n")
            for bad in (
                "toolnexus://ada/skills/deploy/../../IDENTITY.md",
                "toolnexus://ada/skills/deploy/.hidden",
                "toolnexus://ada/skills/ghost/SKILL.md",
                "toolnexus://ada/.toolnexus/state.db",
                "toolnexus://bob/MEMORY.md",
            ):
                with pytest.raises(mcp.MCPError):
                    await read(client, bad)
            # Invalid arguments are a tool error the model can read, not a protocol error.
            error, text = await call(client, "memory", {"action": "nope", "text": "x"})
            assert error
            assert "action" in text


async def test_two_clients_adding_at_once_lose_nothing(tmp_path: Path) -> None:
    home = make_home(tmp_path / "ada")

    async def adds(tag: str) -> None:
        async with over_stdio(home) as client:
            for k in range(12):
                error, text = await call(client, "memory", {"action": "add", "text": f"{tag} {k}"})
                assert not error, text

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(adds, "alpha note")
            tasks.start_soon(adds, "bravo note")
    entries = Home(home).memory().entries
    for tag in ("alpha note", "bravo note"):
        assert [e for e in entries if e.startswith(tag)] == [f"{tag} {k}" for k in range(12)]
    assert [c.action for c in Home(home).history()].count("add") == 24


async def test_only_memory_skill_and_recall_are_served(tmp_path: Path) -> None:
    home = make_home(tmp_path / "ada")
    identity = (home / "IDENTITY.md").read_text(encoding="utf-8")
    (home / "IDENTITY.md").write_text(
        identity.replace("name: Ada\n", "name: Ada\ntools: [now, skill]\n"), encoding="utf-8"
    )
    with anyio.fail_after(60):
        async with over_stdio(home) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["skill", "memory"]
            with pytest.raises(mcp.MCPError) as info:  # JSON-RPC -32602, as the spec asks
                await client.call_tool("now", {})
            assert info.value.error.code == types.INVALID_PARAMS
            assert "no tool 'now'" in info.value.error.message


async def test_skill_manage_through_serve_is_held_for_a_client_and_lists_a_new_skill(
    tmp_path: Path,
) -> None:
    home = make_home(tmp_path / "ada")
    identity = (home / "IDENTITY.md").read_text(encoding="utf-8")
    (home / "IDENTITY.md").write_text(
        identity.replace("name: Ada\n", "name: Ada\ntools: [skill_manage]\n"), encoding="utf-8"
    )
    create = {
        "action": "create",
        "name": "release-checklist",
        "description": "The checklist before every release.",
        "body": "1. Run the tests.\n2. Tag the release.",
    }
    uri = "toolnexus://ada/skills/release-checklist/SKILL.md"
    with anyio.fail_after(90):
        # A client is untrusted: its skill write waits for a person.
        async with over_stdio(home, trust=False) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["skill", "memory", "skill_manage"]
            error, text = await call(client, "skill_manage", create)
            assert not error
            assert text.startswith("held for review (#1): text from mcp-client")
        assert not (home / "skills" / "release-checklist").exists()
        # The person's own client (--trust-client): applied, and every client hears the list.
        heard = Heard()
        async with over_stdio(home, heard) as client:
            soul = await soul_of(client)
            await watcher_ready(client, home, heard)
            error, text = await call(client, "skill_manage", create)
            assert not error, text
            assert text.startswith("created skill 'release-checklist'")
            await heard.wait_for(types.ResourceListChangedNotification)
            assert uri in [r.uri for r in (await client.list_resources()).resources]
            patch = {"text": "2. Tag the release.", "with": "2. Tag it: `git tag -s`."}
            error, text = await call(
                client, "skill_manage", {"action": "patch", "name": "release-checklist", **patch}
            )
            assert not error, text
            assert (await read(client, uri)).endswith("2. Tag it: `git tag -s`.\n")
            error, text = await call(
                client,
                "skill_manage",
                {
                    "action": "write_file",
                    "name": "release-checklist",
                    "path": "references/rollback.md",
                    "content": "Roll back.",
                },
            )
            assert not error, text
            rollback = "toolnexus://ada/skills/release-checklist/references/rollback.md"
            assert await read(client, rollback) == "Roll back."
            # This connection keeps its soul and its skill list.
            assert await soul_of(client) == soul
            error, _ = await call(client, "skill", {"name": "release-checklist"})
            assert error
        async with over_stdio(home) as client:
            assert "- release-checklist: The checklist" in await soul_of(client)
            error, text = await call(client, "skill", {"name": "release-checklist"})
            assert not error
            assert "2. Tag it: `git tag -s`." in text


async def test_errors_name_files_by_the_home_never_by_this_machine(tmp_path: Path) -> None:
    home = make_home(tmp_path / "ada")
    outside = tmp_path / "elsewhere" / "notes.md"
    outside.parent.mkdir()
    outside.write_text("- kept elsewhere\n", encoding="utf-8")
    async with over_stdio(home) as client:
        (home / "USER.md").symlink_to(outside)  # after the start, which would refuse it
        error, text = await call(client, "memory", {"action": "add", "target": "user", "text": "x"})
        with pytest.raises(mcp.MCPError) as info:
            await read(client, "toolnexus://ada/USER.md")
    assert error
    for said in (text, str(info.value)):
        assert "USER.md" in said
        assert str(tmp_path) not in said
        assert "elsewhere" not in said
    assert "is a link out of the home" in text


async def test_a_read_only_home_serves_no_memory_tool(tmp_path: Path) -> None:
    home = make_home(tmp_path / "ada", read_only=True)
    with anyio.fail_after(60):
        async with over_stdio(home) as client:
            assert {t.name for t in (await client.list_tools()).tools} == {"skill"}
            with pytest.raises(mcp.MCPError) as info:
                await client.call_tool("memory", {"action": "add", "text": "x"})
            assert info.value.error.code == types.INVALID_PARAMS
            assert "no tool 'memory'" in info.value.error.message


def test_stdout_carries_protocol_messages_only(tmp_path: Path) -> None:
    home = make_home(tmp_path / "ada")
    before = compose_soul(home).text
    lines = [
        *HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "soul"}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "memory", "arguments": {"action": "add", "text": "raw note"}},
        },
    ]
    with raw_stdio(home, lines, "--trust-client") as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        replies = []
        while {r.get("id") for r in replies} < {1, 2, 3}:
            line = proc.stdout.readline()
            assert line, "the server ended early"
            replies.append(json.loads(line))  # every line of stdout is a protocol message
        proc.stdin.close()  # the client leaves: the server ends
        replies += [json.loads(line) for line in proc.stdout.read().splitlines()]
        assert proc.wait(timeout=30) == 0
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    by_id = {reply["id"]: reply for reply in replies if "id" in reply}
    # The session began before the add (the add needs it): its soul is the home's before.
    assert by_id[2]["result"]["messages"][0]["content"]["text"] == before
    assert by_id[3]["result"]["isError"] is False
    assert "- raw note" in (home / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        pytest.param(["{home}/missing"], 1, "no such directory", id="no-home"),
        pytest.param(["{bad}"], 1, "IDENTITY.md", id="bad-identity"),
        pytest.param(
            ["{home}", "--transport", "http", "--host", "0.0.0.0"],
            2,
            "needs a bearer token",
            id="no-token-off-loopback",
        ),
        pytest.param(
            ["{home}", "--port", "9000"], 2, "only with --transport http", id="stdio-port"
        ),
        pytest.param(
            ["{home}", "--transport", "http", "--port", "70000"], 2, "is not a port", id="port"
        ),
        pytest.param(
            ["{home}", "--transport", "http", "--token-file", "{home}/nope"],
            2,
            "cannot be read (No such file or directory)",
            id="token-file-missing",
        ),
        pytest.param(
            ["{home}", "--transport", "http", "--token-file", "{home}/IDENTITY.md", "--token", "t"],
            2,
            "give one of them",
            id="token-twice",
        ),
        pytest.param(
            ["{home}", "--token-file", "{home}/IDENTITY.md"],
            2,
            "--token-file: only with --transport http",
            id="stdio-token-file",
        ),
    ],
)
def test_a_bad_start_is_one_line_on_stderr(
    tmp_path: Path, args: list[str], code: int, says: str
) -> None:
    home = make_home(tmp_path / "ada")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "IDENTITY.md").write_text("---\nname: [unclosed\n---\nx\n", encoding="utf-8")
    argv = [a.format(home=home, bad=bad) for a in args]
    env = {k: v for k, v in os.environ.items() if k != "TOOLNEXUS_SERVE_TOKEN"}
    done = subprocess.run(
        serve_cmd(*argv),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert done.returncode == code, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("toolnexus serve")
    assert says in line


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    home = make_home(tmp_path / "ada")
    empty = tmp_path / "token"
    empty.write_text("\n\n", encoding="utf-8")
    done = subprocess.run(
        serve_cmd(home, "--transport", "http", "--port", "0", "--token-file", str(empty)),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.strip().endswith("holds no token (its first line is empty)")


@pytest.mark.parametrize("how", ["--token", "--token-file"])
def test_a_token_others_can_see_is_warned_about_and_still_served(tmp_path: Path, how: str) -> None:
    home = make_home(tmp_path / "ada")
    shared = tmp_path / "token"
    shared.write_text(TOKEN, encoding="utf-8")
    shared.chmod(0o644)
    value = TOKEN if how == "--token" else str(shared)
    proc = subprocess.Popen(
        serve_cmd(home, "--transport", "http", "--port", "0", how, value),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        warning, serving = proc.stderr.readline(), proc.stderr.readline()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    assert warning.startswith("toolnexus serve: warning: ")
    expected = "process list" if how == "--token" else "can be read by other users"
    assert expected in warning
    assert " at http://127.0.0.1:" in serving
    assert "bearer token required" in serving
    assert TOKEN not in warning + serving


# -- streamable HTTP on 127.0.0.1 ------------------------------------------------------------


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One HTTP server for the module, on a free loopback port, with a bearer token."""
    home = make_home(tmp_path_factory.mktemp("serve") / "ada")
    token_file = home.parent / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    proc = subprocess.Popen(
        serve_cmd(
            home,
            "--transport",
            "http",
            "--port",
            "0",
            "--token-file",
            str(token_file),
            "--trust-client",
        ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert " at http://127.0.0.1:" in line, line
    url = line.split(" at ", 1)[1].split()[0]
    try:
        yield url, home
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert out == ""  # nothing on stdout, ever


async def test_http_prompt_frozen_per_connection_and_new_one_sees_the_write(
    http_server: tuple[str, Path],
) -> None:
    url, home = http_server
    with anyio.fail_after(60):
        async with over_http(url) as first, over_http(url) as other:
            before = await soul_of(first)
            assert before == compose_soul(home).text
            error, text = await call(first, "memory", {"action": "add", "text": "http tea note"})
            assert not error, text
            assert "http tea note" in (home / "MEMORY.md").read_text(encoding="utf-8")
            assert await soul_of(first) == before
            assert "http tea note" not in await soul_of(other)  # began before the write
        async with over_http(url) as later:
            assert "http tea note" in await soul_of(later)
            assert await read(later, "toolnexus://ada/MEMORY.md") == (home / "MEMORY.md").read_text(
                encoding="utf-8"
            )


async def test_http_subscriber_hears_a_change(http_server: tuple[str, Path]) -> None:
    url, home = http_server
    heard, deaf, seen = Heard(), Heard(), Heard()
    with anyio.fail_after(60):
        async with (
            over_http(url, heard) as client,
            over_http(url, deaf) as other,
            over_http(url, seen) as witness,
        ):
            await watcher_ready(client, home, heard)
            await client.subscribe_resource("toolnexus://ada/USER.md")
            await witness.subscribe_resource("toolnexus://ada/USER.md")
            await other.list_tools()  # connected, but subscribed to nothing
            error, text = await call(
                client, "memory", {"action": "add", "target": "user", "text": "works nights"}
            )
            assert not error, text
            updated = await heard.wait_for(types.ResourceUpdatedNotification)
            assert updated.params.uri == "toolnexus://ada/USER.md"
            assert "works nights" in await read(client, "toolnexus://ada/USER.md")
            await seen.wait_for(types.ResourceUpdatedNotification)
            await client.unsubscribe_resource("toolnexus://ada/USER.md")
            error, text = await call(
                client, "memory", {"action": "add", "target": "user", "text": "likes quiet"}
            )
            assert not error, text
            # The witness, still subscribed, hears this change: by then the server has
            # told everyone it tells; one more round trip each, and nothing came.
            await seen.wait_for(types.ResourceUpdatedNotification)
            await client.list_tools()
            await other.list_tools()
            for ears in (heard, deaf):
                assert not [
                    n for n in ears.items if isinstance(n, types.ResourceUpdatedNotification)
                ]


def post(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """POST an empty JSON object; the status, headers and body, whatever the status."""
    request = urllib.request.Request(url, data=b"{}", method="POST")
    for name, value in {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **headers,
    }.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, dict(exc.headers), exc.read()


def test_http_checks_the_host_a_request_names(http_server: tuple[str, Path]) -> None:
    url, _ = http_server
    auth = {"Authorization": f"Bearer {TOKEN}"}
    # A web page reaching the server through a DNS name that resolves to 127.0.0.1:
    status, _, _ = post(url, {**auth, "Host": "attacker.example"})
    assert status == 421
    status, _, _ = post(url, {**auth, "Origin": "http://attacker.example"})
    assert status == 403
    # The scheme's case does not matter; the request gets past the token.
    status, _, _ = post(url, {"Authorization": f"bearer {TOKEN}"})
    assert status not in (401, 403, 421)


def test_the_rebinding_guard_names_the_address_served() -> None:
    from toolnexus.mcp._serve import _rebinding_guard

    for host, name in [
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.2", "127.0.0.2"),
        ("::1", "[::1]"),
        ("0:0:0:0:0:0:0:1", "[::1]"),
    ]:
        guard = _rebinding_guard(host)
        assert guard.enable_dns_rebinding_protection
        assert f"{name}:*" in guard.allowed_hosts
        assert f"http://{name}:*" in guard.allowed_origins
        assert "attacker.example:*" not in guard.allowed_hosts


@pytest.mark.parametrize(
    ("options", "says"),
    [
        pytest.param({"transport": "HTTP", "host": "0.0.0.0"}, "transport", id="transport"),
        pytest.param({"transport": "http", "host": "0.0.0.0"}, "bearer token", id="no-token"),
        pytest.param({"transport": "http", "host": "10.1.2.3"}, "bearer token", id="lan"),
        pytest.param({"transport": "http", "token": "two words"}, "token", id="token-space"),
        pytest.param({"transport": "http", "token": "tok\r"}, "token", id="token-cr"),
    ],
)
def test_serve_refuses_options_before_serving(
    tmp_path: Path, options: dict[str, Any], says: str
) -> None:
    from toolnexus.errors import ArgumentError
    from toolnexus.mcp import serve

    home = make_home(tmp_path / "ada")
    with pytest.raises(ArgumentError, match=says):
        serve(home, **options)


async def test_a_watcher_that_cannot_run_turns_notifications_off_not_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import watchfiles

    from toolnexus.mcp._server import HomeServer

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watchfiles, "awatch", broken)
    served = HomeServer(make_home(tmp_path / "ada"), one_connection=True)
    with anyio.fail_after(10):
        await served.watch(anyio.Event())  # returns: nothing raised
    assert "change notifications are off: [Errno 28] inotify watch limit reached" in caplog.text


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    import socket

    home = make_home(tmp_path / "ada")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            serve_cmd(home, "--transport", "http", "--port", str(port)),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert f"cannot listen on 127.0.0.1:{port}" in line


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {TOKEN}"])
def test_http_refuses_a_request_without_the_token(
    http_server: tuple[str, Path], header: str | None
) -> None:
    url, _ = http_server
    request = urllib.request.Request(url, data=b"{}", method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if header is not None:
        request.add_header("Authorization", header)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    with refused.value as response:
        assert response.code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert response.read() == b"missing or wrong bearer token\n"
