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
                "Run an MCP server over one agent file, or over every agent of a site (--site without --agent: "
                "each tool then takes an 'agent' argument), on standard input/output (what Claude Desktop, "
                "Claude Code and Cursor start) or streamable HTTP with --http. Tools: remember, update, recall, "
                "search, context, get, list, touch, important, supersede, link, links, history, forget, undelete. "
                "Resources: "
                "the important memories, the recall of a type and each memory by id "
                "(ora://SITE/AGENT/memory/ID). Prompts: start_task, wrap_up.")
    common.add_target(p)
    p.add_argument("--read-only", dest="mcp_read_only", action="store_true",
                   help="open the file read-only and offer only the reading tools (recall, search, context, "
                        "important, get, list, links, history); a writing tool answers 'read-only'")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (PORT alone binds "
                        "127.0.0.1; any other address needs a token)")
    p.add_argument("--token-file", metavar="PATH",
                   help="require 'Authorization: Bearer <token>' on every HTTP request, the token being this "
                        "file's first line (or set ORA_MCP_TOKEN); required beyond 127.0.0.1")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="also answer HTTP requests whose Host header is NAME (a DNS name clients use; the bound "
                        "address and, for 0.0.0.0, this machine's names are always allowed)")


def cmd_mcp(args: argparse.Namespace) -> int:
    """Open the target file (it must exist), or every agent of ``--site`` without ``--agent``, and
    serve it until the client disconnects."""
    site = None
    path = None
    if args.site and not args.agent and not args.db:
        site = (common.home_of(args), args.site)
    else:
        path = target_path(args)
        if not path.exists():
            raise OraError(f"{path}: no such file (create it with 'ora-desktop add --create ...' first)")
    try:
        from ..mcp import serve
    except ImportError as exc:
        # The SDK and what it brings (our server imports anyio before the SDK itself).
        raise (missing(exc, "mcp", "mcp", "pydantic", "anyio", "starlette", "uvicorn", "httpx", "sse_starlette")
               or OraError(f"the MCP server cannot start ({exc})")) from None
    if (args.token_file or args.allow_host) and not args.http:
        raise OraError("--token-file and --allow-host apply to --http only (stdio needs no token)")
    serve(path, readonly=args.mcp_read_only or bool(getattr(args, "read_only", False)), http=args.http,
          token_file=args.token_file, allow_hosts=tuple(args.allow_host), site=site)
    return 0
