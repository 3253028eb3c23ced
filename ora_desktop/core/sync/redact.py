"""Keeping the password out of every message: URLs and libpq error text, redacted."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from ..errors import OraError

MASK = "***"
_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)", re.IGNORECASE)
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


class SyncError(OraError):
    """A sync could not run (bad URL, server down, refused login, foreign server table...).

    The message is one line, names the server with its password redacted, and says what is wrong.
    """


def password_of(url: str) -> str | None:
    """The password written in a ``postgresql://`` URL or a ``password=`` keyword, if any."""
    try:
        parts = urlsplit(url)
        if parts.password:
            return unquote(parts.password)
    except ValueError:
        pass
    match = _KEYWORD_PASSWORD.search(url)
    if match:
        return match.group(2).strip("'")
    return None


def redact(text: str, url: str | None = None) -> str:
    """``text`` with every password replaced by ``***`` (in URLs, ``password=`` and, when the
    ``url`` it came from is given, wherever that URL's password appears literally)."""
    out = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{MASK}{m.group(3)}", str(text))
    out = _KEYWORD_PASSWORD.sub(lambda m: f"{m.group(1)}{MASK}", out)
    secret = password_of(url) if url else None
    if secret:
        out = out.replace(secret, MASK)
    return out


def describe(url: str) -> str:
    """The server as shown to people: the URL without its password (and without options)."""
    try:
        parts = urlsplit(url)
        if parts.scheme.lower() in ("postgres", "postgresql"):
            user = f"{parts.username}@" if parts.username else ""
            port = f":{parts.port}" if parts.port else ""
            host = parts.hostname or "localhost"
            return f"{parts.scheme}://{user}{host}{port}{parts.path}"
    except ValueError:
        pass
    return redact(url, url)


def one_line(text: object) -> str:
    """The first line of a (libpq) message, without trailing detail."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return str(text).strip()
