"""Export memories to JSONL, CSV or a Markdown review document (one operation for every face).

JSONL and CSV carry every column of every row exactly as stored (superseded and expired rows
included) plus ``site`` and ``agent``; see :mod:`ora_desktop.core.exchange.ownformat`. Markdown is
for reading: grouped by type, with importance, health, sync status and links.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import InvalidValue, OraError
from ..exchange import markdown, ownformat
from ..home import SUFFIX
from ..private import open_private
from ..rawsql import all_rows, run_sql
from ..schema import MEMORY_COLUMNS
from ..store import Store, open_store
from .searching import search_file

EXPORT_FORMATS = ("jsonl", "csv", "md")
Progress = Callable[[int, int], None]
_PAGE = 5000


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What an export wrote: where, in which format, how many memories, from which files."""

    path: Path | None
    format: str
    count: int
    files: tuple[Path, ...]


def site_and_agent(path: Path) -> tuple[str, str]:
    """``(site, agent)`` of a memory file: its folder's name and its name without ``.site.db``."""
    name = path.name
    agent = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else path.stem
    return path.parent.name, agent


def export_memories(sources: Sequence[Store | str | Path], out: str | Path | IO[str] | None = None,
                    format: str = "jsonl", *, query: str | None = None, ids: Sequence[str] | None = None,
                    rowids: Sequence[int] | None = None, progress: Progress | None = None,
                    cancel: Callable[[], bool] | None = None) -> ExportResult:
    """Write the memories of ``sources`` (open stores or paths, read-only) to ``out``.

    * ``out``: a path (written under a temporary name, renamed when complete), an open text
      stream, or ``None`` for standard output.
    * ``query``: only memories the search query finds (the search language of ``search``).
    * ``ids``: only these memories (a selection in the window); ``rowids``: only these rows (what
      a view shows, e.g. the current search results; one file).
    * ``progress(done, total)`` after every page; ``cancel()`` returning True stops the export
      and leaves no file behind (``OraError``).
    """
    if format not in EXPORT_FORMATS:
        raise InvalidValue("format", f"{format!r} is not one of {', '.join(EXPORT_FORMATS)}")
    with contextlib.ExitStack() as stack:
        stores = [s if isinstance(s, Store) else stack.enter_context(open_store(s, readonly=True)) for s in sources]
        _refuse_overwriting_a_source(out, stores)
        chosen = [_chosen_ids(store, query, ids, rowids) for store in stores]
        total = sum(store.count(superseded="show") if pick is None else len(pick)
                    for store, pick in zip(stores, chosen, strict=True))
        with _output(out) as stream:
            batches = _batches(stores, chosen, total, progress, cancel, as_json=format == "jsonl")
            if format == "jsonl":
                stream.write(ownformat.header_line())
                count = ownformat.write_json_lines(batches, stream)
            elif format == "csv":
                count = ownformat.write_csv((row for batch in batches for row in batch), stream)
            else:
                count = markdown.write((row for batch in batches for row in batch), stream)
    path = Path(out) if isinstance(out, (str, Path)) else None
    return ExportResult(path, format, count, tuple(s.path for s in stores))


def _refuse_overwriting_a_source(out: object, stores: list[Store]) -> None:
    """An export never replaces the memory file it reads (or its -wal/-shm)."""
    if not isinstance(out, (str, Path)):
        return
    target = Path(out).expanduser().resolve()
    for store in stores:
        source = store.path.resolve()
        if target in (source, Path(f"{source}-wal"), Path(f"{source}-shm")):
            raise OraError(f"{out}: is the memory file being exported; choose another file to export to")


def _chosen_ids(store: Store, query: str | None, ids: Sequence[str] | None,
                rowids: Sequence[int] | None) -> list[str] | None:
    """The ids to export from ``store``, or ``None`` for every row."""
    chosen = None if ids is None else list(dict.fromkeys(ids))
    if rowids is not None:
        found = [r[0] for r in all_rows(store,
            "SELECT id FROM memories WHERE rowid IN (SELECT value FROM json_each(?))", [json.dumps(list(rowids))])]
        chosen = found if chosen is None else _both(found, chosen)
    if query is not None:
        result = search_file(store, query, limit=max(1, store.count(superseded="show")))
        found = [hit.id for hit in result.hits]
        chosen = found if chosen is None else _both(found, chosen)
    return chosen


def _both(found: list[str], chosen: list[str]) -> list[str]:
    wanted = set(chosen)
    return [i for i in found if i in wanted]


def _json_select(columns: Sequence[str]) -> str:
    """One JSON object per row, built by SQLite (several times faster than json.dumps per row).

    SQLite 3.40 writes a REAL with 15 significant digits; a value that needs more (0.1 + 0.2)
    is written with 17, so every number reads back as the same double.
    """
    parts = ["'site', ?1", "'agent', ?2"]
    for c in MEMORY_COLUMNS:
        if c not in columns:
            parts.append(f"'{c}', NULL")
        elif c == "health_score":
            parts.append(f"'{c}', CASE WHEN typeof({c}) != 'real' OR CAST(CAST({c} AS TEXT) AS REAL) = {c} "
                         f"THEN {c} ELSE json(printf('%!.17g', {c})) END")
        else:
            parts.append(f"'{c}', \"{c}\"")
    return f"json_object({', '.join(parts)})"


def _batches(stores: list[Store], chosen: list[list[str] | None], total: int, progress: Progress | None,
             cancel: Callable[[], bool] | None, as_json: bool = False) -> Iterator[list[tuple[Any, ...]]]:
    """Pages of ``(site, agent, *MEMORY_COLUMNS)`` rows exactly as stored (or, ``as_json``, of
    ``(json_line,)``), file by file in rowid order."""
    done = 0
    for store, pick in zip(stores, chosen, strict=True):
        site, agent = site_and_agent(store.path)
        if as_json:
            select = _json_select(store.columns)
        else:
            select = "?1, ?2, " + ", ".join(c if c in store.columns else f"NULL AS {c}" for c in MEMORY_COLUMNS)
        if pick is None:
            cursor = run_sql(store, f"SELECT {select} FROM memories ORDER BY rowid", (site, agent))
        else:
            cursor = run_sql(store,
                f"SELECT {select} FROM memories WHERE id IN (SELECT value FROM json_each(?3)) ORDER BY rowid",
                (site, agent, json.dumps(pick)))
        while batch := cursor.fetchmany(_PAGE):
            if cancel is not None and cancel():
                raise OraError("export cancelled; nothing was written")
            yield batch
            done += len(batch)
            if progress is not None:
                progress(done, total)


@contextlib.contextmanager
def _output(out: str | Path | IO[str] | None) -> Iterator[IO[str]]:
    """A text stream for ``out``; a path is written to ``.name.tmp`` and renamed when complete."""
    if out is None:
        yield sys.stdout
        return
    if not isinstance(out, (str, Path)):
        yield out
        return
    path = Path(out).expanduser()
    if path.is_dir():
        raise OraError(f"{path}: is a folder; give a file name to export to")
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        # 0600 whatever the umask (it holds every memory); the rename keeps the mode.
        fd = open_private(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with open(fd, "w", encoding="utf-8", newline="") as stream:
            yield stream
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
