"""The MCP resources: the important memories, the recall of a type, and one memory by id.

One file: ``ora://SITE/AGENT/important``, ``…/recall/{type}``, ``…/memory/{memory_id}``. A whole
site: the same with ``{agent}`` in place of the agent's name.
"""

# No ``from __future__ import annotations``: the SDK reads these signatures to build templates.
import json
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from ..core import InvalidValue, NotFound, OraError, Store
from ..core.operations import agent_memory as ops
from . import shapes
from .agents import Agents, base_uri

IMPORTANT = "The agent's important memories (importance >= 7, or facts with health >= 0.5), current only"
RECALL = "The agent's recall of one memory type (current memories, health above 0.3)"
MEMORY = "One memory by id, with every field"


def _read(store_of: Callable[[], Store], produce: Callable[[Store], Any]) -> str:
    """JSON of what ``produce(store)`` returns (each memory with its pinned state); the engine's
    refusals as resource errors."""
    try:
        store = store_of()
        value = produce(store)
        pinned = ops.pinned(store)
    except (NotFound, InvalidValue) as exc:
        raise ResourceNotFoundError(str(exc)) from exc
    except OraError as exc:
        raise ResourceError(str(exc)) from exc
    out = (shapes.memory_out(value, pinned) if not isinstance(value, list)
           else [shapes.memory_out(m, pinned) for m in value])
    return json.dumps(out, ensure_ascii=False, indent=1)


def add_resources(server: MCPServer, agents: Agents) -> None:
    """Register the resources (fixed URIs for one file, ``{agent}`` templates for a site)."""
    if not agents.serves_site:
        base = base_uri(agents.get(None).path)

        @server.resource(f"{base}/important", name="important", mime_type="application/json", description=IMPORTANT)
        def important_memories() -> str:
            return _read(lambda: agents.get(None), ops.important)

        @server.resource(f"{base}/recall/{{type}}", name="recall", mime_type="application/json", description=RECALL)
        def recall_by_type(type: str) -> str:
            return _read(lambda: agents.get(None), lambda store: ops.recall(store, type))

        @server.resource(f"{base}/memory/{{memory_id}}", name="memory", mime_type="application/json",
                         description=MEMORY)
        def memory_by_id(memory_id: str) -> str:
            return _read(lambda: agents.get(None), lambda store: ops.memory(store, memory_id))

        return
    base = f"ora://{agents.site}/{{agent}}"

    @server.resource(f"{base}/important", name="important", mime_type="application/json", description=IMPORTANT)
    def site_important(agent: str) -> str:
        return _read(lambda: agents.get(agent), ops.important)

    @server.resource(f"{base}/recall/{{type}}", name="recall", mime_type="application/json", description=RECALL)
    def site_recall(agent: str, type: str) -> str:
        return _read(lambda: agents.get(agent), lambda store: ops.recall(store, type))

    @server.resource(f"{base}/memory/{{memory_id}}", name="memory", mime_type="application/json", description=MEMORY)
    def site_memory(agent: str, memory_id: str) -> str:
        return _read(lambda: agents.get(agent), lambda store: ops.memory(store, memory_id))
