"""A persona's home as an MCP server: the soul prompt, the tools, the files as resources.

One client connection is one session, as in the library: the first request of
a connection that needs it starts a `Session` of the home (`from_dir(...,
save=False)`: no transcript is saved), and the `soul` prompt and the tools of
that connection come from it for as long as it lasts. A memory write lands on
disk at once and loads for the next connection. Resources are the home's files
read live (they are not the frozen prompt), and a subscriber hears when one
changes.

Connections: on stdio the process serves one client, so one state serves the
whole process. Over HTTP each connection (an `Mcp-Session-Id`) keeps its own
state, reached through the SDK's per-connection object; a request that belongs
to no connection (a client of the connectionless protocol era) gets a session
of its own, composed for that request.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate

from .. import __version__
from ..agents._agent import Agent, from_dir
from ..agents._home import Home
from ..agents._session import Session
from ..agents._skills import read_skill
from ..agents._watch import is_relevant
from ..errors import HomeError, HomeFileError, StoreError, ToolError, ToolnexusError
from ..home._door import (
    FILE_CAP,
    IDENTITY_FILE,
    MEMORY_FILES,
    SKILL_FILE,
    SKILLS_DIR,
    Door,
)
from ..home._door import decode as decode_file
from ..home._identity import Target
from ..home._load import valid_skills
from ..store._config import configured_store
from ..tools import CallContext, Tool, calling

__all__ = ["HomeServer", "slug"]

log = logging.getLogger("toolnexus.serve")

#: The URI scheme of a home's resources: `toolnexus://<persona>/MEMORY.md`.
SCHEME = "toolnexus"
#: Resources one connection may subscribe to (a client cannot grow the server without end).
MAX_SUBSCRIPTIONS = 256
#: How long one client may take to accept a notification before it is skipped.
NOTIFY_TIMEOUT_S = 5
_TOP_FILES = (IDENTITY_FILE, *MEMORY_FILES.values())
#: The tools served (SPEC §13), each when the session has it (as `from_dir` decides).
SERVED_TOOLS = ("memory", "skill", "recall", "skill_manage")


def slug(name: str) -> str:
    """The persona's name as a URI host: lowercase letters, digits, `.`, `_` and `-`."""
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.") or "persona"


#: How provenance names text from an MCP client (`untrusted=mcp-client` in the history).
CLIENT = "mcp-client"


@dataclass
class _Connection:
    """What one client connection keeps: its session, its way back, its subscriptions."""

    session: Session | None = None
    #: The SDK's session object of the connection, to send it notifications.
    peer: Any = None
    subscriptions: set[str] = field(default_factory=set)
    starting: anyio.Lock = field(default_factory=anyio.Lock)


class _Server(Server[Any]):
    """The SDK's server, telling clients that the resource list can change, and that the
    prompt list and the tool list never do, whichever protocol era they speak."""

    def get_capabilities(  # type: ignore[no-untyped-def]
        self, notification_options=None, experimental_capabilities=None, extensions=None, **kw
    ) -> types.ServerCapabilities:
        caps = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, **kw
        )
        update: dict[str, Any] = {}
        if caps.prompts is not None:
            update["prompts"] = caps.prompts.model_copy(update={"list_changed": False})
        if caps.tools is not None:
            update["tools"] = caps.tools.model_copy(update={"list_changed": False})
        return caps.model_copy(update=update)

    def create_initialization_options(  # type: ignore[no-untyped-def]
        self, notification_options=None, experimental_capabilities=None, extensions=None
    ):
        return super().create_initialization_options(
            notification_options or NotificationOptions(resources_changed=True),
            experimental_capabilities,
            extensions,
        )


