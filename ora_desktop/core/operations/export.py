"""Export memories to JSONL, CSV or a Markdown review document (one operation for every face).

JSONL and CSV carry every column of every row exactly as stored (superseded and expired rows
included) plus ``site`` and ``agent``; see :mod:`ora_desktop.core.exchange.ownformat`. A content
that is not valid UTF-8 or is a BLOB keeps its bytes beside a readable text (``content_bytes_b64``,
``content_blob_b64``): such rows are rare, so the pages are read as bytes, decoded in one call,
and only a page holding one goes row by row. Markdown is for reading: grouped by type, with
importance, health, sync status and links.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..decoding import is_undecodable_error
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
                count = markdown.write((row[:-2] for batch in batches for row in batch), stream)
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


def _json_select(columns: Sequence[str], content: str = "content") -> str:
    """One JSON object per row, built by SQLite (several times faster than json.dumps per row),
    as the bytes SQLite holds (decoded in Python, where text that is not UTF-8 can be caught).

    SQLite 3.40 writes a REAL with 15 significant digits; a value that needs more (0.1 + 0.2)
    is written with 17, so every number reads back as the same double. A BLOB content is left
    out here (JSON cannot hold one) and added by :func:`_odd_line`.
    """
    parts = ["'site', ?1", "'agent', ?2"]
    for c in MEMORY_COLUMNS:
        if c not in columns:
            parts.append(f"'{c}', NULL")
        elif c == "health_score":
            parts.append(f"'{c}', CASE WHEN typeof({c}) != 'real' OR CAST(CAST({c} AS TEXT) AS REAL) = {c} "
                         f"THEN {c} ELSE json(printf('%!.17g', {c})) END")
        elif c == "content":
            parts.append(f"'content', {content}")
        else:
            parts.append(f"'{c}', \"{c}\"")
    return f"CAST(json_object({', '.join(parts)}) AS BLOB)"


_TEXT_CONTENT = "CASE WHEN typeof(content) = 'blob' THEN NULL ELSE content END"
_RAW = "rowid, typeof(content) = 'blob'"


def _batches(stores: list[Store], chosen: list[list[str] | None], total: int, progress: Progress | None,
             cancel: Callable[[], bool] | None, as_json: bool = False) -> Iterator[Any]:
    """Pages of ``(site, agent, *MEMORY_COLUMNS, content_bytes_b64, content_blob_b64)`` rows as
    stored (or, ``as_json``, ``(JSON lines, how many)``), file by file in rowid order."""
    done = 0
    for store, pick in zip(stores, chosen, strict=True):
        site, agent = site_and_agent(store.path)
        if as_json:
            select = f"{_json_select(store.columns, _TEXT_CONTENT)}, {_RAW}"
        else:
            select = "?1, ?2, " + ", ".join("CAST(content AS BLOB)" if c == "content" else c if c in store.columns
                                            else f"NULL AS {c}" for c in MEMORY_COLUMNS) + f", {_RAW}"
        if pick is None:
            cursor = run_sql(store, f"SELECT {select} FROM memories ORDER BY rowid", (site, agent))
        else:
            cursor = run_sql(store,
                f"SELECT {select} FROM memories WHERE id IN (SELECT value FROM json_each(?3)) ORDER BY rowid",
                (site, agent, json.dumps(pick)))
        while batch := _fetch(store, cursor):
            if cancel is not None and cancel():
                raise OraError("export cancelled; nothing was written")
            yield _json_page(store, batch, site, agent) if as_json else [_row(store, r) for r in batch]
            done += len(batch)
            if progress is not None:
                progress(done, total)


def _fetch(store: Store, cursor: Any) -> list[tuple[Any, ...]]:
    """The next page; a column other than ``content`` holding text that is not UTF-8 is named."""
    try:
        return cursor.fetchmany(_PAGE)
    except sqlite3.OperationalError as exc:
        if not is_undecodable_error(exc):
            raise
        raise OraError(f"{store.path}: a memory holds text that is not valid UTF-8 outside its content ({exc}); "
                       "'ora-desktop run check --repair' repairs it, keeping the original bytes") from None


def _json_page(store: Store, batch: list[tuple[Any, ...]], site: str, agent: str) -> tuple[str, int]:
    """A page of JSON lines and how many: one decode for the page; a page holding an odd content
    goes row by row."""
    if not any(blob for _, _, blob in batch):
        try:
            return b"\n".join([r[0] for r in batch]).decode("utf-8"), len(batch)
        except UnicodeDecodeError:
            pass
    return "\n".join([_odd_line(store, line, rowid, blob, site, agent) for line, rowid, blob in batch]), len(batch)


def _odd_line(store: Store, line: bytes, rowid: int, blob: bool, site: str, agent: str) -> str:
    """One row's JSON; a content that is not UTF-8 text gets its bytes kept beside it."""
    if not blob:
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            pass
    params = (site, agent, rowid)
    bare = run_sql(store, f"SELECT {_json_select(store.columns, 'NULL')}, CAST(content AS BLOB) FROM memories "
                          "WHERE rowid = ?3", params).fetchone()
    try:
        data = json.loads(bare[0].decode("utf-8"))
    except UnicodeDecodeError:
        raise OraError(f"{store.path}: memory {data_id(bare[0])} holds text that is not valid UTF-8 outside its "
                       "content; 'ora-desktop run check --repair' repairs it, keeping the original bytes") from None
    data["content"], kept = ownformat.raw_content(bare[1], blob)
    data.update(kept)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def data_id(line: bytes) -> str:
    """The id in a JSON line that cannot be decoded (for a message)."""
    return repr(json.loads(line.decode("utf-8", "replace")).get("id"))


def _row(store: Store, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A CSV/Markdown row: the content as text, and its bytes when it is not UTF-8 text."""
    *values, _rowid, blob = row
    at = 2 + MEMORY_COLUMNS.index("content")
    data = values[at]
    if data is None:
        return (*values, None, None)
    text, kept = ownformat.raw_content(data, bool(blob))
    values[at] = text
    return (*values, kept.get(ownformat.BYTES_KEY), kept.get(ownformat.BLOB_KEY))


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
