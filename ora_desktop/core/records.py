"""Plain immutable records returned by the public API (never ORM instances)."""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from enum import Enum
from typing import Any

from . import timestamps
from .decoding import Replaced
from .fingerprint import row_fingerprint
from .schema import MEMORY_COLUMNS, RECALL_THRESHOLD

_READ = object()  # Memory._row of a record read from a row its fields and texts give back exactly
_NOT_SPACE = re.compile(r"\S")
_LINE_END = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")  # where str.splitlines splits
_SQL_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")  # SQLite's datetime('now'), read as UTC


@dataclass(frozen=True, slots=True)
class Memory:
    """One row of ``memories``. Timestamps are aware UTC datetimes whatever the file holds."""

    id: str
    content: str
    type: str | None = "fact"
    importance: int | None = 5
    access_count: int = 0
    last_accessed_at: datetime | None = None
    health_score: float | None = 1.0
    related_to: tuple[str, ...] = ()
    superseded_by: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    synced_at: datetime | None = None
    sync_status: str | None = "pending"
    #: ``related_to`` held text that is not a JSON array of ids (it reads as empty).
    related_malformed: bool = False
    #: Raw text of timestamp columns that could not be parsed (column -> text).
    unparsed: tuple[tuple[str, str], ...] = ()
    #: Columns (id, content) whose stored bytes were not valid UTF-8: shown with U+FFFD; see ``check``.
    undecodable: tuple[str, ...] = ()
    #: Rowid at read time; an ordering key for views, not an identity (VACUUM renumbers it).
    rowid: int | None = field(default=None, compare=False)
    # What the row held where the record converts it (the five timestamps' and related_to's stored
    # text; ``_row``: the whole row when another value was converted too, else _READ), so that
    # :attr:`version` is computed only when asked for. Strings in slots, not a tuple per record:
    # reading rows then allocates nothing the garbage collector has to visit.
    _last_accessed_text: Any = field(default=None, init=False, compare=False, repr=False)
    _related_text: Any = field(default=None, init=False, compare=False, repr=False)
    _created_text: Any = field(default=None, init=False, compare=False, repr=False)
    _updated_text: Any = field(default=None, init=False, compare=False, repr=False)
    _expires_text: Any = field(default=None, init=False, compare=False, repr=False)
    _synced_text: Any = field(default=None, init=False, compare=False, repr=False)
    _row: Any = field(default=None, init=False, compare=False, repr=False)  # None: built by hand

    @property
    def version(self) -> str | None:
        """The token an edit passes back to detect a change made underneath: the fingerprint of
        every column of the row as read (:func:`~ora_desktop.core.fingerprint.row_fingerprint`);
        ``None`` for a record built by hand."""
        row = self._row
        if row is _READ:
            row = (self.id, self.content, self.type, self.importance, self.access_count,
                   self._last_accessed_text, self.health_score, self._related_text, self.superseded_by,
                   self._created_text, self._updated_text, self._expires_text, self._synced_text,
                   self.sync_status)
        return None if row is None else row_fingerprint(row)

    def sql_time(self, column: str) -> str | None:
        """Timestamp ``column`` as SQLite's UTC text (``YYYY-MM-DD HH:MM:SS``): the stored text
        when it is that already (no formatting), else the value formatted; ``None`` when unset."""
        value = getattr(self, column)
        if value is None:
            return None
        stored = getattr(self, f"_{column.removesuffix('_at')}_text")
        return stored if isinstance(stored, str) and _SQL_TIME.fullmatch(stored) else timestamps.to_sql(value)

    @property
    def updated_at_text(self) -> str | None:
        """``updated_at`` as the file holds it (any format), for keys that compare it as stored."""
        return self._updated_text

    @property
    def is_dirty(self) -> bool:
        """Changed since the last sync (``updated_at > synced_at``, or never synced)."""
        if self.sync_status == "local_only":
            return False
        if self.synced_at is None:
            return True
        return self.updated_at is not None and self.updated_at > self.synced_at

    @property
    def sync_state(self) -> str:
        """Where the memory stands with sync, in words; the one definition every face shows:
        ``local only``, ``never synced``, ``changed since its last sync`` (dirty) or ``in sync``."""
        if self.sync_status == "local_only":
            return "local only"
        if self.synced_at is None:
            return "never synced"
        return "changed since its last sync" if self.is_dirty else "in sync"

    @property
    def is_superseded(self) -> bool:
        """A newer memory replaces this one."""
        return bool(self.superseded_by)

    def is_expired(self, at: datetime | None = None) -> bool:
        """Its ``expires_at`` is before ``at`` (default: now)."""
        return self.expires_at is not None and self.expires_at < (at or timestamps.now())

    @property
    def recallable(self) -> bool:
        """Whether the seed's recall query can return it (health above 0.3)."""
        health = self.health_score
        return isinstance(health, (int, float)) and health > RECALL_THRESHOLD

    @property
    def title(self) -> str:
        """The first non-empty line of the content, stripped (read from where it starts to where
        it ends, not by splitting a content of megabytes into lines)."""
        found = _NOT_SPACE.search(self.content)  # everything before it is blank: its line is the first
        if found is None:
            return ""
        end = _LINE_END.search(self.content, found.start())
        return self.content[found.start():end.start() if end else None].rstrip()


