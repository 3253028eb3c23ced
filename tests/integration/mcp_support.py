"""Drive ``ora-desktop mcp`` as a real subprocess with the MCP SDK's own client."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, Implementation

ROOT = Path(__file__).resolve().parents[2]


def server_env() -> dict[str, str]:
    """The test's isolated folders (ORA_HOME, cache...) for the server process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    env.pop("ORA_DEBUG", None)
    return env


@contextlib.asynccontextmanager
async def mcp_session(*argv: object, client: str = "mcp", **session_options: Any) -> AsyncIterator[ClientSession]:
    """An initialised client session to ``python -m ora_desktop mcp ARGV`` over stdio, as a
    client named ``client`` (what the server journals writes as: ``mcp:<client>``);
    ``session_options`` go to ``ClientSession`` (``logging_callback``, ``message_handler``)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "ora_desktop", "mcp", *map(str, argv)],
                                   env=server_env(), cwd=ROOT)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            info = Implementation(name=client, version="1")
            async with ClientSession(read, write, read_timeout_seconds=120, client_info=info,
                                     **session_options) as session:
                await session.initialize()
                yield session


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    """Call a tool that must succeed; returns its result."""
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    assert not result.is_error, text_of(result)
    return result


async def refused(session: ClientSession, tool: str, arguments: Any) -> str:
    """Call a tool that must be refused; returns the error text."""
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    assert result.is_error, f"{tool}({json.dumps(arguments)[:200]}) was not refused: {text_of(result)[:300]}"
    return text_of(result)


def file_digest(path: Path) -> str:
    """The bytes of the file and of any -wal beside it (what "nothing changed" means)."""
    digest = hashlib.sha256()
    for suffix in ("", "-wal"):
        part = Path(f"{path}{suffix}")
        digest.update(part.read_bytes() if part.exists() else b"-")
    return digest.hexdigest()