class HomeServer:
    """Serve one home over MCP (see the module docstring); `server` is the SDK's server.

    Raises:
        HomeError: at construction, when the home is not a valid home (every
            problem listed): a bad home never starts serving.
    """

    def __init__(
        self, home: str | os.PathLike[str], *, one_connection: bool, trust_client: bool = False
    ) -> None:
        self.home = Home(Path(os.path.abspath(home)))
        #: Where a client's text comes from, for provenance: nowhere trusted, unless the
        #: server was told the client is the person's own (`--trust-client`).
        self.untrusted: tuple[str, ...] = () if trust_client else (CLIENT,)
        self.agent: Agent = from_dir(self.home.path, save=False)
        first = self.agent.session()  # composes strictly: a bad home fails here
        self.host = slug(first.soul.config.name)
        self.template = UriTemplate.parse(
            f"{SCHEME}://{self.host}/{SKILLS_DIR}/{{skill}}/{{+path}}"
        )
        self._single = _Connection(session=first) if one_connection else None
        self._open: dict[int, _Connection] = {}
        self._bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self._bus)
        self._listed: tuple[str, ...] = ()
        self.server = _Server(
            "toolnexus",
            version=__version__,
            title=f"{first.soul.config.name} (toolnexus)",
            instructions=(
                f"The home of the persona {first.soul.config.name}. Get the prompt `soul` for "
                "its system prompt (fixed for this connection); its tools are the persona's "
                "own; its files are resources, read live."
            ),
            lifespan=self._lifespan,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_subscriptions_listen=self._listen,
        )
        self.server.middleware.append(self._begin)

    # -- connections -------------------------------------------------------------------------

    def _connection(self, ctx: ServerRequestContext[Any, Any]) -> _Connection:
        if self._single is not None:
            if self._single.peer is None:
                self._single.peer = ctx.session
            return self._single
        link = getattr(ctx.session, "_connection", None)  # the SDK's per-connection object
        state = getattr(link, "state", None)
        if link is None or not isinstance(state, dict):
            return _Connection(peer=ctx.session)  # no connection: this request alone
        found = state.get("toolnexus")
        if not isinstance(found, _Connection):
            found = state["toolnexus"] = _Connection(peer=ctx.session)
            key = id(found)
            self._open[key] = found
            link.exit_stack.callback(self._open.pop, key, None)  # when the connection ends
        return found

    async def _begin(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """A connection's session begins with its handshake (not with its first prompt)."""
        result = await call_next(ctx)
        if ctx.method == "initialize":
            try:
                await self._session(ctx)
            except MCPError as exc:  # the first request that needs it says why
                log.warning("%s", exc)
        return result

    async def _session(self, ctx: ServerRequestContext[Any, Any]) -> Session:
        """The connection's session, started by its first request that needs one."""
        conn = self._connection(ctx)
        async with conn.starting:
            if conn.session is None:
                try:
                    conn.session = await anyio.to_thread.run_sync(self.agent.session)
                except ToolnexusError as exc:
                    raise MCPError(
                        types.INTERNAL_ERROR,
                        f"the home cannot be read: {for_client(str(exc), self.home.path)}",
                    ) from None
            return conn.session

    # -- the soul ----------------------------------------------------------------------------

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name="soul",
                    title="Soul",
                    description=(
                        "The persona's system prompt: who it is, what it remembers, its "
                        "skills. Fixed for this connection; a new connection sees changes."
                    ),
                    arguments=[],
                )
            ]
        )

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != "soul":
            raise MCPError(
                types.INVALID_PARAMS, f"no prompt {params.name!r}: this server has one, 'soul'"
            )
        session = await self._session(ctx)
        soul = session.soul
        return types.GetPromptResult(
            description=f"{soul.config.name}'s system prompt (digest {soul.digest})",
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=session.soul.text)
                )
            ],
        )

    # -- tools -------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = await self._session(ctx)
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in _served(session)
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = await self._session(ctx)
        tools = {t.name: t for t in _served(session)}
        tool = tools.get(params.name)
        if tool is None:  # a protocol error (-32602), as the MCP spec asks, not a tool's
            raise MCPError(
                types.INVALID_PARAMS,
                f"no tool {params.name!r} in this session; its tools: {', '.join(tools) or 'none'}",
            )
        call = None if ctx.request_id is None else str(ctx.request_id)
        context = CallContext(caller="mcp", session=session.id, call=call, untrusted=self.untrusted)
        with calling(context):
            result = await tool.execute(params.arguments or {})
        return _result(for_client(result.output, self.home.path), error=result.is_error)

    # -- resources ---------------------------------------------------------------------------

    def uri(self, rel: str) -> str:
        """The URI of the file at `rel` (a path relative to the home, with `/`)."""
        return f"{SCHEME}://{self.host}/{rel}"

    def _files(self) -> dict[str, str]:
        """URI -> path relative to the home, of every file served as a listed resource."""
        found = {self.uri(name): name for name in _TOP_FILES}
        if not (self.home.path / IDENTITY_FILE).exists():
            del found[self.uri(IDENTITY_FILE)]
        for skill in valid_skills(self.home.path, strict=False):
            rel = f"{SKILLS_DIR}/{skill.name}/{SKILL_FILE}"
            found[self.uri(rel)] = rel
        return found

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        files = await anyio.to_thread.run_sync(self._files)
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=rel, mime_type=_mime(rel))
                for uri, rel in files.items()
            ]
        )

    async def _list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=str(self.template),
                    name="skill-file",
                    description="A file in a skill's folder, e.g. references/guide.md.",
                )
            ]
        )

    def read(self, uri: str) -> str:
        """The text of the file at `uri`, read now through the home's door.

        Raises:
            MCPError: `INVALID_PARAMS` for a URI this home does not serve, or a file refused.
        """
        files = self._files()
        rel = files.get(uri)
        if rel in _TOP_FILES:
            path = os.path.join(self.home.path, rel)
            try:
                if rel == IDENTITY_FILE:
                    data = Door(self.home.path).read(path, cap=FILE_CAP)
                else:  # where the home keeps it: its folder, or its database
                    target: Target = "self" if rel == MEMORY_FILES["self"] else "user"
                    data = configured_store(self.home.path).read(target)
                return "" if data is None else decode_file(data, path).removeprefix("\ufeff")
            except HomeFileError as exc:  # named by the file alone: no server paths to clients
                raise MCPError(
                    types.INVALID_PARAMS, f"{rel} cannot be read ({exc.reason})"
                ) from None
            except (StoreError, HomeError) as exc:
                why = for_client(str(exc), self.home.path)
                raise MCPError(types.INTERNAL_ERROR, f"{rel} cannot be read: {why}") from None
        match = self.template.match(uri)
        if match is None:
            raise MCPError(types.INVALID_PARAMS, f"no resource {uri!r} in this home")
        skill, path = str(match["skill"]), str(match["path"])
        if self.uri(f"{SKILLS_DIR}/{skill}/{SKILL_FILE}") not in files:  # a valid skill
            raise MCPError(types.INVALID_PARAMS, f"no skill {skill!r} in this home")
        try:
            return read_skill(self.home.path, skill, path)
        except ToolError as exc:
            raise MCPError(types.INVALID_PARAMS, for_client(exc.message, self.home.path)) from None

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        text = await anyio.to_thread.run_sync(self.read, params.uri)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(uri=params.uri, text=text, mime_type=_mime(params.uri))
            ]
        )

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = params.uri
        if uri not in await anyio.to_thread.run_sync(self._files):
            match = self.template.match(uri)
            if match is None:
                raise MCPError(types.INVALID_PARAMS, f"no resource {uri!r} in this home")
            uri = self.uri(f"{SKILLS_DIR}/{match['skill']}/{match['path']}")  # as notified
        subscriptions = self._connection(ctx).subscriptions
        if len(subscriptions) >= MAX_SUBSCRIPTIONS and uri not in subscriptions:
            raise MCPError(
                types.INVALID_PARAMS, f"at most {MAX_SUBSCRIPTIONS} subscriptions per connection"
            )
        subscriptions.add(uri)
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._connection(ctx).subscriptions.discard(params.uri)
        return types.EmptyResult()

    # -- change notifications ----------------------------------------------------------------

    def _connections(self) -> list[_Connection]:
        return [self._single] if self._single is not None else list(self._open.values())

    async def changed(self, paths: Iterable[str]) -> None:
        """Tell subscribers that the files at `paths` (absolute) changed, and every client
        when the list of resources did."""
        listed = tuple(await anyio.to_thread.run_sync(self._files))
        if listed != self._listed:
            self._listed = listed
            await self._bus.publish(ResourcesListChanged())
            for conn in self._connections():
                await _notify(conn, conn.peer.send_resource_list_changed if conn.peer else None)
        for path in paths:
            rel = os.path.relpath(path, self.home.path).replace(os.sep, "/")
            uri = self.uri(rel)
            await self._bus.publish(ResourceUpdated(uri=uri))
            for conn in self._connections():
                if uri in conn.subscriptions and conn.peer is not None:
                    await _notify(
                        conn, lambda peer=conn.peer, uri=uri: peer.send_resource_updated(uri)
                    )

    async def watch(self, stop: anyio.Event) -> None:
        """Notify clients of changes to the home's files until `stop` is set.

        A watcher that cannot run (the OS's limit on watches reached, say) turns
        notifications off with one line on stderr; the server goes on serving.
        """
        from watchfiles import awatch

        home = self.home

        def keep(_change: Any, path: str) -> bool:
            return is_relevant(home, path)

        try:
            self._listed = tuple(await anyio.to_thread.run_sync(self._files))
            changes = awatch(
                home.path,
                watch_filter=keep,
                debounce=200,
                step=50,
                stop_event=stop,
                ignore_permission_denied=True,
            )
            async for batch in changes:
                try:
                    await self.changed(sorted({path for _, path in batch}))
                except Exception as exc:  # a notification that fails never stops the server
                    log.warning("a change notification was not sent: %s", exc)
        except Exception as exc:
            log.warning("change notifications are off: %s", exc)

    async def watch_store(self) -> None:
        """Notify clients when another machine changes the memory of a home kept in a
        database (LISTEN / NOTIFY); nothing for a home kept in its folder."""
        try:
            store = configured_store(self.home.path)
            if not store.announces_changes:
                return  # the file watcher sees a folder's changes
            files = [str(self.home.path / name) for name in MEMORY_FILES.values()]
            async for _ in store.notifications():
                try:
                    await self.changed(files)
                except Exception as exc:  # a notification that fails never stops the server
                    log.warning("a change notification was not sent: %s", exc)
        except Exception as exc:
            log.warning("database change notifications are off: %s", exc)

    @asynccontextmanager
    async def _lifespan(self, server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        stop = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.watch, stop)
            tasks.start_soon(self.watch_store)
            try:
                yield {}
            finally:
                stop.set()  # the watcher's thread returns within a step, not after seconds
                self._listen.close()
                tasks.cancel_scope.cancel()