@dataclass(frozen=True, slots=True)
class TaskContext:
    """The ``task_context`` row of a spawned task agent."""

    id: str
    task_description: str
    input_data: object | None = None
    output_data: object | None = None
    status: str | None = "active"
    created_at: datetime | None = None
    completed_at: datetime | None = None
    input_raw: str | None = None
    output_raw: str | None = None


class ChangeKind(Enum):
    """What kind of write a :class:`Change` reports."""

    ADDED = "added"
    EDITED = "edited"
    DELETED = "deleted"
    RESTORED = "restored"
    MERGED = "merged"
    UNMERGED = "unmerged"
    SUPERSEDED = "superseded"
    LINKED = "linked"
    PROMOTED = "promoted"
    TOUCHED = "touched"
    UNDONE = "undone"
    JOB = "job"
    #: Something changed but nobody knows which rows (another process wrote, a restore swapped
    #: the file): views reload everything.
    RELOAD = "reload"


class Initiator(Enum):
    """Who asked for a write."""

    USER = "user"  # a person, through the window or the CLI
    EXTERNAL = "external"  # an agent or any other program writing the file (seen from the window)
    JOB = "job"  # a maintenance job (window, daemon or ``ora-desktop run``)
    SYNC = "sync"
    IMPORT = "import"


EXTERNAL_SOURCE = "external"


@dataclass(frozen=True, slots=True)
class Change:
    """What a write did: ids added, changed and removed, what kind of write, and who asked for it.

    Views repaint the rows in ``changed`` and reload their key lists only when
    :attr:`membership_changed`. ``kind`` defaults from the ids (only added: ``ADDED``, only
    removed: ``DELETED``, none: ``RELOAD``, otherwise ``EDITED``). ``source`` is a free-text label
    kept for older readers; ``Change(source="external")`` still means "another program wrote,
    reload", and such a change reads back with ``initiator`` ``EXTERNAL``.
    """

    added: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    source: str = ""
    kind: ChangeKind | None = None
    initiator: Initiator | None = None
    #: The columns an in-place edit of ``changed`` wrote (at most: a value the feed could not
    #: read counts as written), ``None`` when not known (then views assume any may have changed).
    columns: frozenset[str] | None = None
    #: The rowids the ``removed`` rows had, when known (the change feed reads them from the
    #: log): a view holding row keys drops these without reading its keys again.
    removed_rowids: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        if self.kind is None:
            if not (self.added or self.changed or self.removed):
                kind = ChangeKind.RELOAD
            elif self.added and not (self.changed or self.removed):
                kind = ChangeKind.ADDED
            elif self.removed and not (self.changed or self.added):
                kind = ChangeKind.DELETED
            else:
                kind = ChangeKind.EDITED
            object.__setattr__(self, "kind", kind)
        if self.initiator is None:
            external = self.source == EXTERNAL_SOURCE
            object.__setattr__(self, "initiator", Initiator.EXTERNAL if external else Initiator.USER)
        elif self.initiator is Initiator.EXTERNAL and not self.source:
            object.__setattr__(self, "source", EXTERNAL_SOURCE)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    @property
    def ids(self) -> frozenset[str]:
        """Every id the change touched."""
        return self.added | self.changed | self.removed

    @property
    def membership_changed(self) -> bool:
        """Rows may have come or gone: a view's key list must be re-read. True also when the
        change names no ids at all (another process, a job, a restore: rows unknown)."""
        return bool(self.added or self.removed or not self.changed)

    @classmethod
    def reload(cls, initiator: Initiator = Initiator.EXTERNAL, source: str = EXTERNAL_SOURCE) -> Change:
        """Something changed, rows unknown (another process, a job, a restored backup). Its
        ``source`` stays ``"external"`` by default, which readers of ``source`` take as "reload"."""
        return cls(source=source, kind=ChangeKind.RELOAD, initiator=initiator)

    def but(self, **values: Any) -> Change:
        """A copy with ``kind``, ``initiator`` or ``source`` replaced."""
        return replace(self, **values)


