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

from ..core.operations import agent_memory as ops
from ..core.schema import MEMORY_TYPES

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ..core import Store
    from ..core.records import Change

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT_LEVEL = "warning"
#: At most this many ids come back from one completion request.
MAX_COMPLETIONS = 100


class Notices:
    """Per-server state for log levels and subscriptions, and the senders that use it."""

    def __init__(self, base: str) -> None:
        self.base = base
        # Keyed by the client's connection (a ServerSession is a per-request proxy over it).
        self.levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.subscribers: dict[str, weakref.WeakKeyDictionary[Any, Any]] = {}
        self.lock = threading.Lock()

    # --------------------------------------------------------------------- installing
    def install(self, server: MCPServer, store: Store) -> None:
        """Serve logging/setLevel, resources/(un)subscribe and completion/complete on ``server``,
        and send resource updates after each of ``store``'s commits."""
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
            values = complete_argument(store, params.argument.name, params.argument.value)
            completion = Completion(values=values[:MAX_COMPLETIONS], total=len(values),
                                    has_more=len(values) > MAX_COMPLETIONS)
            return {"completion": completion.model_dump(by_alias=True, exclude_none=True)}

        with warnings.catch_warnings():  # logging is deprecated in the 2026-07-28 protocol, still served
            warnings.simplefilter("ignore")
            lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
        lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
        lowlevel.add_request_handler("completion/complete", CompleteRequestParams, complete)
        store.subscribe(self.changed)

    # --------------------------------------------------------------------- sending
    def changed(self, change: Change) -> None:
        """A commit of this store: tell the subscribers of each changed memory (and of important)."""
        uris = [f"{self.base}/memory/{memory_id}" for memory_id in sorted(change.ids)]
        uris.append(f"{self.base}/important")
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


def complete_argument(store: Store, name: str, typed: str) -> list[str]:
    """Completions for an argument called ``name`` given what was ``typed``."""
    if name == "type":
        return [t for t in MEMORY_TYPES if t.startswith(typed)]
    if name in ("memory_id", "id", "old_id", "new_id", "other_id"):
        return ops.ids_starting(store, typed, MAX_COMPLETIONS + 1)
    return []


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
