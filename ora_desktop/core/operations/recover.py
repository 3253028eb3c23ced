"""Recover: salvage the memories of a damaged file into a new file.

The damaged file is never written: it (and its ``-wal``) is copied into a private temporary
folder and only the copy is opened. Salvage goes table first, then page by page:

1. through SQLite, ``memories`` (and ``task_context``) is read in rowid order until the first
   error, then in reverse order until the first error — on a file whose table pages are intact
   (damaged indexes, say) this reads every row, where ``sqlite3``'s ``.recover`` may give up;
2. unless both tables read from end to end, every table leaf page is then read directly
   (:mod:`ora_desktop.core.pages`), which finds the rows on intact pages behind a damaged
   interior page; rows of ids already saved are skipped.

The rows go into a new file made with the seed's init SQL, written under a temporary name and
linked into place only when complete; an existing ``out`` is refused. The report says how many
memories were saved and how many rows were seen but could not be saved.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import FileMissing, FileProblem, OraError
from ..fileheader import copy_into
from ..pages import scan_file
from ..schema import MEMORY_COLUMNS, TASK_COLUMNS, create_database

BATCH = 5000


class RecoverError(FileProblem):
    """Salvage could not start or could not write its result; the message names the file."""


@dataclass(frozen=True)
class RecoverReport:
    """What a salvage saved, and what it saw but could not save."""

    source: Path
    out: Path
    memories: int
    tasks: int
    from_table: int  # memories read through SQLite
    from_pages: int  # memories found only by reading pages
    lost_rows: int  # rows seen (cells, or counted by SQLite) that could not be saved
    unreadable_pages: int
    message: str

    @property
    def written(self) -> bool:
        """Whether ``out`` was written: nothing recovered creates no file."""
        return bool(self.memories or self.tasks)


class _Writer:
    """Rows into the new file, in batches; a row the seed's schema refuses is counted as lost."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = OFF")  # a new private file: nothing to roll back to
        self.conn.execute("PRAGMA synchronous = OFF")
        self.seen: dict[str, set[str]] = {"memories": set(), "task_context": set()}
        self.saved = {"memories": 0, "task_context": 0}
        self.lost = 0
        self.batch: dict[str, list[tuple]] = {"memories": [], "task_context": []}

    def add(self, table: str, row: tuple) -> bool:
        key = row[0]
        if not isinstance(key, str) or not key or key in self.seen[table]:
            return False
        self.seen[table].add(key)
        self.batch[table].append(row)
        if len(self.batch[table]) >= BATCH:
            self.flush(table)
        return True

    def flush(self, table: str) -> None:
        rows, self.batch[table] = self.batch[table], []
        if not rows:
            return
        columns = MEMORY_COLUMNS if table == "memories" else TASK_COLUMNS
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        self.conn.execute("BEGIN")
        try:
            self.conn.executemany(sql, rows)
            self.saved[table] += len(rows)
        except sqlite3.Error:
            for row in rows:  # one bad row must not cost the batch
                try:
                    self.conn.execute(sql, row)
                    self.saved[table] += 1
                except sqlite3.Error:
                    self.lost += 1
        self.conn.execute("COMMIT")

    def close(self) -> None:
        for table in self.batch:
            self.flush(table)
        self.conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    try:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    except sqlite3.Error:
        return []


def _read_table(conn: sqlite3.Connection, table: str, wanted: tuple[str, ...], columns: list[str],
                add: Callable[[str, tuple], bool]) -> tuple[int, int | None, bool]:
    """Rows through SQLite, forwards then backwards, each until its first error.

    Returns (rows saved, how many rows SQLite counts in the table or None if it cannot, whether
    the whole table read without an error)."""
    select = ", ".join(c if c in columns else "NULL" for c in wanted)
    saved, complete = 0, False
    for order in ("ASC", "DESC"):
        try:
            for row in conn.execute(f"SELECT {select} FROM {table} ORDER BY rowid {order}"):
                saved += add(table, tuple(row))
        except sqlite3.Error:
            continue
        complete = order == "ASC"
        break  # the whole table read forwards: nothing to gain backwards
    try:
        total = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    except sqlite3.Error:
        total = None
    return saved, total, complete


def _looks_like(row: tuple) -> bool:
    """A row keyed by a text id, with text in its second column (content, task description)."""
    return isinstance(row[0], str) and bool(row[0]) and isinstance(row[1], str | bytes)


