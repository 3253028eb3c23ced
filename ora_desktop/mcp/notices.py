"""What the server tells a client unasked: log messages, progress, and resource updates; and
the completion of memory ids and types.

* **logging** — ``logging/setLevel`` sets the level per session (default ``warning``); each
  write is logged at ``info`` ("remembered [id] as mcp:client"), a refused call at ``notice``.
* **progress** — a call that builds the search index or the vectors first (a first search by
  meaning, a context on a large file) reports ``notifications/progress`` when the client gave
  a progress token.
* **resources/subscribe** — a client subscribes to ``ora://SITE/AGENT/memory/ID`` (or
  ``…/important``) and gets ``notifications/resources/updated`` when that memory changes (any
  memory, for ``important``): at once for a write through this server, within
  :data:`WATCH_SECONDS` for another program's (the window, another agent), found by comparing the
  subscribed rows' fingerprints after SQLite's commit counter moved. The notices keep their own
  place (the counter as last seen, :func:`file_position`), so no other reader of the store's
  change state (``external_change``, ``changed_externally``) can take a commit from them, nor they
  from it.
* **completion** — ``memory_id`` arguments complete to ids starting with what was typed, ``type``
  arguments to the memory types.

The tools that send notices (the writing ones, and the long reads that report progress) run on
worker threads; notifications are sent back on the event loop through ``anyio.from_thread``.
The quick reads of :mod:`.quick`, which may run on the loop itself, send none.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.types import (
    CompleteRequestParams,
    Completion,
    SetLevelRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)

from ..core import OraError
from ..core.connection import commit_counter, file_stamp
from ..core.schema import MEMORY_TYPES
from .agents import Agents, base_uri

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ..core import Store
    from ..core.records import Change

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_LEVEL = "warning"
#: At most this many ids come back from one completion request.
MAX_COMPLETIONS = 100
#: How often the files are checked for another program's commits (a cheap counter read).
WATCH_SECONDS = 1.0


class Notices:
    """Per-server state for log levels and subscriptions, and the senders that use it."""

    def __init__(self) -> None:
        # Keyed by the client's connection (a ServerSession is a per-request proxy over it).
        self.levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.subscribers: dict[str, weakref.WeakKeyDictionary[Any, Any]] = {}
        #: memory URI -> fingerprint of its row when last seen (None: not in the file)
        self.seen: dict[str, str | None] = {}
        self.lock = threading.Lock()
        self.agents: Agents | None = None
        #: store path -> the file's position (:func:`file_position`) as the notices last looked
        self.positions: dict[Path, tuple] = {}
        #: store path -> the position right after this server's own last commit
        self.own: dict[Path, tuple] = {}

    # --------------------------------------------------------------------- installing
    def install(self, server: MCPServer, agents: Agents) -> None:
        """Serve logging/setLevel, resources/(un)subscribe and completion/complete on ``server``,
        and send resource updates after each commit of the agents' stores."""
        lowlevel = server._lowlevel_server
        self.agents = agents

        async def set_level(ctx: Any, params: SetLevelRequestParams) -> dict:
            self.levels[_connection(ctx.session)] = params.level
            return {}

        async def subscribe(ctx: Any, params: SubscribeRequestParams) -> dict:
            uri = str(params.uri)
            with self.lock:
                self.subscribers.setdefault(uri, weakref.WeakKeyDictionary())[_connection(ctx.session)] = ctx.session
            await anyio.to_thread.run_sync(self.remember_rows, [uri])
            return {}

        async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> dict:
            with self.lock:
                self.subscribers.get(str(params.uri), {}).pop(_connection(ctx.session), None)
            return {}

        async def complete(ctx: Any, params: CompleteRequestParams) -> dict:
            known = dict(params.context.arguments or {}) if params.context else {}
            known.update(_template_values(params.ref))
            values = complete_argument(agents, params.argument.name, params.argument.value, known.get("agent"))
            completion = Completion(values=values[:MAX_COMPLETIONS], total=len(values),
                                    has_more=len(values) > MAX_COMPLETIONS)
            return {"completion": completion.model_dump(by_alias=True, exclude_none=True)}

        with warnings.catch_warnings():  # logging is deprecated in the 2026-07-28 protocol, still served
            warnings.simplefilter("ignore")
            lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
        lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
        lowlevel.add_request_handler("completion/complete", CompleteRequestParams, complete)
        agents.on_open(self.follow)

    def follow(self, store: Store) -> None:
        """Hear ``store``'s own commits at once, and other programs' from its position now on."""
        self.positions[store.path] = file_position(store.path)
        store.subscribe(functools.partial(self.changed, base_uri(store.path), store.path))

    # --------------------------------------------------------------------- watching
    def memory_of(self, uri: str) -> tuple[Store, str] | None:
        """(store, memory id) of a subscribed ``ora://SITE/AGENT/memory/ID`` URI, else None."""
        site_agent, marker, memory_id = uri.removeprefix("ora://").partition("/memory/")
        if not marker or self.agents is None:
            return None
        agent = site_agent.partition("/")[2]
        try:
            store = self.agents.get(agent if self.agents.serves_site else None)
        except OraError:
            return None
        return (store, memory_id) if base_uri(store.path) == f"ora://{site_agent}" else None

    def remember_rows(self, uris: list[str]) -> list[str]:
        """Fingerprint the rows of ``uris`` (memory URIs); returns those whose row differs from
        the one last seen (call on a worker thread)."""
        moved = []
        for uri in uris:
            found = self.memory_of(uri)
            if found is None:
                continue
            store, memory_id = found
            from ..core.operations import journal  # with the first subscription, not at start

            now = journal.fingerprints(store, [memory_id]).get(memory_id)
            with self.lock:
                if uri in self.seen and self.seen[uri] != now:
                    moved.append(uri)
                self.seen[uri] = now
        return moved

    async def watch(self) -> None:
        """Tell subscribers about other programs' commits, until cancelled."""
        while True:
            await anyio.sleep(WATCH_SECONDS)
            await self.look()

    async def look(self) -> None:
        """One look at every open store: if its file moved since the notices' last look, tell the
        subscribers of each subscribed memory whose row changed, and of ``important`` (unless the
        only commit was this server's own, already told)."""
        for store in self.agents.stores() if self.agents else []:
            now = file_position(store.path)
            if now == self.positions.setdefault(store.path, now):
                continue
            self.positions[store.path] = now
            base = base_uri(store.path)
            with self.lock:
                mine = [uri for uri in self.subscribers if uri.startswith(f"{base}/memory/")]
            moved = await anyio.to_thread.run_sync(self.remember_rows, mine)
            told = [] if now == self.own.get(store.path) else [f"{base}/important"]
            for uri in [*moved, *told]:
                for session in self.sessions_of(uri):
                    with contextlib.suppress(Exception):
                        await session.send_resource_updated(uri)

    def sessions_of(self, uri: str) -> list[Any]:
        with self.lock:
            return list(self.subscribers.get(uri, {}).values())

    # --------------------------------------------------------------------- sending
    def changed(self, base: str, path: Path, change: Change) -> None:
        """A commit of ours to the store at ``base``: tell the subscribers of each changed memory
        (and of important)."""
        self.own[path] = file_position(path)
        uris = [f"{base}/memory/{memory_id}" for memory_id in sorted(change.ids)]
        self.remember_rows([u for u in uris if self.sessions_of(u)])  # seen: not reported again by watch
        for uri in [*uris, f"{base}/important"]:
            for session in self.sessions_of(uri):
                _on_loop(session.send_resource_updated, uri)

    def log(self, ctx: Any, level: str, message: str) -> None:
        """Send ``message`` to the calling session if its level lets ``level`` through."""
        session = _session(ctx)
        if session is None:
            return
        wanted = self.levels.get(_connection(session), DEFAULT_LEVEL)
        if LEVELS.index(level) >= LEVELS.index(wanted):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _on_loop(session.send_log_message, level=level, data=message, logger="ora-desktop")