class Removed(tuple):
    """The records a delete removed (a tuple, as before), with the trash ``batch`` that holds
    them, how many rows went (``count``, also when the records were not read) and the ``change``."""

    batch: str | None
    count: int
    change: Change

    def __new__(cls, records: Sequence[Memory] = (), batch: str | None = None, count: int | None = None,
                change: Change | None = None) -> Removed:
        self = super().__new__(cls, records)
        self.batch = batch
        self.count = len(records) if count is None else count
        self.change = change if change is not None else Change()
        return self


@dataclass(frozen=True, slots=True)
class Chain:
    """A supersession chain, newest first. ``live`` is the newest memory of the chain."""

    members: tuple[Memory, ...]
    live: Memory | None
    cycle: bool = False
    dangling: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Neighbors:
    """Memories reachable over ``related_to`` within N hops, with their distance."""

    origin: str
    found: tuple[tuple[Memory, int], ...]
    dangling: tuple[str, ...] = ()
    malformed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Facets:
    """Counts per facet value for the rows matching a filter."""

    total: int
    types: dict[str, int]
    sync_statuses: dict[str, int]
    importance: dict[int, int]
    health_buckets: dict[str, int]


@dataclass(frozen=True, slots=True)
class DeletedMemory:
    """A row kept in the recoverable trash after a delete, expiry or retention run."""

    trash_id: int
    memory: Memory
    deleted_at: datetime | None
    reason: str
    batch: str


_parse_time = timestamps.parse
_TIME_FIELDS = ("last_accessed_at", "created_at", "updated_at", "expires_at", "synced_at")
# Memory's slot setters in field order. A frozen dataclass's __init__ goes through
# object.__setattr__ once per field (~4 µs a record); setting the slots directly costs ~1.5 µs.
# Adding a field to Memory without adding it here fails at import, not silently.
(_set_id, _set_content, _set_type, _set_importance, _set_access_count, _set_last_accessed_at,
 _set_health_score, _set_related_to, _set_superseded_by, _set_created_at, _set_updated_at, _set_expires_at,
 _set_synced_at, _set_sync_status, _set_related_malformed, _set_unparsed, _set_undecodable, _set_rowid,
 _set_last_accessed_text, _set_related_text, _set_created_text, _set_updated_text, _set_expires_text,
 _set_synced_text, _set_row) = (Memory.__dict__[f.name].__set__ for f in fields(Memory))
_new = object.__new__


