"""Memory that moves: our JSONL/CSV/Markdown exchange files and readers for the neighbouring
stores (context-memory, zoo, chat-log, semantica). The operations that use them live in
``core.operations.export`` and ``core.operations.importing``; ``pending`` holds the mark an import
in chunks keeps in the file, and takes back one stopped part-way."""

from .detect import FORMATS, Source, open_source
from .rows import BadRow, BadSource, Incoming, Skipped, derived_id
from .sources import ImportOptions

__all__ = ["BadRow", "BadSource", "FORMATS", "ImportOptions", "Incoming", "Skipped", "Source", "derived_id",
           "open_source"]
