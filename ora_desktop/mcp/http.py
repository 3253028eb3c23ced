"""Streamable HTTP, guarded: a bearer token and a Host check.

* **Where it listens.** ``--http PORT`` binds 127.0.0.1. Any other address (``0.0.0.0``, a LAN
  address) is reachable by others, so the server refuses to start without a token there.
* **Token.** ``--token-file PATH`` (its first line) or the ``ORA_MCP_TOKEN`` environment
  variable. With a token, every request must carry ``Authorization: Bearer <token>``
  (compared in constant time); others get 401 and nothing runs. On loopback a token is optional.
* **Host.** Every request's ``Host`` header must name the server (DNS-rebinding protection, the
  SDK's own check): the bound address, plus, for a wildcard bind, this machine's name, its
  fully qualified name and the loopback names, plus any ``--allow-host``.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import socket
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import TransportSecuritySettings

from ..core import OraError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

TOKEN_ENV = "ORA_MCP_TOKEN"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``PORT`` (host 127.0.0.1) into a bind address; ``ValueError`` naming the problem."""
    host, _, port_text = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"--http {value!r}: give HOST:PORT or PORT (e.g. 127.0.0.1:8765)") from None
    if not 0 < port < 65536:
        raise ValueError(f"--http {value!r}: the port must be from 1 to 65535")
    return host, port


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(token_file: str | Path | None, environ: dict[str, str] | None = None) -> str | None:
    """The bearer token from ``token_file`` (its first line) or :data:`TOKEN_ENV`; ``None`` when
    neither is given. An unreadable or empty file, or a short token, is refused in one line."""
    if token_file is not None:
        path = Path(token_file)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise OraError(f"--token-file {path}: cannot read it ({exc.__class__.__name__})") from None
        token, where = (lines[0].strip() if lines else ""), f"--token-file {path}"
    else:
        token = (environ if environ is not None else os.environ).get(TOKEN_ENV, "").strip()
        if not token:
            return None
        where = TOKEN_ENV
    if len(token) < 16:
        raise OraError(f"{where}: the token must be at least 16 characters (e.g. from 'openssl rand -hex 32')")
    return token


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> list[str]:
    """Host header values the server answers (``name:*`` allows any port)."""
    names = {host}
    if host in ("0.0.0.0", "::"):
        names |= {socket.gethostname(), socket.getfqdn(), *LOOPBACK}
    if is_loopback(host):
        names |= set(LOOPBACK)
    names |= {h for h in extra if h}
    out = []
    for name in sorted(names):
        shown = f"[{name}]" if ":" in name and not name.startswith("[") else name
        out += [shown, f"{shown}:*"]
    return out


class BearerAuth:
    """ASGI middleware: requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"), (b"www-authenticate", b'Bearer realm="ora"')]})
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token\n"})
                return
        await self.app(scope, receive, send)


def require_token(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token (one line, nothing started)."""
    if token is None and not is_loopback(host):
        raise OraError(f"--http {host}: listening beyond this machine needs a bearer token: give --token-file "
                       f"PATH or set {TOKEN_ENV} (clients then send 'Authorization: Bearer <token>')")


def http_app(server: MCPServer, host: str, token: str | None, extra_hosts: Iterable[str] = ()) -> Any:
    """The server's streamable-HTTP ASGI app with the Host check and, given a token, bearer auth."""
    require_token(host, token)
    hosts = allowed_hosts(host, extra_hosts)
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=origins)
    app = server.streamable_http_app(transport_security=security, host=host)
    return BearerAuth(app, token) if token else app


def run_http(server: MCPServer, host: str, port: int, token: str | None, extra_hosts: Iterable[str] = ()) -> None:
    """Serve over streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted."""
    import uvicorn

    app = http_app(server, host, token, extra_hosts)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