def row_to_memory(row: Sequence[Any]) -> Memory:
    """Build a :class:`Memory` from ``(rowid, *MEMORY_COLUMNS)`` (the hot path of every read)."""
    (rowid, id_, content, type_, importance, access_count, last_accessed_at, health, related,
     superseded_by, created_at, updated_at, expires_at, synced_at, sync_status) = row
    accessed = None if last_accessed_at is None else _parse_time(last_accessed_at)
    created = None if created_at is None else _parse_time(created_at)
    updated = created if updated_at == created_at else (None if updated_at is None else _parse_time(updated_at))
    expires = None if expires_at is None else _parse_time(expires_at)
    synced = None if synced_at is None else _parse_time(synced_at)
    unparsed: tuple[tuple[str, str], ...] = ()
    if ((accessed is None and last_accessed_at) or (created is None and created_at)
            or (updated is None and updated_at) or (expires is None and expires_at)
            or (synced is None and synced_at)):
        raw = (last_accessed_at, created_at, updated_at, expires_at, synced_at)
        parsed = (accessed, created, updated, expires, synced)
        unparsed = tuple(
            (name, str(text)) for name, text, value in zip(_TIME_FIELDS, raw, parsed, strict=True)
            if value is None and text not in (None, "")
        )
    if related:
        related_ids, malformed = parse_related(related)
    else:
        related_ids, malformed = (), False
    memory = _new(Memory)
    _set_id(memory, id_ if id_.__class__ is str else str(id_))
    _set_content(memory, content if content.__class__ is str else ("" if content is None else str(content)))
    _set_type(memory, type_)
    _set_importance(memory, importance)
    _set_access_count(memory, access_count or 0)
    _set_last_accessed_at(memory, accessed)
    _set_health_score(memory, health)
    _set_related_to(memory, related_ids)
    _set_superseded_by(memory, superseded_by or None)
    _set_created_at(memory, created)
    _set_updated_at(memory, updated)
    _set_expires_at(memory, expires)
    _set_synced_at(memory, synced)
    _set_sync_status(memory, sync_status)
    _set_related_malformed(memory, malformed)
    _set_unparsed(memory, unparsed)
    _set_undecodable(memory, () if content.__class__ is str and id_.__class__ is str else _replaced(row))
    _set_rowid(memory, rowid)
    _set_last_accessed_text(memory, last_accessed_at)
    _set_related_text(memory, related)
    _set_created_text(memory, created_at)
    _set_updated_text(memory, updated_at)
    _set_expires_text(memory, expires_at)
    _set_synced_text(memory, synced_at)
    # Fields that hold the stored value itself (the usual case) need no copy of the row.
    exact = (id_.__class__ is str and content.__class__ is str and access_count.__class__ is int
             and (superseded_by is None or superseded_by))  # '' would read back as None
    _set_row(memory, _READ if exact else tuple(row[1:]))
    return memory


class Memories(Sequence[Memory]):
    """Rows read as memories, each :class:`Memory` built when it is first read (a caller that
    reads 5 of 50 builds 5). Compares equal to any sequence of the same memories."""

    __slots__ = ("_built", "_rows")

    def __init__(self, rows: list[Sequence[Any]]) -> None:
        self._rows = rows
        self._built: list[Memory | None] = [None] * len(rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._rows)))]
        memory = self._built[index]
        if memory is None:
            memory = self._built[index] = row_to_memory(self._rows[index])
        return memory

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Memories({list(self)!r})"


def _replaced(row: Sequence[Any]) -> tuple[str, ...]:
    """Names of the columns read with replacement characters (rare: the slow path only)."""
    return tuple(name for name, value in zip(MEMORY_COLUMNS, row[1:], strict=True) if value.__class__ is Replaced)


# json's own (C) scanner, called directly: a third of json.loads' cost for short arrays.
_scan_json = json.scanner.make_scanner(json.JSONDecoder())


def parse_related(text: str | None) -> tuple[tuple[str, ...], bool]:
    """Read ``related_to``: (ids, malformed). Malformed JSON never raises."""
    if text is None or text == "":
        return (), False
    try:
        if text.__class__ is str and text[0] == "[":
            value, end = _scan_json(text, 0)
            if end != len(text) and text[end:].strip():
                return (), True  # trailing text after the array
        else:
            value = json.loads(text)
    except (StopIteration, ValueError, TypeError):
        return (), True
    if value.__class__ is not list:
        return (), True
    if all(item.__class__ is str and item for item in value):
        return tuple(value), False
    ids = tuple(str(item) for item in value
                if isinstance(item, (str, int)) and not isinstance(item, bool) and str(item))
    return ids, len(ids) != len(value)


def parse_json(text: str | None) -> object | None:
    """Parse a JSON column; text that is not JSON is returned as it is."""
    if text is None or text == "":
        return None
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text
