"""What the server tells a client unasked: log messages, progress, and resource updates; and
the completion of memory ids and types.

* **logging** — ``logging/setLevel`` sets the level per session (default ``warning``); each
  write is logged at ``info`` ("remembered [id] as mcp:client"), a refused call at ``notice``.
* **progress** — a call that builds the search index or the vectors first (a first search by
  meaning, a context on a large file) reports ``notifications/progress`` when the client gave
  a progress token.
* **resources/subscribe** — a client subscribes to ``ora://SITE/AGENT/memory/ID`` (or
  ``…/important``) and gets ``notifications/resources/updated`` when a write through this
  server changes that memory (any memory, for ``important``).
* **completion** — ``memory_id`` arguments complete to ids starting with what was typed, ``type``
  arguments to the memory types.

Tools run on worker threads; notifications are sent back on the event loop through
``anyio.from_thread``.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio.from_thread
from mcp.types import (
    CompleteRequestParams,
    Completion,
    SetLevelRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)

from ..core import OraError
from ..core.operations import agent_memory as ops
from ..core.schema import MEMORY_TYPES
from .agents import Agents, base_uri

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ..core.records import Change

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_LEVEL = "warning"
#: At most this many ids come back from one completion request.
MAX_COMPLETIONS = 100


class Notices:
    """Per-server state for log levels and subscriptions, and the senders that use it."""

    def __init__(self) -> None:
        # Keyed by the client's connection (a ServerSession is a per-request proxy over it).
        self.levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.subscribers: dict[str, weakref.WeakKeyDictionary[Any, Any]] = {}
        self.lock = threading.Lock()

    # --------------------------------------------------------------------- installing
    def install(self, server: MCPServer, agents: Agents) -> None:
        """Serve logging/setLevel, resources/(un)subscribe and completion/complete on ``server``,
        and send resource updates after each commit of the agents' stores."""
        lowlevel = server._lowlevel_server

        async def set_level(ctx: Any, params: SetLevelRequestParams) -> dict:
            self.levels[_connection(ctx.session)] = params.level
            return {}

        async def subscribe(ctx: Any, params: SubscribeRequestParams) -> dict:
            with self.lock:
                self.subscribers.setdefault(str(params.uri), weakref.WeakKeyDictionary())[
                    _connection(ctx.session)] = ctx.session
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
        agents.on_open(lambda store: store.subscribe(functools.partial(self.changed, base_uri(store.path))))

    # --------------------------------------------------------------------- sending
    def changed(self, base: str, change: Change) -> None:
        """A commit to the store at ``base``: tell the subscribers of each changed memory (and of
        important)."""
        uris = [f"{base}/memory/{memory_id}" for memory_id in sorted(change.ids)]
        uris.append(f"{base}/important")
        with self.lock:
            targets = [(uri, list(self.subscribers.get(uri, {}).values())) for uri in uris]
        for uri, sessions in targets:
            for session in sessions:
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
