"""The ``mcp`` subcommand: serve one agent file to MCP clients (Claude, Cursor, any agent)."""

from __future__ import annotations

import argparse
from typing import Any

from ..core import OraError
from ..core.extras import missing
from . import common
from .common import command, target_path


def register(sub: Any) -> None:
    """Add the ``mcp`` subcommand to the ora-desktop parser."""
    p = command(sub, "mcp", cmd_mcp, "serve an agent's memory to MCP clients (Model Context Protocol)",
                "Run an MCP server over one agent file: on standard input/output (what Claude Desktop, "
                "Claude Code and Cursor start), or streamable HTTP with --http. Tools: remember, recall, "
                "search, context, touch, important, supersede, link, forget (recoverable). Resources: the "
                "important memories and each memory by id (ora://SITE/AGENT/memory/ID).")
    common.add_target(p)
    p.add_argument("--read-only", dest="mcp_read_only", action="store_true",
                   help="open the file read-only and offer only the reading tools (recall, search, context, "
                        "important)")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (PORT alone binds "
                        "127.0.0.1)")


def cmd_mcp(args: argparse.Namespace) -> int:
    """Open the target file (it must exist) and serve it until the client disconnects."""
    path = target_path(args)
    if not path.exists():
        raise OraError(f"{path}: no such file (create it with 'ora-desktop add --create ...' first)")
    try:
        from ..mcp import serve
    except ImportError as exc:
        raise missing(exc, "mcp", "mcp", "pydantic") or OraError(f"the MCP server cannot start ({exc})") from None
    serve(path, readonly=args.mcp_read_only or bool(getattr(args, "read_only", False)), http=args.http)
    return 0
