"""Purge: forget memories for good, from every file this project writes or manages.

A delete is recoverable (the trash); a purge is not. :func:`purge` removes memories — live ones
and their copies in the trash — in one ``BEGIN IMMEDIATE`` transaction with ``secure_delete`` on
(their cells are zeroed, not left in free space), keeps the other memories' links whole, then
checkpoints the ``-wal`` with ``TRUNCATE``, scrubs every derived-data sidecar
(:func:`ora_desktop.core.scrub.forget`), and byte-scans the results. Backups are immutable
snapshots: the purge names those still holding the memories, and with ``rewrite_backups``
rewrites each of them without them (checked and renamed into place, as backups are written).

Nothing about a purge is written to job history or logs but ids and counts. A read-only file or
a lock held too long refuses the whole purge before anything changes. An id that is no longer in
the file (a purge killed after its commit, or one that was never there) is not an error: the purge
finishes its job for it — scrubs the sidecars (their text for it is first read back, so the byte
checks cover it), names or rewrites the backups holding it — and says what it found.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from .. import backup, chunks, scrub
from ..config import Config
from ..errors import InvalidValue, OraError
from ..fileheader import forget_gone
from ..rawsql import all_rows, run_sql
from ..records import Change
from ..store import Store, open_store
from ..sync.local import STATE_TABLE as SYNC_STATE
from ..sync.local import queue_tombstones
from ..trash_links import forget_batches, unlink_removed
from . import journal

log = logging.getLogger(__name__)
IDS_JSON = "(SELECT value FROM json_each(?))"


@dataclass(frozen=True)
class PurgePlan:
    """What a purge would remove: ids live in the file, ids only in its trash, trash rows, the
    backups that still hold any of them, and ids already gone from the file and its trash."""

    path: Path
    ids: tuple[str, ...]
    live: tuple[str, ...]
    trash_rows: int
    backups: tuple[Path, ...]
    gone: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """How many memories (distinct ids) the purge forgets."""
        return len(self.ids)

    def describe(self) -> str:
        """One sentence for a confirmation: how many memories, and which backups hold them."""
        present = len(self.ids) - len(self.gone)
        trashed = present - len(self.live)
        text = (f"permanently delete {present} memor{'y' if present == 1 else 'ies'} from "
                f"{self.path.name} ({len(self.live)} live, {trashed} in the trash); this cannot be undone. "
                if present else f"finish purging from {self.path.name}: ")
        if self.gone:
            one = len(self.gone) == 1
            text += (f"{_names(self.gone)} {'is' if one else 'are'} no longer in the file (already purged, or "
                     f"never there): what the search index still holds of {'it' if one else 'them'} is removed")
        text = text.rstrip(". ")
        if self.backups:
            names = ", ".join(b.name for b in self.backups[:5]) + (" …" if len(self.backups) > 5 else "")
            text += f". {len(self.backups)} backup(s) still hold them: {names}"
        return text


@dataclass(frozen=True)
class PurgeResult:
    """What a purge did."""

    path: Path
    purged: tuple[str, ...]
    live: int
    trash_rows: int
    backups_holding: tuple[Path, ...]
    backups_rewritten: tuple[Path, ...]
    sidecars: tuple[Path, ...]
    wal_truncated: bool
    vacuumed: bool
    verified: bool
    change: Change
    message: str
    already_gone: tuple[str, ...] = ()  # named, but no longer in the file or its trash
    index_held: tuple[str, ...] = ()  # of those, the ones the search index still held (now scrubbed)


def _names(ids: tuple[str, ...] | list[str]) -> str:
    return ", ".join(repr(i) for i in ids[:5]) + (" …" if len(ids) > 5 else "")


def _trash_ids(store: Store, ids: list[str]) -> set[str]:
    if not ids or not store.has_table("ora_desktop_trash"):
        return set()
    return {r[0] for r in all_rows(store,
        f"SELECT DISTINCT memory_id FROM ora_desktop_trash WHERE memory_id IN {IDS_JSON}", [json.dumps(ids)])}


def _clean_ids(ids: list[str] | tuple[str, ...] | str) -> list[str]:
    ids = [ids] if isinstance(ids, str) else list(dict.fromkeys(ids))
    if not ids:
        raise InvalidValue("ids", "name at least one memory id to purge")
    return ids


def plan_purge(store: Store, ids: list[str] | tuple[str, ...] | str, *, config: Config | None = None) -> PurgePlan:
    """What :func:`purge` would do (``gone``: ids in neither the file nor its trash)."""
    ids = _clean_ids(ids)
    live = store._existing(ids)
    trashed = _trash_ids(store, ids)
    gone = tuple(i for i in ids if i not in live and i not in trashed)
    rows = 0
    if trashed:
        rows = all_rows(store, f"SELECT count(*) FROM ora_desktop_trash WHERE memory_id IN {IDS_JSON}",
                               [json.dumps(ids)])[0][0]
    return PurgePlan(store.path, tuple(ids), tuple(i for i in ids if i in live), rows,
                     tuple(backups_holding(store.path, ids, config=config)), gone)


def _texts(store: Store, ids: list[str]) -> list[str]:
    """The texts of the memories (live and trashed copies), for the byte scans."""
    texts = [r[0] for r in all_rows(store, f"SELECT content FROM memories WHERE id IN {IDS_JSON}",
                                           [json.dumps(ids)])]
    if store.has_table("ora_desktop_trash"):
        texts += [r[0] for r in all_rows(store,
            "SELECT json_extract(row_json, '$.content') FROM ora_desktop_trash "
            f"WHERE memory_id IN {IDS_JSON}", [json.dumps(ids)])]
    return [t for t in texts if isinstance(t, str)]


def purge_titles(store: Store, ids: list[str] | tuple[str, ...], width: int = 120) -> dict[str, str]:
    """Each id's first line (the live memory's, else its newest copy in the trash), at most
    ``width`` characters, for a confirmation that names what it forgets; "" when unknown."""
    ids = list(dict.fromkeys(ids))
    if not ids:
        return {}
    found: dict[str, str] = {}
    if store.has_table("ora_desktop_trash"):
        found.update(all_rows(store, "SELECT memory_id, substr(json_extract(row_json, '$.content'), 1, ?) "
                     f"FROM ora_desktop_trash WHERE memory_id IN {IDS_JSON} ORDER BY id", [width * 4, json.dumps(ids)]))
    found.update(all_rows(store, f"SELECT id, substr(content, 1, ?) FROM memories WHERE id IN {IDS_JSON}",
                          [width * 4, json.dumps(ids)]))
    return {i: _first_line(found.get(i), width) for i in ids}


def _first_line(text: object, width: int) -> str:
    lines = [line.strip() for line in text.splitlines()] if isinstance(text, str) else []
    return next((line for line in lines if line), "")[:width]


def backups_holding(path: Path, ids: list[str], *, config: Config | None = None,
                    wanted: list[bytes] | None = None) -> list[Path]:
    """Backups of ``path`` that hold any of ``ids`` (as a memory or in their trash), or whose
    bytes hold any of ``wanted`` (leftovers in free space); newest first."""
    import sqlite3

    out = []
    for info in backup.list_backups(path, config=config):
        try:
            conn = sqlite3.connect(backup.ro_uri(info.path, immutable=True), uri=True)
            try:
                found = conn.execute(f"SELECT 1 FROM memories WHERE id IN {IDS_JSON} LIMIT 1",
                                     [json.dumps(ids)]).fetchone()
                has_trash = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'ora_desktop_trash'").fetchone()
                if not found and has_trash:
                    found = conn.execute(f"SELECT 1 FROM ora_desktop_trash WHERE memory_id IN {IDS_JSON} LIMIT 1",
                                         [json.dumps(ids)]).fetchone()
            finally:
                conn.close()
        except sqlite3.Error:
            found = True  # unreadable: it may hold them; say so rather than guess
        if found or (wanted and scrub.find_residue([info.path], wanted)):
            out.append(info.path)
    return out


def purge(store: Store, ids: list[str] | tuple[str, ...] | str, *, rewrite_backups: bool = False,
          config: Config | None = None) -> PurgeResult:
    """Forget memories (live, trashed, or both) everywhere; see the module docstring."""
    from ..search.forget import indexed_texts

    ids = _clean_ids(ids)
    store._require_writable()
    plan = plan_purge(store, ids, config=config)
    indexed = indexed_texts(store.path, frozenset(plan.gone))  # what a purge killed after its commit left
    texts = _texts(store, ids) + list(indexed.values())
    verified = len(texts) <= scrub.SCAN_LIMIT
    if len(plan.gone) == len(ids):  # nothing left in the file: finish the job elsewhere
        return _finish(store, tuple(ids), 0, 0, Change(), texts[: scrub.SCAN_LIMIT], verified, rewrite_backups,
                       config, gone=plan.gone, indexed=tuple(i for i in ids if i in indexed))
    with store.write():
        store.ensure_engine_tables()
        relinked = unlink_removed(store, plan.live)
        live = run_sql(store, f"DELETE FROM memories WHERE id IN {IDS_JSON}", [json.dumps(ids)]).rowcount
        rows = run_sql(store, f"DELETE FROM ora_desktop_trash WHERE memory_id IN {IDS_JSON}",
                             [json.dumps(ids)]).rowcount
        forget_batches(store)
        journal.forget_memories(store, ids)  # undo entries keep previous text
        _tell_sync(store, ids)
    change = store._emit(Change(changed=relinked, removed=frozenset(plan.live), source="purge"))
    return _finish(store, tuple(ids), live, rows, change, texts[: scrub.SCAN_LIMIT], verified, rewrite_backups,
                   config, gone=plan.gone, indexed=tuple(i for i in ids if i in indexed))


def _tell_sync(store: Store, ids: tuple[str, ...] | list[str]) -> None:
    """In the purge's transaction: a file that syncs sends id-only tombstones for what is gone for
    good (sync finds ordinary deletes in the trash, which a purge empties), so the server forgets
    the text too. A file that never synced has nothing on a server."""
    if store.has_table(SYNC_STATE):
        live = store._existing(ids)
        queue_tombstones(store, [i for i in ids if i not in live])


def plan_empty_trash(store: Store, older_than_days: float | None = None, now: str = "now") -> tuple[str, ...]:
    """Ids of the memories an :func:`empty_trash` would forget (all, or deleted more than N days
    before ``now``, an SQLite time)."""
    if not store.has_table("ora_desktop_trash"):
        return ()
    where, params = _older(older_than_days, now)
    return tuple(r[0] for r in all_rows(store,
        f"SELECT DISTINCT memory_id FROM ora_desktop_trash WHERE {where} ORDER BY memory_id", params))


def _older(days: float | None, now: str = "now") -> tuple[str, list]:
    if days is None:
        return "1", []
    if days < 0:
        raise InvalidValue("older_than_days", f"{days} must be 0 or more")
    return "julianday(deleted_at) < julianday(?) - ?", [now, float(days)]


def empty_trash(store: Store, older_than_days: float | None = None, *, rewrite_backups: bool = False,
                config: Config | None = None, now: str = "now") -> PurgeResult:
    """Forget the trash (or the part deleted more than N days before ``now``) for good; live
    memories that share an id with a trashed copy stay."""
    store._require_writable()
    where, params = _older(older_than_days, now)
    if not store.has_table("ora_desktop_trash"):
        return _finish(store, (), 0, 0, Change(), [], True, False, config)
    texts = [r[0] for r in all_rows(store,
        f"SELECT json_extract(row_json, '$.content') FROM ora_desktop_trash WHERE {where} "
        "AND memory_id NOT IN (SELECT id FROM memories)", params)]
    texts = [t for t in texts if isinstance(t, str)]
    # In short transactions (the write lock is never held long), each one forgetting its trash
    # rows, the journal entries and sync tombstones of its memories; rows deleted meanwhile wait
    # for the next purge. Link records of emptied batches go with the last chunk.
    trash_ids = [r[0] for r in all_rows(store, f"SELECT id FROM ora_desktop_trash WHERE {where} ORDER BY id",
                                        params)]
    found: set[str] = set()
    rows = 0
    sizer, at = chunks.new_sizer(), 0
    while at < len(trash_ids) or at == 0:
        part = trash_ids[at:at + sizer.size]
        at += len(part)

        def chunk(part: list[int] = part, last: bool = at >= len(trash_ids)) -> int:
            nonlocal rows
            mine = f"id IN {IDS_JSON} AND {where}"
            ids = tuple(r[0] for r in run_sql(store,
                f"SELECT DISTINCT memory_id FROM ora_desktop_trash WHERE {mine}", [json.dumps(part), *params]))
            rows += run_sql(store, f"DELETE FROM ora_desktop_trash WHERE {mine}", [json.dumps(part), *params]).rowcount
            live = store._existing(ids)
            journal.forget_memories(store, [i for i in ids if i not in live])
            _tell_sync(store, ids)
            if last:
                forget_batches(store)
            found.update(ids)
            return len(part)

        chunks.timed_write(store, sizer, chunk)
        if not part:
            break
    ids = tuple(sorted(found))
    live = store._existing(ids)
    gone = tuple(i for i in ids if i not in live)  # a live memory keeps its index rows
    return _finish(store, gone, 0, rows, Change(), texts[: scrub.SCAN_LIMIT], len(texts) <= scrub.SCAN_LIMIT,
                   rewrite_backups, config, ids)


def _finish(store: Store, ids: tuple[str, ...], live: int, rows: int, change: Change, texts: list[str],
            verified: bool, rewrite_backups: bool, config: Config | None,
            backup_ids: tuple[str, ...] | None = None, *, gone: tuple[str, ...] = (),
            indexed: tuple[str, ...] = ()) -> PurgeResult:
    """After the commit: truncate the ``-wal``, scrub sidecars, check bytes, handle backups."""
    backup_ids = ids if backup_ids is None else backup_ids
    if not (ids or backup_ids):
        return PurgeResult(store.path, (), 0, 0, (), (), (), True, False, True, change, "nothing to purge")
    truncated = checkpoint(store)
    vacuumed = False
    wanted = scrub.needles(texts)
    # The agent's file holds text as written (the lower-case forms are for index sidecars).
    found = [n for n in scrub.needles(texts, lower=False) if scrub.find_residue([store.path], [n])]
    if found:
        # A purged text is still in the file: the same words in a memory that stays, or text
        # another writer left in free space (before secure_delete was on). Only the latter is
        # residue, and rewriting the file removes it.
        shared = {n for n in found if _live_holds(store, n)}
        wanted = [n for n in wanted if n not in shared]
        if any(n not in shared for n in found):
            run_sql(store, "VACUUM")
            vacuumed = True
            truncated = checkpoint(store)
    sidecars = tuple(scrub.forget(store.path, ids, wanted)) if ids else ()
    holding = tuple(backups_holding(store.path, list(backup_ids), config=config, wanted=wanted))
    rewritten: list[Path] = []
    if rewrite_backups:
        for path in holding:
            backup.rewrite_backup(path, lambda work: _purge_copy(work, list(backup_ids)))
            rewritten.append(path)
    left = tuple(p for p in holding if p not in rewritten)
    forget_gone()  # the byte scans' kept descriptors of files since replaced would keep their old bytes alive
    count = len(backup_ids) - len(gone)
    if count:
        message = (f"purged {count} memor{'y' if count == 1 else 'ies'} from {store.path} "
                   f"({live} live, {rows} trash rows)")
        if gone:
            message += f"; {_names(gone)} {'was' if len(gone) == 1 else 'were'} no longer in it"
    else:
        message = f"{_names(gone)} {'is' if len(gone) == 1 else 'are'} no longer in {store.path} or its trash"
    if gone:
        message += " (already purged, or never there): " + (
            f"removed what the search index still held of {_names(indexed)}" if indexed
            else "the search index held nothing of it" if len(gone) == 1 else "the search index held none of them")
    if rewritten:
        message += f"; rewrote {len(rewritten)} backup(s) without them"
    if left:
        message += f"; {len(left)} backup(s) still hold them (use --rewrite-backups): " + ", ".join(map(str, left))
    if not truncated:
        message += "; another program kept the -wal open, so its old pages go at its next checkpoint"
    if not verified:
        message += f"; the byte check covered the first {scrub.SCAN_LIMIT} texts"
    log.info("purge %s: %d memories, %d trash rows, %d backups rewritten", store.path, len(backup_ids), rows,
             len(rewritten))
    return PurgeResult(store.path, backup_ids, live, rows, holding, tuple(rewritten), sidecars, truncated,
                       vacuumed, verified, change, message, gone, indexed)


def _live_holds(store: Store, needle: bytes) -> bool:
    """Whether a memory that stays (or a trash row that stays) holds these bytes."""
    text = needle.decode("utf-8", "replace")
    if store._one("SELECT 1 FROM memories WHERE instr(content, ?) LIMIT 1", [text]):
        return True
    return bool(store.has_table("ora_desktop_trash") and store._one(
        "SELECT 1 FROM ora_desktop_trash WHERE instr(row_json, ?) LIMIT 1", [text]))


def checkpoint(store: Store) -> bool:
    """``wal_checkpoint(TRUNCATE)``: True when the ``-wal`` is empty afterwards (or there is none)."""
    try:
        busy = run_sql(store, "PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    except OraError:
        return False
    wal = Path(f"{store.path}-wal")
    return not busy and (not wal.exists() or wal.stat().st_size == 0)


def _purge_copy(work: Path, ids: list[str]) -> None:
    """Remove ``ids`` from a private copy of a backup (links kept whole, trash copies too)."""
    with open_store(work) as copy:
        with copy.write():
            unlink_removed(copy, copy._existing(ids))
            run_sql(copy, f"DELETE FROM memories WHERE id IN {IDS_JSON}", [json.dumps(ids)])
            if copy.has_table("ora_desktop_trash"):
                run_sql(copy, f"DELETE FROM ora_desktop_trash WHERE memory_id IN {IDS_JSON}", [json.dumps(ids)])
            forget_batches(copy)
            journal.forget_memories(copy, ids)
