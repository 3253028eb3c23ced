"""The mark an import in chunks keeps in the file, and taking back an import stopped part-way.

An import of more rows than one chunk writes in short transactions (:mod:`..chunks`). Every chunk
but the last records, in its own transaction, what it wrote in the file's ``ora_desktop_state``:
``import.pending.<run>`` (who is importing: host, process id, source, start) and
``import.pending.<run>.<n>`` (the ids the chunk added, the ids it replaced, the trash batch holding
the rows it replaced). The last chunk deletes them with the journal entry, so a finished import
leaves no mark. An import that fails part-way (an error, a cancel, the disk) takes its chunks back
at once (:func:`take_back`); one whose process was killed leaves its mark, and the next import into
the file takes it back first and says so (:func:`recover`; ``ora-desktop run check`` reports it,
``--repair`` takes it back). Taking back moves what the import wrote
to the trash (reason :data:`REASON`), then restores the rows it replaced; a take-back stopped
part-way is finished by the next one.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import engine_tables, processes, timestamps
from ..rawsql import run_sql
from ..writes import IDS_JSON

if TYPE_CHECKING:
    from ..store import Store

PREFIX = "import.pending."
REASON = "interrupted import taken back"
STATE = engine_tables.STATE
#: The imports running in this process (their marks are not stale).
_running: set[str] = set()


@dataclass
class Mark:
    """One import's mark: its key and what its committed chunks wrote."""

    run: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    chunks: int = 0  # chunks recorded (0: the import has not begun writing in chunks)

    @property
    def key(self) -> str:
        return PREFIX + self.run

    def begin(self, store: Store, source: str) -> None:
        """Record the import as under way (inside its first chunk's write)."""
        store.create_engine_tables(STATE)
        self.chunks = 0
        _set(store, self.key, {**processes.owner(), "source": source, "started": timestamps.now_sql(),
                               "phase": "importing"})

    def chunk(self, store: Store, added: list[str], replaced: list[str], batch: str | None) -> None:
        """Record what one chunk wrote (inside that chunk's write)."""
        self.chunks += 1
        _set(store, f"{self.key}.{self.chunks}", {"added": added, "replaced": replaced, "batch": batch})

    def end(self, store: Store) -> None:
        """Forget the mark (inside the last chunk's write)."""
        if self.chunks:
            _forget(store, self.run)

    def __enter__(self) -> Mark:
        _running.add(self.run)
        return self

    def __exit__(self, *exc: object) -> None:
        _running.discard(self.run)


@dataclass(frozen=True, slots=True)
class TakenBack:
    """What taking an import back did."""

    source: str
    #: Memories the import had written (added or replacing), now in the trash.
    removed: int
    #: Rows it had replaced, written back from the trash.
    restored: int

    def __str__(self) -> str:
        back = f", {_memories(self.restored)} it had replaced came back" if self.restored else ""
        return (f"an import of {self.source} stopped part-way was taken back: {_memories(self.removed)} it had "
                f"written went to the trash ('{REASON}'){back}")


def take_back(store: Store, run: str) -> TakenBack:
    """Undo the committed chunks of the import ``run`` (outside a transaction: the removal goes in
    chunks too) and forget its mark."""
    header, parts = _read(store, run)
    added = list(dict.fromkeys(i for p in parts for i in p.get("added", ())))
    replaced = list(dict.fromkeys(i for p in parts for i in p.get("replaced", ())))
    batches = list(dict.fromkeys(p["batch"] for p in parts if p.get("batch")))  # (the chunks share one)
    removed = 0
    if header.get("phase") != "restoring":  # (a take-back stopped after this step does not repeat it)
        def restoring(_removed: object) -> None:
            _set(store, PREFIX + run, {**header, "phase": "restoring"})

        # (the replaced ids come back at once: the other memories' links to them stay)
        done = store.remove_where_recoverably(f"id IN {IDS_JSON}", [json.dumps(replaced)], REASON,
                                              return_records=False, recheck="1", unlink=False)
        removed = done.count + store.remove_where_recoverably(
            f"id IN {IDS_JSON}", [json.dumps(added)], REASON, return_records=False, last_step=restoring,
            recheck="1", batch=done.batch).count
    with store.write():
        trash_ids = [t for b in batches for t in store.batch_rows(b).values()]
        restored = len(store.restore_deleted(trash_ids)[0].added) if trash_ids else 0
        _forget(store, run)
    return TakenBack(str(header.get("source", "?")), removed, restored)


def stale(store: Store) -> dict[str, str]:
    """run -> source of the imports into this file that stopped part-way without taking themselves
    back: their process, on this host, is gone. (A mark written on another host is left alone.)"""
    if not store.has_table(STATE):
        return {}
    found = {}
    for key, value in run_sql(store, f"SELECT key, value FROM {STATE} WHERE key LIKE ?",
                              [PREFIX + "%"]):
        rest = key[len(PREFIX):]
        if "." in rest or rest in _running:
            continue
        header = _load(value)
        if "host" in header and not processes.owner_runs(header):
            found[rest] = str(header.get("source", "?"))
    return found


def recover(store: Store) -> list[TakenBack]:
    """Take back every stale import of this file (see :func:`stale`)."""
    return [take_back(store, run) for run in stale(store)]


def _memories(count: int) -> str:
    return f"{count:,} memor{'y' if count == 1 else 'ies'}"


def _read(store: Store, run: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if not store.has_table(STATE):
        return {}, []
    header: dict[str, Any] = {}
    parts: list[tuple[int, dict[str, Any]]] = []
    for key, value in run_sql(store, f"SELECT key, value FROM {STATE} WHERE key = ? OR key LIKE ?",
                              [PREFIX + run, f"{PREFIX}{run}.%"]):
        tail = key[len(PREFIX + run):]
        if not tail:
            header = _load(value)
        elif tail[1:].isdigit():
            parts.append((int(tail[1:]), _load(value)))
    return header, [p for _, p in sorted(parts, key=lambda part: part[0])]


def _load(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _set(store: Store, key: str, value: dict[str, Any]) -> None:
    run_sql(store, f"INSERT OR REPLACE INTO {STATE} (key, value) VALUES (?, ?)", [key, json.dumps(value)])


def _forget(store: Store, run: str) -> None:
    if store.has_table(STATE):
        run_sql(store, f"DELETE FROM {STATE} WHERE key = ? OR key LIKE ?", [PREFIX + run, f"{PREFIX}{run}.%"])
