"""The PostgreSQL side of sync (psycopg 3): connecting, the schema, pulls and pushes.

One table of memories keyed by (site, agent, id); a tombstone is the same row with every
memory column emptied and ``deleted`` set, so a deleted (or purged) memory's text leaves the
server too. Every write takes a new number from ``ora_memories_change_seq``; a client pulls the
rows whose ``change`` is above the last one it saw. Clients hold a session advisory lock per
(site, agent) for a whole sync, so within one (site, agent) numbers are handed out in commit
order and a pull never skips a row committed late.

Pins and typed links travel in ``ora_marks`` (see :mod:`.marks`), numbered from their own
sequence. It is created with ``IF NOT EXISTS`` by every client's first sync, so a server of an
earlier schema gains it without a version change, and an ora-desktop that does not know it keeps
syncing memories there.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..extras import need
from .redact import SyncError, describe, one_line, redact

SCHEMA_VERSION = 2
TABLE = "ora_memories"
#: The memory columns that travel (``synced_at``/``sync_status`` are each file's own business).
COLUMNS: tuple[str, ...] = (
    "id", "content", "type", "importance", "access_count", "last_accessed_at", "health_score",
    "related_to", "superseded_by", "created_at", "updated_at", "expires_at",
)

#: The server schema, created (idempotently) on the first sync. Quoted verbatim in docs/sync.md.
DDL = """\
CREATE TABLE IF NOT EXISTS ora_sync_meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
CREATE SEQUENCE IF NOT EXISTS ora_memories_change_seq;
CREATE TABLE IF NOT EXISTS ora_memories (
    site             text    NOT NULL,
    agent            text    NOT NULL,
    id               text    NOT NULL,
    content          text,              -- NULL in a tombstone, as every memory column
    type             text,
    importance       integer,
    access_count     integer,
    last_accessed_at text,              -- timestamps as the agent's file holds them
    health_score     double precision,
    related_to       text,              -- JSON array of ids
    superseded_by    text,
    created_at       text,
    updated_at       text    NOT NULL,  -- for a tombstone: when it was deleted
    expires_at       text,
    deleted          boolean NOT NULL DEFAULT false,
    change           bigint  NOT NULL DEFAULT nextval('ora_memories_change_seq'),
    origin           text    NOT NULL DEFAULT '',
    pushed_at        timestamptz NOT NULL DEFAULT now(),
    edited_at        timestamptz,       -- the content's last edit (or the deletion) in the server's time
    push_id          text,              -- the sync run that wrote this version (a crashed run finds its own)
    PRIMARY KEY (site, agent, id)
);
CREATE INDEX IF NOT EXISTS ora_memories_by_change ON ora_memories (site, agent, change);
CREATE SEQUENCE IF NOT EXISTS ora_marks_change_seq;
CREATE TABLE IF NOT EXISTS ora_marks (
    site             text    NOT NULL,
    agent            text    NOT NULL,
    kind             text    NOT NULL,  -- 'pin' or 'link'
    key              text    NOT NULL,  -- pin: the memory id; link: source, target and type joined by U+001F
    present          boolean NOT NULL,  -- false: removed (kept, so the removal reaches every machine)
    set_at           timestamptz NOT NULL,  -- when it was made or removed, in the server's time
    change           bigint  NOT NULL DEFAULT nextval('ora_marks_change_seq'),
    origin           text    NOT NULL DEFAULT '',
    PRIMARY KEY (site, agent, kind, key)
);
CREATE INDEX IF NOT EXISTS ora_marks_by_change ON ora_marks (site, agent, change);
INSERT INTO ora_sync_meta (key, value) VALUES ('schema_version', '1') ON CONFLICT (key) DO NOTHING;
INSERT INTO ora_sync_meta (key, value) VALUES ('server_id', gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING;
"""

#: Schema migrations: version -> statements that bring version-1 to it, run in order on the first sync.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: ("ALTER TABLE ora_memories ADD COLUMN IF NOT EXISTS edited_at timestamptz",
        "ALTER TABLE ora_memories ADD COLUMN IF NOT EXISTS push_id text"),
}

EXPECTED_TYPES: dict[str, str] = {
    "site": "text", "agent": "text", "id": "text", "content": "text", "type": "text", "importance": "integer",
    "access_count": "integer", "last_accessed_at": "text", "health_score": "double precision",
    "related_to": "text", "superseded_by": "text", "created_at": "text", "updated_at": "text",
    "expires_at": "text", "deleted": "boolean", "change": "bigint", "origin": "text",
    "pushed_at": "timestamp with time zone",
}
#: Columns later schema versions add (their migration creates them on the first sync).
ADDED_TYPES: dict[str, str] = {"edited_at": "timestamp with time zone", "push_id": "text"}
SCHEMA_LOCK = 0x0A7A5E11  # advisory lock key serialising schema creation between clients
LOCK_WAIT = 60.0  # seconds to wait for another client's sync of the same (site, agent)


@dataclass(frozen=True, slots=True)
class ServerRow:
    """One row pulled from the server: the memory columns, then ``deleted`` and ``change``."""

    values: tuple[Any, ...]
    deleted: bool
    change: int
    edited_at: datetime | None = None  # the edit (or deletion) in server time; None for rows of schema 1
    push_id: str | None = None

    @property
    def id(self) -> str:
        return self.values[0]

    @property
    def updated_at(self) -> str | None:
        return self.values[COLUMNS.index("updated_at")]


@dataclass(frozen=True, slots=True)
class MarkRow:
    """One pin or typed link on the server: made (``present``) or removed, at ``set_at``."""

    kind: str
    key: str
    present: bool
    set_at: datetime
    change: int


class Server:
    """An open connection to the sync server (autocommit; explicit transactions for writes)."""

    def __init__(self, url: str, connect_timeout: int = 10) -> None:
        self.url = url
        self.name = describe(url)
        self.server_id = ""
        self.created_schema = False
        psycopg = need("psycopg", "sync")
        self._psycopg = psycopg
        kwargs: dict[str, Any] = {"autocommit": True, "application_name": "ora-desktop"}
        if "connect_timeout" not in url:
            kwargs["connect_timeout"] = connect_timeout
        try:
            self.conn = psycopg.connect(url, **kwargs)
        except psycopg.ProgrammingError as exc:
            raise SyncError(f"{self.name}: not a usable PostgreSQL URL ({redact(one_line(exc), url)})") from None
        except psycopg.Error as exc:
            text = redact(one_line(exc), url)
            if "invalid" in text.lower() and ("option" in text.lower() or "uri" in text.lower()):
                raise SyncError(f"{self.name}: not a usable PostgreSQL URL ({text})") from None
            raise SyncError(f"{self.name}: cannot connect: {self._explain(exc)}") from None

    # ------------------------------------------------------------------ errors
    def _explain(self, exc: BaseException) -> str:
        text = redact(one_line(exc), self.url)
        lowered = text.lower()
        if "password authentication failed" in lowered or "no password supplied" in lowered:
            return f"the server refused the user name or password ({text})"
        if "connection refused" in lowered or "no such file or directory" in lowered:
            return f"no server is listening there; is it running? ({text})"
        if "timeout" in lowered or "timed out" in lowered:
            return f"the server did not answer in time ({text})"
        return text

    def failure(self, what: str, exc: BaseException) -> SyncError:
        """A :class:`SyncError` for a server error met while doing ``what``."""
        return SyncError(f"{self.name}: {what} failed: {self._explain(exc)}")

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # closing a broken connection must not hide the first error
            pass

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ schema
    def columns(self) -> dict[str, str]:
        """``ora_memories``' columns and types in the current schema (empty when absent)."""
        rows = self.conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s", (TABLE,),
        ).fetchall()
        return {name: kind for name, kind in rows}

    def check_shape(self, found: dict[str, str]) -> None:
        """Refuse an ``ora_memories`` table this project did not make (one line saying how it differs)."""
        missing = [c for c in EXPECTED_TYPES if c not in found]
        wrong = [f"{c} is {found[c]}, expected {t}" for c, t in {**EXPECTED_TYPES, **ADDED_TYPES}.items()
                 if c in found and found[c] != t]
        if missing or wrong:
            details = "; ".join(filter(None, [f"missing columns {', '.join(missing)}" if missing else "", *wrong]))
            raise SyncError(f"{self.name}: the server table {TABLE} has another shape ({details}); it was not "
                            "made by ora-desktop, so nothing was synced (use another database or schema)")

    def prepare(self, create: bool = True) -> bool:
        """Check (and unless ``create`` is False, create or migrate) the schema; returns whether
        it is there. Sets :attr:`server_id`."""
        psycopg = self._psycopg
        try:
            found = self.columns()
            if found:
                self.check_shape(found)
            if not create:
                if found:
                    self.server_id = self._meta("server_id") or ""
                return bool(found)
            with self.conn.transaction():
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                self.created_schema = not self.columns()
                self.conn.execute(DDL)
                version = int(self._meta("schema_version") or 1)
                if version > SCHEMA_VERSION:
                    raise SyncError(f"{self.name}: the server schema is version {version}, newer than this "
                                    f"ora-desktop understands ({SCHEMA_VERSION}); upgrade ora-desktop")
                for target in range(version + 1, SCHEMA_VERSION + 1):
                    for statement in MIGRATIONS.get(target, ()):
                        self.conn.execute(statement)
                    self.conn.execute("UPDATE ora_sync_meta SET value = %s WHERE key = 'schema_version'",
                                      (str(target),))
                self.server_id = self._meta("server_id") or ""
            return True
        except SyncError:
            raise
        except psycopg.Error as exc:
            raise self.failure("preparing the server schema", exc) from None

    def _meta(self, key: str) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM ora_sync_meta WHERE key = %s", (key,)).fetchone()
        except self._psycopg.errors.UndefinedTable:
            return None
        return row[0] if row else None

    # ------------------------------------------------------------------ locking
    def lock(self, site: str, agent: str, wait: float = LOCK_WAIT) -> None:
        """Hold the (site, agent) session lock; another client's sync of it makes us wait."""
        deadline = time.monotonic() + wait
        key = f"ora-desktop:{site}/{agent}"
        try:
            while not self.conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()[0]:
                if time.monotonic() > deadline:
                    raise SyncError(f"{self.name}: another client has been syncing {site}/{agent} for over "
                                    f"{wait:.0f} s; try again later")
                time.sleep(0.1)
        except self._psycopg.Error as exc:
            raise self.failure("taking the sync lock", exc) from None

    # ------------------------------------------------------------------ pull
    def changes(self, site: str, agent: str, after: int, limit: int) -> list[ServerRow]:
        """Rows of (site, agent) changed after ``after``, oldest change first, at most ``limit``."""
        cols = ", ".join(COLUMNS)
        try:
            rows = self.conn.execute(
                f"SELECT {cols}, deleted, change, edited_at, push_id FROM {TABLE} "
                "WHERE site = %s AND agent = %s AND change > %s ORDER BY change LIMIT %s", (site, agent, after, limit),
            ).fetchall()
        except self._psycopg.Error as exc:
            raise self.failure("pulling changes", exc) from None
        width = len(COLUMNS)
        return [ServerRow(tuple(r[:width]), *r[width:]) for r in rows]

    def now(self) -> datetime:
        """The server's clock (``now()``), the time every machine's edits are compared in."""
        try:
            return self.conn.execute("SELECT now()").fetchone()[0]
        except self._psycopg.Error as exc:
            raise self.failure("reading the server's clock", exc) from None

    def count_changes(self, site: str, agent: str, after: int) -> int:
        """How many rows of (site, agent) changed after ``after`` (for dry runs)."""
        try:
            return self.conn.execute(f"SELECT count(*) FROM {TABLE} WHERE site = %s AND agent = %s AND change > %s",
                                     (site, agent, after)).fetchone()[0]
        except self._psycopg.Error as exc:
            raise self.failure("counting changes", exc) from None

    # ------------------------------------------------------------------ push
    def is_empty(self, site: str, agent: str) -> bool:
        """Whether the server holds no row (not even a tombstone) of (site, agent)."""
        try:
            return self.conn.execute(f"SELECT NOT EXISTS (SELECT 1 FROM {TABLE} WHERE site = %s AND agent = %s)",
                                     (site, agent)).fetchone()[0]
        except self._psycopg.Error as exc:
            raise self.failure("reading the server", exc) from None

    def push(self, site: str, agent: str, origin: str, rows: Sequence[Sequence[Any]], edited: Sequence[Any],
             push_id: str, fresh: bool = False) -> int:
        """Upsert memories (values in :data:`COLUMNS` order; ``edited``: each row's content edit in
        server time, ``None`` to keep the server's) in one transaction: COPY into a temporary table,
        then one ``INSERT … ON CONFLICT DO UPDATE``; with ``fresh`` (the server has none of these
        ids: see :meth:`is_empty`), COPY straight into the table. Returns the highest change."""
        cols = ", ".join(COLUMNS)
        updates = ", ".join(f"{c} = excluded.{c}" for c in (*COLUMNS[1:], "deleted", "change", "origin", "pushed_at",
                                                          "push_id"))
        updates += f", edited_at = coalesce(excluded.edited_at, {TABLE}.edited_at)"
        try:
            if fresh:
                with self.conn.transaction(), self.conn.cursor() as cur:
                    with cur.copy(f"COPY {TABLE} (site, agent, origin, push_id, edited_at, {cols}) FROM STDIN") as copy:
                        for row, when in zip(rows, edited, strict=True):
                            copy.write_row((site, agent, origin, push_id, when, *row))
                    cur.execute(f"SELECT coalesce(max(change), 0) FROM {TABLE} WHERE site = %s AND agent = %s",
                                (site, agent))
                    return cur.fetchone()[0]
            with self.conn.transaction(), self.conn.cursor() as cur:
                cur.execute(f"CREATE TEMP TABLE ora_push ON COMMIT DROP AS SELECT {cols}, edited_at FROM {TABLE} "
                            "WITH NO DATA")
                with cur.copy(f"COPY ora_push ({cols}, edited_at) FROM STDIN") as copy:
                    for row, when in zip(rows, edited, strict=True):
                        copy.write_row((*row, when))
                cur.execute(
                    f"WITH up AS (INSERT INTO {TABLE} (site, agent, {cols}, edited_at, deleted, origin, push_id) "
                    f"SELECT %s, %s, {cols}, edited_at, false, %s, %s FROM ora_push "
                    f"ON CONFLICT (site, agent, id) DO UPDATE SET {updates} RETURNING change) "
                    "SELECT coalesce(max(change), 0) FROM up", (site, agent, origin, push_id),
                )
                return cur.fetchone()[0]
        except self._psycopg.Error as exc:
            raise self.failure("pushing memories", exc) from None

    def push_tombstones(self, site: str, agent: str, origin: str,
                        tombstones: Iterable[tuple[str, str, datetime | None]]) -> tuple[int, int]:
        """Turn rows into tombstones (id, deletion time as written here and in server time; every
        memory column emptied).

        Ids the server never had, or already deleted, are left alone. Returns (how many, highest change).
        """
        pairs = list(tombstones)
        if not pairs:
            return 0, 0
        empty = ", ".join(f"{c} = NULL" for c in COLUMNS if c not in ("id", "updated_at"))
        try:
            with self.conn.transaction():
                row = self.conn.execute(
                    "WITH t AS (SELECT unnest(%s::text[]) AS id, unnest(%s::text[]) AS deleted_at, "
                    "unnest(%s::timestamptz[]) AS edited_at), "
                    f"up AS (UPDATE {TABLE} m SET {empty}, updated_at = t.deleted_at, deleted = true, "
                    "edited_at = coalesce(t.edited_at, now()), push_id = NULL, "
                    "change = nextval('ora_memories_change_seq'), origin = %s, pushed_at = now() "
                    "FROM t WHERE m.site = %s AND m.agent = %s AND m.id = t.id AND NOT m.deleted RETURNING m.change) "
                    "SELECT count(*), coalesce(max(change), 0) FROM up",
                    ([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs], origin, site, agent),
                ).fetchone()
        except self._psycopg.Error as exc:
            raise self.failure("pushing deletions", exc) from None
        return row[0], row[1]

    # ------------------------------------------------------------------ pins and typed links
    def mark_changes(self, site: str, agent: str, after: int) -> list[MarkRow]:
        """Pins and typed links of (site, agent) changed after ``after``, oldest change first."""
        try:
            rows = self.conn.execute("SELECT kind, key, present, set_at, change FROM ora_marks WHERE site = %s AND "
                                     "agent = %s AND change > %s ORDER BY change", (site, agent, after)).fetchall()
        except self._psycopg.Error as exc:
            raise self.failure("pulling pins and links", exc) from None
        return [MarkRow(*row) for row in rows]

    def push_marks(self, site: str, agent: str, origin: str,
                   marks: Sequence[tuple[str, str, bool, datetime]]) -> int:
        """Upsert (kind, key, present, set_at) rows in one transaction; returns the highest change."""
        if not marks:
            return 0
        try:
            with self.conn.transaction():
                return self.conn.execute(
                    "WITH t AS (SELECT unnest(%s::text[]) AS kind, unnest(%s::text[]) AS key, "
                    "unnest(%s::boolean[]) AS present, unnest(%s::timestamptz[]) AS set_at), "
                    "up AS (INSERT INTO ora_marks (site, agent, kind, key, present, set_at, origin) "
                    "SELECT %s, %s, kind, key, present, set_at, %s FROM t "
                    "ON CONFLICT (site, agent, kind, key) DO UPDATE SET present = excluded.present, "
                    "set_at = excluded.set_at, origin = excluded.origin, change = nextval('ora_marks_change_seq') "
                    "RETURNING change) SELECT coalesce(max(change), 0) FROM up",
                    ([m[0] for m in marks], [m[1] for m in marks], [m[2] for m in marks], [m[3] for m in marks],
                     site, agent, origin),
                ).fetchone()[0]
        except self._psycopg.Error as exc:
            raise self.failure("pushing pins and links", exc) from None


