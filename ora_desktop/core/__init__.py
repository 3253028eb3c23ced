"""The headless engine: no Qt, no qasync (an import-linter contract enforces it)."""

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
from .listing import Cursor, ListQuery
from .records import Chain, Change, DeletedMemory, Facets, Memory, Neighbors, TaskContext
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
from .store import Store, open_store

__all__ = [
    "AgentFile", "Chain", "Change", "Conflict", "CorruptFile", "Cursor", "DatabaseLocked",
    "DeletedMemory", "EmptyFile", "Facets", "FileMissing", "FileProblem", "INIT_SQL",
    "InvalidName", "InvalidValue", "ListQuery", "MEMORY_TYPES", "Memory", "Neighbors",
    "NotFound", "NotSQLite", "OraError", "OraHome", "ReadOnlyDatabase", "SYNC_STATUSES",
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
