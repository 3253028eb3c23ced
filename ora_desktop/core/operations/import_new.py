"""Import into a new agent: the file is created where ``ora-desktop`` creates agents (the seed's
init SQL), and an import that fails leaves no file (and no folder it made) behind.

One operation for every face: ``ora-desktop import SOURCE --site S --agent NEW --create`` and the
window's import dialog ("A new agent…"). A dry run previews against an empty scratch file, so
nothing is created until the person imports. The import into the new file is one transaction
(``whole``): no agent has a file open that did not exist a moment ago, so none waits for its lock,
and a process killed part-way leaves the new file empty (SQLite takes the transaction back), never
half-imported.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from ..errors import OraError
from ..schema import create_database
from ..store import open_store
from .importing import ImportResult, import_memories

_BESIDE = ("-wal", "-shm", "-journal")


def import_into_new(path: str | Path, source: str | Path, format: str = "auto", *, dry_run: bool = False,
                    **options: Any) -> ImportResult:
    """Create the agent file ``path`` and import ``source`` into it (``options`` as for
    :func:`~.importing.import_memories`). Refuses a file that exists; on any failure the created
    file is removed. ``dry_run`` creates nothing: the preview runs against an empty scratch file."""
    path = Path(path).expanduser()
    if path.exists():
        raise OraError(f"{path}: already exists; choose it as an existing agent, or another name")
    if dry_run:
        with tempfile.TemporaryDirectory(prefix="ora-import-") as scratch:
            empty = Path(scratch) / path.name
            create_database(empty)
            with open_store(empty) as store:
                result = import_memories(store, source, format, dry_run=True, **options)
        return dataclasses.replace(result, target=path)
    made = [folder for folder in (path.parent, path.parent.parent) if not folder.exists()]
    create_database(path)
    try:
        with open_store(path) as store:
            return import_memories(store, source, format, whole=True, **options)
    except BaseException:
        _remove(path, made)
        raise


def _remove(path: Path, made: list[Path]) -> None:
    """Take back a file this operation created (closed by then), its companions and new folders."""
    for name in (path, *(path.with_name(path.name + tail) for tail in _BESIDE)):
        name.unlink(missing_ok=True)
    for folder in made:  # innermost first
        try:
            folder.rmdir()
        except OSError:
            pass