@dataclass(frozen=True, slots=True)
class VacuumReport:
    """What ``VACUUM`` of the server table did: sizes (bytes) and dead row versions before and after."""

    full: bool
    size_before: int
    size_after: int
    dead_before: int
    dead_after: int


def vacuum(server: Server, full: bool = False) -> VacuumReport:
    """``VACUUM`` (or ``VACUUM FULL``, which locks the table while it rewrites it) the server table."""
    psycopg = server._psycopg
    stats = (f"SELECT pg_total_relation_size('{TABLE}'), coalesce((SELECT n_dead_tup FROM pg_stat_user_tables "
             f"WHERE relname = '{TABLE}' AND schemaname = current_schema()), 0)")
    try:
        if not server.columns():
            raise SyncError(f"{server.name}: there is no {TABLE} table to vacuum (nothing has synced there yet)")
        size_before, dead_before = server.conn.execute(stats).fetchone()
        server.conn.execute(f"VACUUM {'FULL ' if full else ''}{TABLE}")
        server.conn.execute(f"ANALYZE {TABLE}")
        size_after, dead_after = server.conn.execute(stats).fetchone()
    except psycopg.Error as exc:
        raise server.failure("vacuuming the server table", exc) from None
    return VacuumReport(full, size_before, size_after, dead_before, dead_after)
