"""The optional parts of the install (``pip install 'ora-desktop[EXTRA]'``) and the one-line
error a face gives when the part it needs is missing.

``pip install ora-desktop`` is the library and the command line; the window (``gui``), the MCP
server (``mcp``), sync with PostgreSQL (``sync``) and search by meaning (``meaning``) each
bring their own packages (``all`` brings every one).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import OraError

#: What each extra makes work, in the words of the error message.
EXTRAS = {
    "gui": "the window",
    "mcp": "the MCP server",
    "sync": "sync with a PostgreSQL server",
    "meaning": "search by meaning",
}


class MissingExtra(OraError):
    """A face or feature needs an optional dependency that is not installed."""

    def __init__(self, extra: str, module: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(f"{EXTRAS[extra]} needs the '{extra}' extra ({module} is not installed): "
                         f"pip install 'ora-desktop[{extra}]'")


def missing(exc: ImportError, extra: str, *modules: str) -> MissingExtra | None:
    """A :class:`MissingExtra` when ``exc`` says one of ``modules`` (top-level names) is not
    installed; ``None`` for any other import failure (a missing system library, a bug), which
    should be reported as it is."""
    name = (exc.name or "").split(".")[0]
    if isinstance(exc, ModuleNotFoundError) and name in modules:
        return MissingExtra(extra, name)
    return None


def need(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtra` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        problem = missing(exc, extra, module.split(".")[0])
        if problem is None:
            raise
        raise problem from None
