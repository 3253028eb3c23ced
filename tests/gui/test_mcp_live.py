"""A write an agent makes through the MCP server shows up in an open window's memory table."""

from __future__ import annotations

import threading

import anyio
import pytest

from tests.integration.mcp_support import call, mcp_session

from .test_memories import fetch_all_visible, loaded_model

pytestmark = pytest.mark.slow  # starts the MCP server as a real process


def test_an_agent_remembering_over_mcp_appears_in_the_open_table(ctx, qtbot, filled_db):
    path = filled_db(10)
    model = loaded_model(ctx, qtbot, path)
    ctx.start_watching(50)
    outcome: dict[str, object] = {}

    async def agent() -> None:
        async with mcp_session("--db", path) as session:
            stored = await call(session, "remember", content="remembered by an agent over MCP", importance=7)
            outcome["id"] = stored.structured_content["memory"]["id"]

    def run_agent() -> None:  # its own thread: the GUI thread keeps running the window's loop
        try:
            anyio.run(agent)
        except BaseException as exc:  # reported below, on the test's thread
            outcome["error"] = exc

    worker = threading.Thread(target=run_agent)
    worker.start()
    qtbot.waitUntil(lambda: not worker.is_alive(), timeout=120_000)  # a server process start, under load
    assert "error" not in outcome, outcome.get("error")
    qtbot.waitUntil(lambda: model.rowCount() == 11, timeout=5000)
    fetch_all_visible(model, qtbot, range(11))
    assert any(model.memory_at(r).id == outcome["id"] for r in range(11))
