"""The stdio transport, guarded: a request whose text holds a lone surrogate gets an answer.

JSON may escape half of a surrogate pair on its own (``"x \\udcff"``): that is valid JSON but
not Unicode text, and the SDK's reader drops such a line without a reply, so the client waits
forever. Here such a request is answered before it reaches the SDK: a ``tools/call`` with an
error result naming the argument, any other request with a JSON-RPC invalid-params error; the
server goes on reading.

When the wire is a pipe or a socket (as every MCP client starts a server), lines are read and
written through the event loop's own non-blocking pipe transports: the SDK's default reads each
line and writes each answer through a worker thread, a thread hand-off per line that cost a
quick call more than the call itself. A terminal or a file keeps the threaded path.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import stat
import sys
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

import anyio
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
INVALID_PARAMS = -32602
#: The longest request line read from a pipe (a 16 MB memory JSON-escaped fits many times over).
MAX_LINE = 1 << 30


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


class Wire(Protocol):
    """Where answers go: one whole line per write."""

    async def write(self, text: str) -> None: ...

    async def flush(self) -> None: ...


class _Out:
    """Standard output shared by the SDK's writer and :class:`_Requests`: one whole line at a time."""

    def __init__(self, out: Any) -> None:
        self.out, self.lock = out, anyio.Lock()

    async def write(self, text: str) -> None:
        async with self.lock:
            await self.out.write(text)
            await self.out.flush()

    async def flush(self) -> None:
        """Each write is flushed already."""


class _PipeOut:
    """Standard output through the event loop's pipe transport: a write is queued at once, whole,
    in order (one writer at a time cannot interleave lines); waits only while the client is not
    reading (the transport's buffer is full)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))
        await self.writer.drain()

    async def flush(self) -> None:
        """Each write is handed to the transport whole already."""


class _PipeLines:
    """Lines of standard input read by the event loop itself (decoded as UTF-8, bad bytes replaced)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while line := await self.reader.readline():
            yield line.decode("utf-8", errors="replace")


class _Answered:
    """A wire that calls ``then`` once, after its first line went out (the answer to ``initialize``)."""

    def __init__(self, wire: Wire, then: Callable[[], None]) -> None:
        self.wire, self.then = wire, then

    async def write(self, text: str) -> None:
        await self.wire.write(text)
        if self.then is not None:
            then, self.then = self.then, None
            then()

    async def flush(self) -> None:
        await self.wire.flush()


class _Requests:
    """Lines from stdin for the SDK's reader, minus those :func:`refusal` answers itself."""

    def __init__(self, source: Any, out: Wire) -> None:
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


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """The wire (private copies of descriptors 0 and 1), with descriptor 0 then reading the null
    device and 1 writing to stderr, so a stray print of ours or a library's cannot corrupt the
    protocol (as the SDK's own stdio transport does)."""
    sys.stdout.flush()
    wire_in, wire_out = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _is_pipe(stream: BinaryIO) -> bool:
    mode = os.fstat(stream.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _pipe_wire(wire_in: BinaryIO, wire_out: BinaryIO) -> tuple[_PipeLines, _PipeOut]:
    """Both ends of the wire on the running asyncio loop's pipe transports."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), wire_in)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, wire_out)
    return _PipeLines(reader), _PipeOut(asyncio.StreamWriter(transport, protocol, None, loop))


async def run_stdio(server: MCPServer, after_first_answer: Callable[[], None] | None = None) -> None:
    """Serve ``server`` over this process's stdin and stdout until stdin closes; call
    ``after_first_answer`` once the first answer is written (work that would delay it)."""
    wire_in, wire_out = claim_stdio()
    stdin: Any
    stdout: Wire
    if _is_pipe(wire_in) and _is_pipe(wire_out):
        stdin, stdout = await _pipe_wire(wire_in, wire_out)
    else:
        stdin = anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
        stdout = _Out(anyio.wrap_file(io.TextIOWrapper(wire_out, encoding="utf-8", write_through=True)))
    if after_first_answer is not None:
        stdout = _Answered(stdout, after_first_answer)
    lowlevel = server._lowlevel_server
    async with stdio_server(_Requests(stdin, stdout), stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
