"""The stdio transport, guarded: a request whose text holds a lone surrogate gets an answer.

JSON may escape half of a surrogate pair on its own (``"x \\udcff"``): that is valid JSON but
not Unicode text, and the SDK's reader drops such a line without a reply, so the client waits
forever. Here such a request is answered before it reaches the SDK: a ``tools/call`` with an
error result naming the argument, any other request with a JSON-RPC invalid-params error; the
server goes on reading.
"""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
INVALID_PARAMS = -32602


def _bad_text(value: Any, path: str) -> str | None:
    """The path of the first string in ``value`` that is not valid Unicode, else None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or "value"
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _bad_text(item, f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


def refusal(line: str) -> str | None:
    """The JSON-RPC answer to a request holding a lone surrogate ("" for such a notification);
    ``None`` for any other line (the SDK reads it)."""
    if not _SURROGATE_ESCAPE.search(line):
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    where = _bad_text(params, "")
    if where is None:
        return None
    if "id" not in message:
        return ""
    if message.get("method") == "tools/call" and isinstance(params, dict):
        tool = params.get("name") if isinstance(params.get("name"), str) else "tool"
        argument = where.removeprefix("arguments.")
        text = (f"{_safe(tool)}: {_safe(argument)} holds a lone surrogate (half of a UTF-16 pair), which is not "
                "text; nothing changed.")
        body: dict[str, Any] = {"result": {"content": [{"type": "text", "text": text}], "isError": True}}
    else:
        body = {"error": {"code": INVALID_PARAMS, "message": f"{_safe(where)} holds a lone surrogate, which is "
                                                             "not text"}}
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], **body}, ensure_ascii=True)


def _safe(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class _Requests:
    """Lines from stdin for the SDK's reader, minus those :func:`refusal` answers itself."""

    def __init__(self, source: Any, out: Any) -> None:
        self.source, self.out = source, out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.source:
            answer = refusal(line)
            if answer is None:
                yield line
            elif answer:
                await self.out.write(answer + "\n")
                await self.out.flush()


async def run_stdio(server: MCPServer) -> None:
    """Serve ``server`` over this process's stdin and stdout until stdin closes."""
    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=True))
    lowlevel = server._lowlevel_server
    async with stdio_server(_Requests(stdin, stdout), stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