def _copy_live_bytes(source: Path, target: Path) -> None:
    """Byte copy of a file this process may hold connections to, read through the kept-open
    descriptor (:mod:`..fileheader`): closing a descriptor of it would drop their locks."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        copy_into(source, fd)
    finally:
        os.close(fd)


def recover(source: str | Path, out: str | Path) -> RecoverReport:
    """Salvage ``source`` into the new file ``out``; see the module docstring."""
    source, out = Path(source).expanduser(), Path(out).expanduser()
    if not source.is_file():
        raise FileMissing(source, "no such file to recover")
    if out.resolve() == source.resolve():
        raise RecoverError(out, "is the damaged file itself; name a new file")
    if out.exists() or Path(f"{out}-wal").exists():
        raise RecoverError(out, "already exists; recover writes a new file and never overwrites one")
    if not out.parent.is_dir():
        raise RecoverError(out, f"its folder {out.parent} does not exist")
    temp = out.parent / f".{out.name}.recovering-{os.getpid()}"
    work = Path(tempfile.mkdtemp(prefix="ora-recover-"))
    try:
        copy = work / "damaged.site.db"
        _copy_live_bytes(source, copy)
        if Path(f"{source}-wal").exists():
            _copy_live_bytes(Path(f"{source}-wal"), Path(f"{copy}-wal"))
        create_database(temp)
        writer = _Writer(temp)
        try:
            report = _salvage(copy, writer)
        finally:
            writer.close()
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temp, 0o600)
        if report[0] or report[1]:  # nothing recovered: no empty agent file is left behind
            try:
                os.link(temp, out)  # never replaces a file that appeared meanwhile
            except FileExistsError:
                raise RecoverError(out, "already exists; recover writes a new file and never overwrites one") from None
    except OSError as exc:
        raise RecoverError(out, f"could not write the recovered file ({exc.strerror or exc})") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{temp}{suffix}").unlink()
    memories, tasks, from_table, lost, pages_bad = report
    if not (memories or tasks):
        message = (f"nothing could be recovered from {source}: no memory or task row was readable, so no file "
                   f"was written; {lost} rows were seen" + (f", {pages_bad} pages unreadable" if pages_bad else ""))
        return RecoverReport(source, out, 0, 0, 0, 0, lost, pages_bad, message)
    message = (f"recovered {memories} memories ({from_table} read through SQLite, {memories - from_table} "
               f"from intact pages) and {tasks} task rows from {source} into {out}; "
               f"{lost} rows could not be saved" + (f", {pages_bad} pages unreadable" if pages_bad else ""))
    return RecoverReport(source, out, memories, tasks, from_table, memories - from_table, lost, pages_bad, message)


def _salvage(copy: Path, writer: _Writer) -> tuple[int, int, int, int, int]:
    counted: dict[str, int | None] = {"memories": None, "task_context": None}
    layout = {"memories": list(MEMORY_COLUMNS), "task_context": list(TASK_COLUMNS)}
    from_table = 0
    complete = True  # every table read from end to end through SQLite
    try:
        conn = sqlite3.connect(copy, isolation_level=None)
        try:
            for table, wanted in (("memories", MEMORY_COLUMNS), ("task_context", TASK_COLUMNS)):
                columns = _columns(conn, table)
                if columns:
                    layout[table] = columns  # page records hold the file's own columns, in its order
                    saved, counted[table], whole = _read_table(conn, table, wanted, columns, writer.add)
                    complete = complete and whole
                    if table == "memories":
                        from_table = saved
                elif table == "memories":
                    complete = False
        finally:
            conn.close()
    except sqlite3.Error:
        complete = False  # not even the schema reads: the pages are all there is
    if complete:  # the b-trees read from end to end: no leaf page is cut off from them
        writer.flush("memories")
        writer.flush("task_context")
        lost = sum(max(0, (counted[t] or 0) - writer.saved[t]) for t in counted)
        return writer.saved["memories"], writer.saved["task_context"], from_table, lost, 0

    picks = {t: [cols.index(c) if c in cols else None for c in (MEMORY_COLUMNS if t == "memories" else TASK_COLUMNS)]
             for t, cols in layout.items()}

    def sink(record: list[Any]) -> None:
        for table in ("memories", "task_context"):
            if len(record) == len(layout[table]):
                row = tuple(None if i is None else record[i] for i in picks[table])
                if _looks_like(row):
                    writer.add(table, row)
                    return

    try:
        scan = scan_file(copy, sink)
    except (OSError, ValueError) as exc:
        raise OraError(f"{copy}: cannot be read page by page ({exc})") from exc
    writer.flush("memories")
    writer.flush("task_context")
    seen = {t: max(len(writer.seen[t]), counted[t] or 0) for t in writer.seen}
    lost = sum(max(0, seen[t] - writer.saved[t]) for t in seen) + scan.bad_cells
    return writer.saved["memories"], writer.saved["task_context"], from_table, lost, scan.unreadable_pages
