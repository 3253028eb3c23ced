"""The headless engine: no Qt, no qasync (an import-linter contract enforces it)."""

import sys as _sys

# peewee probes for PostgreSQL drivers when it is first imported, and psycopg (the sync driver,
# which talks to PostgreSQL itself, never through peewee) takes 0.1-0.2 s to import: hide it for
# that one import so every command and the window start without it. Sync imports it when used.
if "peewee" not in _sys.modules and "psycopg" not in _sys.modules:
    _sys.modules["psycopg"] = None  # type: ignore[assignment]
    try:
        import peewee  # noqa: F401
    finally:
        del _sys.modules["psycopg"]

from .context import ContextBundle, ContextItem, ContextSection, build_context
from .conversation import ConversationMemory, PruneResult, Recall
from .errors import (
    Conflict,
    CorruptFile,
    DatabaseLocked,
    EmptyFile,
    FileMissing,
    FileProblem,
    InvalidName,
    InvalidValue,
    NotFound,
    NotSQLite,
    OraError,
    ReadOnlyDatabase,
    WrongSchema,
)
from .home import AgentFile, OraHome, Site, check_name
from .library import Store, open_store
from .listing import Cursor, ListQuery
from .records import (
    Chain,
    Change,
    ChangeKind,
    DeletedMemory,
    Facets,
    Initiator,
    Memory,
    Neighbors,
    Removed,
    TaskContext,
)
from .schema import INIT_SQL, MEMORY_TYPES, SYNC_STATUSES, SchemaReport, create_database
from .search import (
    Hit,
    IndexState,
    ParsedQuery,
    SearchResult,
    ensure_index,
    index_state,
    parse_query,
    search_many,
    tag_facets,
)

__all__ = [
    "AgentFile", "Chain", "Change", "ChangeKind", "Conflict", "CorruptFile", "Cursor", "DatabaseLocked",
    "DeletedMemory", "EmptyFile", "Facets", "FileMissing", "FileProblem", "INIT_SQL",
    "Initiator", "InvalidName", "InvalidValue", "ListQuery", "MEMORY_TYPES", "Memory", "Neighbors",
    "NotFound", "NotSQLite", "OraError", "OraHome", "ReadOnlyDatabase", "Removed", "SYNC_STATUSES",
    "SchemaReport", "Site", "Store", "TaskContext", "WrongSchema", "check_name",
    "create_database", "open_store",
]
# The function ``search`` is not re-exported here: the name belongs to the ``core.search`` package
# (use ``from ora_desktop.core.search import search`` or ``store.search(...)``).
__all__ += [
    "ContextBundle", "ContextItem", "ContextSection", "ConversationMemory", "Hit", "IndexState",
    "ParsedQuery", "PruneResult", "Recall", "SearchResult", "build_context", "ensure_index",
    "index_state", "parse_query", "search_many", "tag_facets",
]
# Find by meaning (issue 15): duplicates and the refused add.
from .errors import Duplicate  # noqa: E402

__all__ += ["Duplicate"]
