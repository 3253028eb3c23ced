"""Writes to memories: add, edit, touch, delete. Each is one ``BEGIN IMMEDIATE`` transaction
that validates every value before SQL, follows the sync rule (ARCHITECTURE.md, "Rules from the
seed") and emits a ``Change``."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import timestamps
from .errors import Conflict, Duplicate, InvalidValue, NotFound
from .fingerprint import check_version
from .records import Change, ChangeKind, Memory, Removed
from .sametext import identical_live
from .schema import MEMORY_COLUMNS
from .validation import check_content, check_id, check_importance, check_type, clean_fields

if TYPE_CHECKING:
    from .store import Store

# Many ids in one statement, whatever SQLite's variable limit: bind them as one JSON array.
IDS_JSON = "(SELECT value FROM json_each(?))"
_NEW_DEFAULTS = {"health_score": 1.0, "access_count": 0, "sync_status": "pending"}


def new_id() -> str:
    """A fresh memory id: 48 bits of milliseconds then 80 random bits, as 32 hex digits (the
    layout of a UUIDv7). Ids made later sort later, so a batch appends to the end of the id
    index instead of touching pages all over it (about twice as fast on a large file)."""
    return f"mem-{time.time_ns() // 1_000_000:012x}{os.urandom(10).hex()}"


class WritesMixin:
    """Methods of :class:`~ora_desktop.core.store.Store` that change memories."""

    def add(self: Store, content: str, type: str = "fact", importance: int = 5, *, id: str | None = None,
            on_duplicate: str = "add", **fields: Any) -> Memory:
        """Store a new memory (the seed's insert); returns it as stored.

        ``on_duplicate`` says what to do when a live memory already holds the same text (case
        and whitespace aside, :mod:`.sametext`): ``"add"`` (default) adds anyway, ``"skip"``
        returns the existing memory and adds nothing, ``"error"`` raises :class:`Duplicate`.
        """
        self._require_writable()
        if on_duplicate not in ("add", "skip", "error"):
            raise InvalidValue("on_duplicate", f"{on_duplicate!r} is not one of add, skip, error")
        values = self._new_row(timestamps.now_sql(), content, type, importance, id, **fields)
        if on_duplicate != "add":
            existing = identical_live(self, content)
            if existing is not None:
                if on_duplicate == "skip":
                    return self.get(existing)
                raise Duplicate(existing, f"{self.path}: memory {existing} already holds this text; nothing added")
        with self.write():
            self._execute(self._insert_sql(), values)
        memory_id = values[self._insert_columns().index("id")]
        memory = self.get(memory_id)
        self._emit(Change(added=frozenset({memory_id}), source="add"))
        return memory

    def add_many(self: Store, items: Iterable[Mapping[str, Any]], chunk: int = 5000) -> Change:
        """Insert many memories in one transaction (all or nothing); returns what was added.

        Every item is validated before any SQL runs; an id already in the file refuses the batch.
        """
        self._require_writable()
        stamp = timestamps.now_sql()
        new_row = self._new_row
        rows = [new_row(stamp, **item) for item in items]
        at = self._insert_columns().index("id")
        ids = [r[at] for r in rows]
        if len(set(ids)) != len(ids):
            raise InvalidValue("id", "the batch holds the same id twice")
        sql = self._insert_sql()
        with self.write():
            cursor = self.db.cursor()
            for start in range(0, len(rows), chunk):
                cursor.executemany(sql, rows[start:start + chunk])
        return self._emit(Change(added=frozenset(ids), source="add_many"))

    def _insert_columns(self: Store) -> list[str]:
        return [c for c in MEMORY_COLUMNS if c in self.columns]

    def _insert_sql(self: Store) -> str:
        columns = self._insert_columns()
        return f"INSERT INTO memories ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"

    def _new_row(self: Store, stamp: str, content: str, type: str = "fact", importance: int = 5,
                 id: str | None = None, **fields: Any) -> list[Any]:
        """Validated column values of a new memory, in :meth:`_insert_columns` order."""
        created = fields.pop("created_at", None)
        updated = fields.pop("updated_at", None)
        if fields:
            row = clean_fields({"content": content, "type": type, "importance": importance, **fields})
        else:  # the common case, without the generic field loop
            row = {"content": check_content(content), "type": check_type(type),
                   "importance": check_importance(importance)}
        row["id"] = check_id(id) if id is not None else new_id()
        row["created_at"] = stamp if created is None else (timestamps.coerce(created, "created_at") or stamp)
        row["updated_at"] = row["created_at"] if updated is None else (
            timestamps.coerce(updated, "updated_at") or row["created_at"])
        values, at = self._insert_template()
        values = values.copy()
        for name, value in row.items():
            if name in at:  # a column this file lacks is left out
                values[at[name]] = value
        return values

    def _insert_template(self: Store) -> tuple[list[Any], dict[str, int]]:
        """(default values in insert order, column -> position), computed once per store."""
        template = self._template
        if template is None:
            columns = self._insert_columns()
            template = self._template = ([_NEW_DEFAULTS.get(c) for c in columns],
                                         {c: i for i, c in enumerate(columns)})
        return template

    def update(self: Store, memory_id: str, *, expected_version: str | None = None, **fields: Any) -> Memory:
        """Edit one memory. ``updated_at`` becomes now and ``sync_status`` pending (unless
        ``local_only`` or set explicitly). With ``expected_version`` (the ``version`` of the
        record the edit started from), a row changed underneath in any column, by anyone, raises
        ``Conflict`` and nothing is written. Returns the row as this write left it."""
        values = clean_fields(fields)
        if expected_version is not None:
            check_version(expected_version)
        if not values:
            return self.get(memory_id)
        if values.get("superseded_by") == memory_id:
            raise InvalidValue("superseded_by", f"memory {memory_id!r} cannot supersede itself")
        if values.get("related_to") and memory_id in json.loads(values["related_to"]):
            raise InvalidValue("related_to", f"memory {memory_id!r} cannot be related to itself")
        self._require_writable()
        with self.write():
            self.require_versions({memory_id: expected_version})
            self._update_where("id = ?", [memory_id], values)
            memory = self._rows("id = ?", (memory_id,))[0]  # as written, before anyone else can write
        self._emit(Change(changed=frozenset({memory_id}), source="update", columns=self._written(values)))
        return memory

    def require_versions(self: Store, expected: Mapping[str, str | None]) -> None:
        """Inside a :meth:`write`: each id given a version must still be at it (``Conflict``, naming
        the first that changed or went and how many did); an id given ``None`` must exist (``NotFound``)."""
        for version in expected.values():
            if version is not None:
                check_version(version)
        current = self.versions(expected)
        missing = [i for i, v in current.items() if v is None and expected[i] is None]
        if missing:
            raise NotFound(f"{self.path}: no memory with id {', '.join(map(repr, missing[:5]))} (nothing changed)")
        moved = [i for i, v in expected.items() if v is not None and current[i] != v]
        if moved:
            what = "deleted" if current[moved[0]] is None else "changed"
            others = f" (and {len(moved) - 1:,} more)" if len(moved) > 1 else ""
            raise Conflict(moved[0], f"{self.path}: memory {moved[0]!r}{others} was {what} by another program "
                                     "since you read it; nothing was changed")

    def update_many(self: Store, ids: Iterable[str], *, expected_versions: Mapping[str, str] | None = None,
                    **fields: Any) -> Change:
        """Set the same fields on many memories in one statement (ids travel as one JSON array).
        With ``expected_versions`` (id -> ``version`` as read), any of them changed underneath
        raises ``Conflict`` and nothing is written."""
        values = clean_fields(fields)
        ids = list(dict.fromkeys(ids))
        for version in (expected_versions or {}).values():
            check_version(version)
        self._require_writable()
        if not values or not ids:
            return Change()
        with self.write():
            if expected_versions:
                wanted = set(ids)
                self.require_versions({i: v for i, v in expected_versions.items() if i in wanted})
            changed = self._existing(ids)
            self._update_where(f"id IN {IDS_JSON}", [json.dumps(ids)], values)
        return self._emit(Change(changed=changed, source="update_many", columns=self._written(values)))

    def replace_content(self: Store, ids: Iterable[str], find: str, replacement: str) -> Change:
        """Replace ``find`` by ``replacement`` (as written, case-sensitive) in the content of those
        of ``ids`` that hold it: one UPDATE under the sync rule."""
        ids = list(dict.fromkeys(ids))
        self._require_writable()
        with self.write():
            held = self._fetch_all(f"SELECT id FROM memories WHERE id IN {IDS_JSON} AND instr(content, ?) > 0",
                                   [json.dumps(ids), find])
            changed = frozenset(r[0] for r in held)
            if changed:
                self._update_where(f"id IN {IDS_JSON}", [json.dumps(sorted(changed))], {},
                                   {"content": ("replace(content, ?, ?)", [find, replacement])})
        return self._emit(Change(changed=changed, source="replace", columns=self._written({"content": None})))

    def _written(self: Store, values: Mapping[str, Any]) -> frozenset[str]:
        """The columns ``_update_where`` writes for ``values`` (the sync rule's included)."""
        return frozenset(name for name in (*values, "updated_at", "sync_status") if name in self.columns)

    def _existing(self: Store, ids: Sequence[str]) -> frozenset[str]:
        """Which of ``ids`` are in the file (one statement)."""
        found = self._fetch_all(f"SELECT id FROM memories WHERE id IN {IDS_JSON}", [json.dumps(list(ids))])
        return frozenset(r[0] for r in found)

    def _update_where(self: Store, where: str, params: Sequence[Any], values: Mapping[str, Any],
                      expressions: Mapping[str, tuple[str, Sequence[Any]]] | None = None) -> int:
        """One UPDATE applying the sync rule (ARCHITECTURE.md, "Rules from the seed"); call inside a
        write transaction. ``expressions``: column -> (SQL expression, its parameters), for values
        computed from the row itself (a find-and-replace)."""
        sets = [f"{name} = ?" for name in values if name in self.columns]
        args: list[Any] = [values[name] for name in values if name in self.columns]
        for name, (sql, sql_params) in (expressions or {}).items():
            sets.append(f"{name} = {sql}")
            args.extend(sql_params)
        if "updated_at" in self.columns:
            sets.append("updated_at = ?")
            args.append(timestamps.now_sql())
        if "sync_status" not in values and "sync_status" in self.columns:
            sets.append("sync_status = CASE WHEN sync_status = 'local_only' THEN 'local_only' ELSE 'pending' END")
        cursor = self._execute(f"UPDATE memories SET {', '.join(sets)} WHERE {where}", [*args, *params])
        return cursor.rowcount

    def touch(self: Store, memory_id: str) -> Memory:
        """The seed's access update: count +1, last access now, health +0.1 (capped at 1)."""
        self._require_writable()
        update = ("UPDATE memories SET access_count = coalesce(access_count, 0) + 1, "
                  "last_accessed_at = datetime('now'), "
                  "health_score = MIN(1.0, coalesce(health_score, 0) + 0.1) WHERE id = ?")
        with self.write():
            if self._execute(update, (memory_id,)).rowcount == 0:
                raise NotFound(f"{self.path}: no memory with id {memory_id!r}")
            # Read back as stored (RETURNING gives values before the column's type affinity, e.g.
            # 1 for a REAL 1.0, which would give the record another version than the row has).
            memory = self._rows("id = ?", (memory_id,))[0]
        self._emit(Change(changed=frozenset({memory_id}), source="touch", kind=ChangeKind.TOUCHED))
        return memory

    def touch_many(self: Store, ids: Iterable[str]) -> Change:
        """Access update for several memories in one statement."""
        ids = list(dict.fromkeys(ids))
        self._require_writable()
        if not ids:
            return Change()
        with self.write():
            changed = self._existing(ids)
            self._execute(
                "UPDATE memories SET access_count = coalesce(access_count, 0) + 1, "
                "last_accessed_at = datetime('now'), "
                f"health_score = MIN(1.0, coalesce(health_score, 0) + 0.1) WHERE id IN {IDS_JSON}",
                [json.dumps(ids)],
            )
        return self._emit(Change(changed=changed, source="touch", kind=ChangeKind.TOUCHED))

    def delete(self: Store, ids: str | Iterable[str], reason: str = "deleted", *,
               previous: dict[str, dict[str, Any]] | None = None,
               last_step: Callable[[Removed], None] | None = None) -> Removed:
        """Delete memories, first keeping their full rows in the trash (restorable).

        Returns the removed records (a tuple) carrying the trash ``batch`` that holds them and
        the ``change``; unknown ids are ignored. Many ids go in short transactions sharing the
        batch. ``previous``, ``last_step``: see ``remove_where_recoverably``.
        """
        self._require_writable()
        ids = [ids] if isinstance(ids, str) else list(dict.fromkeys(ids))
        if not ids:
            return Removed()
        # One statement however many ids (no SQLite variable limit): the ids travel as JSON.
        return self.remove_where_recoverably(f"id IN {IDS_JSON}", [json.dumps(ids)], reason, previous=previous,
                                             last_step=last_step, recheck="1")
