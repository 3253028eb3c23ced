"""The agents' door: an MCP (Model Context Protocol) server over the same engine.

A thin face: every tool calls :mod:`ora_desktop.core.operations.agent_memory` and holds no rule
of its own. Start it with ``ora-desktop mcp --site S --agent A`` (one agent, stdio), ``--site S``
(every agent of the site) or ``--http HOST:PORT``.
Importing this package loads the MCP SDK; the CLI imports it only when ``mcp`` runs.
"""

from .server import build_server, serve

__all__ = ["build_server", "serve"]
