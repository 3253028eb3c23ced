"""The headless engine: no Qt, no qasync (an import-linter contract enforces it).

The public names below are imported on first use (PEP 562 ``__getattr__``), so ``import
ora_desktop`` and the window's start do not load what they do not need yet (the search engine, the
context builder, conversation archiving). ``tests/unit/test_lazy_imports.py`` imports every name,
so a broken import still fails loudly.
"""

import sys as _sys
from typing import TYPE_CHECKING

from . import lazy as _lazy

# peewee probes for PostgreSQL drivers when it is first imported, and psycopg (the sync driver,
# which talks to PostgreSQL itself, never through peewee) takes 0.1-0.2 s to import: hide it for
# that one import so every command and the window start without it. Sync imports it when used.
if "peewee" not in _sys.modules and "psycopg" not in _sys.modules:
    _sys.modules["psycopg"] = None  # type: ignore[assignment]
    try:
        import peewee  # noqa: F401
    finally:
        del _sys.modules["psycopg"]

#: Each public name and the module of core that defines it.
_PUBLIC = {
    "context": ("ContextBundle", "ContextItem", "ContextSection", "build_context"),
    "conversation": ("ConversationMemory", "PruneResult", "Recall"),
    "errors": ("Conflict", "CorruptFile", "DatabaseLocked", "Duplicate", "EmptyFile", "FileMissing",
               "FileProblem", "InvalidName", "InvalidValue", "NotFound", "NotSQLite", "OraError",
               "ReadOnlyDatabase", "WrongSchema"),
    "home": ("AgentFile", "OraHome", "Site", "check_name"),
    "library": ("Store", "open_store"),
    "listing": ("Cursor", "ListQuery"),
    "records": ("Chain", "Change", "ChangeKind", "DeletedMemory", "Facets", "Initiator", "Memory",
                "Neighbors", "Removed", "TaskContext"),
    "schema": ("INIT_SQL", "MEMORY_TYPES", "SYNC_STATUSES", "SchemaReport", "create_database"),
    # The function ``search`` is not re-exported here: the name belongs to the ``core.search``
    # package (use ``from ora_desktop.core.search import search`` or ``store.search(...)``).
    "search": ("Hit", "IndexState", "ParsedQuery", "SearchResult", "ensure_index", "index_state",
               "parse_query", "search_many", "tag_facets"),
}
__all__, __getattr__, __dir__ = _lazy.exports(__name__, globals(), _PUBLIC)


if TYPE_CHECKING:  # the names, for type checkers and readers (nothing is imported at run time)
    from .context import ContextBundle, ContextItem, ContextSection, build_context  # noqa: F401
    from .conversation import ConversationMemory, PruneResult, Recall  # noqa: F401
    from .errors import (  # noqa: F401
        Conflict,
        CorruptFile,
        DatabaseLocked,
        Duplicate,
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
    from .home import AgentFile, OraHome, Site, check_name  # noqa: F401
    from .library import Store, open_store  # noqa: F401
    from .listing import Cursor, ListQuery  # noqa: F401
    from .records import (  # noqa: F401
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
    from .schema import INIT_SQL, MEMORY_TYPES, SYNC_STATUSES, SchemaReport, create_database  # noqa: F401
    from .search import (  # noqa: F401
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