async def _notify(conn: _Connection, send: Any) -> None:
    """Send one notification to a connection; a client that went away is forgotten."""
    if send is None:
        return
    try:
        with anyio.move_on_after(NOTIFY_TIMEOUT_S):  # a stalled client never holds up the rest
            await send()
    except Exception as exc:  # closed stream, gone client: drop its subscriptions
        log.debug("notification not delivered: %s", exc)
        conn.subscriptions.clear()
        conn.peer = None


def _served(session: Session) -> list[Tool]:
    """The session's tools an MCP client gets, in the session's order."""
    return [t for t in session.tools if t.name in SERVED_TOOLS]


_LINK = re.compile(r"is a link to .*?, (outside the home|which does not exist|a loop)(?=:)")
_LINK_SAYS = {
    "outside the home": "is a link out of the home",
    "which does not exist": "is a link to a file that does not exist",
    "a loop": "is a link in a loop",
}


def for_client(text: str, home: Path) -> str:
    """`text` as a client may see it: files named relative to the home, never the home's
    place on this machine, nor where a link points."""
    for root in dict.fromkeys((str(home), os.path.realpath(home))):
        text = text.replace(root + os.sep, "").replace(root, "the home")
    return _LINK.sub(lambda m: _LINK_SAYS[m.group(1)], text)


def _result(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def _mime(name: str) -> str:
    if name.endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(name)[0] or "text/plain"