def file_position(path: Path) -> tuple:
    """Where the file is in its history: SQLite's commit counter (one more per commit, whoever
    made it), else the file's and its log's (mtime, size, inode). Read without opening and
    closing a descriptor of the file (closing one would drop SQLite's locks)."""
    counter = commit_counter(path)
    return ("commits", counter) if counter is not None else ("stamp", file_stamp(path))


def progress_of(ctx: Any) -> Callable[[int, int], None] | None:
    """A ``progress(done, total)`` callback reporting to the client (a no-op unless the client's
    request carried a progress token)."""
    if ctx is None:
        return None

    def report(done: int, total: int) -> None:
        _on_loop(ctx.report_progress, float(done), float(total) if total else None, "building the search index")

    return report


def complete_argument(agents: Agents, name: str, typed: str, agent: str | None = None) -> list[str]:
    """Completions for an argument called ``name`` given what was ``typed`` (ids of ``agent``'s
    memories when the server serves a site)."""
    if name == "type":
        return [t for t in MEMORY_TYPES if t.startswith(typed)]
    if name == "agent":
        return [a for a in agents.names() if a.startswith(typed)]
    if name in ("memory_id", "id", "old_id", "new_id", "other_id"):
        from ..core.operations import agent_memory as ops  # with the first completion, not at start

        try:
            return ops.ids_starting(agents.get(agent), typed, MAX_COMPLETIONS + 1)
        except OraError:
            return []
    return []


def _template_values(ref: Any) -> dict[str, str]:
    """Values already in a resource reference's URI (``ora://site/ora/...`` names the agent)."""
    uri = str(getattr(ref, "uri", "") or "")
    parts = uri.removeprefix("ora://").split("/")
    return {"agent": parts[1]} if uri.startswith("ora://") and len(parts) > 1 and "{" not in parts[1] else {}


def _session(ctx: Any) -> Any:
    with contextlib.suppress(AttributeError, ValueError, LookupError):
        return ctx.request_context.session
    return None


def _connection(session: Any) -> Any:
    """What identifies a client for as long as it is connected (its ServerSession is per request)."""
    return getattr(session, "_connection", session)


def _on_loop(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Run coroutine function ``fn`` on the event loop from a worker thread (or nowhere, outside one)."""
    with contextlib.suppress(Exception):  # a client gone or no loop: a notice is never worth failing a call
        anyio.from_thread.run(lambda: fn(*args, **kwargs))
