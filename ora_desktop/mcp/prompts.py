"""The MCP prompts: two conversation starters a person can pick in a client.

* ``start_task`` — load what you know before a task: the context for the task (important,
  relevant, recent memories with their ids) and how to use it;
* ``wrap_up`` — end of a session: what is already remembered recently, and what to store,
  update or supersede now.

Both read through :mod:`ora_desktop.core.operations.agent_memory` and change nothing.
"""

# No ``from __future__ import annotations``: the SDK reads these signatures to build arguments.
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ..core import OraError
from ..core.operations import agent_memory as ops
from . import shapes
from .agents import Agents

Agent = Annotated[str | None, Field(description="which agent (only when the server serves a whole site)")]

START_BUDGET = 1500


def add_prompts(server: MCPServer, agents: Agents) -> None:
    """Register ``start_task`` and ``wrap_up`` on ``server``."""

    @server.prompt(name="start_task", title="Load what you know before a task", description=(
        "The memories that matter for a task (important, relevant, recent, each with its id), to read "
        "before starting it."))
    def start_task(task: str, agent: Agent = None) -> str:
        try:
            bundle = ops.context(agents.get(agent), task, START_BUDGET)
        except OraError as exc:
            raise ValueError(str(exc)) from None
        known = bundle.text or "(nothing remembered yet)"
        return (f"Before you start this task: {task}\n\nThis is what your long-term memory holds about it "
                f"(ids in brackets):\n\n{known}\n\nRely on these; call 'touch' with the ids you use, "
                "'search' for anything more specific, and 'update' or 'supersede' a memory you find wrong.")

    @server.prompt(name="wrap_up", title="Wrap up this session", description=(
        "What should be remembered from this session: the recent memories (to avoid duplicates) and what "
        "to store, update or supersede before you stop."))
    def wrap_up(summary: str = "", agent: Agent = None) -> str:
        try:
            recent = ops.list_memories(agents.get(agent), limit=15).memories
        except OraError as exc:
            raise ValueError(str(exc)) from None
        lines = "\n".join(shapes.memory_line(m, full=False) for m in recent) or "(none yet)"
        about = f"\n\nThe session in brief: {summary}" if summary.strip() else ""
        return ("The session is ending. Decide what is worth keeping for later sessions: decisions made, "
                "facts learned, the user's preferences, unfinished work. For each, one idea per memory: "
                "'remember' it with an honest importance (1-10) and tags; if it corrects something already "
                "remembered, 'remember' the new one and 'supersede' the old id, or 'update' it in place. "
                f"Do not store what is below again.{about}\n\nMost recent memories:\n{lines}")
