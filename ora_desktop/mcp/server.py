"""The MCP server of one agent file (or of every agent of a site): tools, resources, prompts,
and the transports (stdio, streamable HTTP).

``build_server(store)`` makes an :class:`OraServer` over an open :class:`~ora_desktop.core.Store`
(or over :class:`.agents.Agents`); ``serve(path, ...)`` opens the file and runs it. A read-only
store lists only the reading tools and answers a writing one with "read-only".

The tools, resources and prompts (their modules, the engine's operations, and the schemas built
from their signatures) are registered on the first look at them — a list, a call, a read — not
before: a client waits for the answer to ``initialize``, which needs only the capabilities
(:class:`.notices.Notices` installs its handlers at once, so they are advertised as before).
"""

import contextlib
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent
from pydantic import ValidationError

from .. import __version__
from ..core import OraError, OraHome, Store, open_store
from .agents import Agents
from .http import parse_http, read_token, require_token, run_http
from .notices import Notices
from .stdio import run_stdio

INSTRUCTIONS = (
    "Long-term memory of one Ora agent (a SQLite .site.db file a person also tends in Ora Desktop). "
    "Start a task with 'context' (or 'recall' by type); 'search' for anything specific; 'remember' "
    "what will matter later, one idea per memory, with an honest importance; 'touch' what you used; "
    "'supersede' what became outdated instead of leaving contradictions; 'forget' is recoverable."
)


def argument_error(tool: str, error: ValidationError) -> str:
    """One plain sentence naming the first bad argument of a call (no pydantic boilerplate)."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "arguments"
    if first["type"] == "missing":
        return f"{tool}: the argument {where} is required."
    given = first.get("input")
    shown = repr(given) if len(repr(given)) <= 80 else repr(given)[:77] + "..."
    message = first["msg"][:1].lower() + first["msg"][1:]
    return f"{tool}: {where} {message.removeprefix('input ')} (got {shown})."


class OraServer(MCPServer):
    """MCPServer with this project's manners: arguments refused in one sentence naming the
    argument, writing tools on a read-only server answered "read-only", an unknown prompt a
    JSON-RPC invalid-params error; and its tools, resources and prompts registered by
    ``register`` on the first use of any of them (:meth:`register_later`)."""

    def __init__(self, *args: Any, readonly: bool = False, **kwargs: Any) -> None:
        self._pending: Callable[[OraServer], None] | None = None
        self._registering = threading.RLock()  # reentrant: registering looks at the managers itself
        self._in_register = False
        super().__init__(*args, **kwargs)
        self.readonly = readonly

    def register_later(self, register: Callable[["OraServer"], None]) -> None:
        """Run ``register(self)`` (adding tools, resources, prompts) when one of them is first needed."""
        self._pending = register

    def _registered(self, name: str) -> Any:
        if self._pending is not None:
            with self._registering:  # another thread waits until every tool is there
                if self._pending is not None and not self._in_register:
                    self._in_register = True
                    try:
                        self._pending(self)
                        self._pending = None
                    finally:
                        self._in_register = False
        return self.__dict__[name]

    _tool_manager = property(lambda self: self._registered("_tool_manager"),
                             lambda self, value: self.__dict__.__setitem__("_tool_manager", value))
    _resource_manager = property(lambda self: self._registered("_resource_manager"),
                                 lambda self, value: self.__dict__.__setitem__("_resource_manager", value))
    _prompt_manager = property(lambda self: self._registered("_prompt_manager"),
                               lambda self, value: self.__dict__.__setitem__("_prompt_manager", value))

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        from .tools import WRITING_TOOLS

        if self.readonly and name in WRITING_TOOLS:
            return _error(f"{name}: this server is read-only (started with --read-only, or the file cannot be "
                          "written); it cannot change memories.")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                return _error(argument_error(name, cause))
            if isinstance(cause, ToolError):  # ours: the engine's own sentence, without the SDK's prefix
                return _error(str(cause))
            raise

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        if self._prompt_manager.get_prompt(name) is None:
            raise MCPError(INVALID_PARAMS, f"no prompt named {name!r} (see prompts/list)")
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:
            raise MCPError(INVALID_PARAMS, f"prompt {name}: {exc}") from None


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_server(target: Store | Agents) -> OraServer:
    """An MCP server whose tools, resources and prompts act on one store, or on the agents of a site."""
    agents = target if isinstance(target, Agents) else Agents.one(target)
    readonly = agents.readonly
    scope = (f"every agent of site {agents.site!r} (each call names its agent)" if agents.serves_site
             else "one Ora agent")
    notices = Notices()

    @contextlib.asynccontextmanager
    async def watching(_: MCPServer) -> AsyncIterator[dict]:
        """Other programs' commits reach subscribers while the server runs."""
        async with anyio.create_task_group() as group:
            group.start_soon(notices.watch)
            yield {}
            group.cancel_scope.cancel()

    server = OraServer(
        name="ora-desktop", title="Ora memory", version=__version__, log_level="WARNING", readonly=readonly,
        lifespan=watching,
        instructions=INSTRUCTIONS.replace("one Ora agent", scope)
        + (" This server is read-only: it cannot change memories." if readonly else ""),
    )
    notices.install(server, agents)
    server.register_later(lambda later: _register(later, agents, notices))
    return server


def _register(server: OraServer, agents: Agents, notices: Notices) -> None:
    """Add the tools (only the reading ones on a read-only server), prompts and resources."""
    from .prompts import add_prompts
    from .resources import add_resources
    from .tools import add_reading_tools, add_writing_tools

    add_reading_tools(server, agents, notices)
    if not server.readonly:
        add_writing_tools(server, agents, notices)
    add_prompts(server, agents)
    add_resources(server, agents)


def warm_index(path: Path) -> None:
    """Build or refresh the search index, so an agent's first search does not wait for it.

    Runs beside the server, started over stdio once the answer to ``initialize`` is out (its
    imports and reads would delay that answer); a failure here is left for ``search`` to report.
    """
    from ..core.search import ensure_index  # on this thread, not the server's

    with contextlib.suppress(OraError, OSError, sqlite3.Error):
        ensure_index(path)


def serve(path: Path | None, *, readonly: bool = False, http: str | None = None, token_file: str | None = None,
          allow_hosts: tuple[str, ...] = (), site: tuple[OraHome, str] | None = None) -> None:
    """Open ``path`` (or, with ``site`` = (home, slug), every agent of that site, each on first
    use) and answer MCP requests until the client goes away (stdio) or Ctrl+C (HTTP).

    Over HTTP the token (``token_file`` or ``ORA_MCP_TOKEN``) is required beyond loopback and
    checked before any file is opened (:mod:`.http`)."""
    address = parse_http(http) if http else None
    token = read_token(token_file) if address else None
    if address:
        require_token(address[0], token)
    warm: Callable[[], None] | None = None
    with contextlib.ExitStack() as stack:
        if site is not None:
            agents = Agents.of_site(site[0], site[1], readonly=readonly)
            stack.callback(agents.close)
        else:
            assert path is not None
            store = stack.enter_context(open_store(path, readonly=readonly))
            agents = Agents.one(store)
            warm = threading.Thread(target=warm_index, args=(store.path,), name="ora-mcp-index", daemon=True).start
        server = build_server(agents)
        if address is None:
            anyio.run(run_stdio, server, warm)
        else:
            if warm is not None:
                warm()
            run_http(server, address[0], address[1], token, allow_hosts)
