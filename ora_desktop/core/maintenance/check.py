"""Check: SQLite's ``integrity_check`` plus a lint of the memories.

Lint findings: an import, undo, redo or restore stopped part-way, values outside the seed's
CHECKs (legacy files have none), malformed ``related_to``, links (``related_to`` ids,
``superseded_by``) to memories that do not exist, supersession cycles, timestamps SQLite cannot
read (``julianday`` gives NULL), and expired memories still linked from live ones. The report's
``would_change`` holds one ``(memory id, problem)`` pair per finding (the first 200 of each kind).

``--repair`` fixes only what is safe, in one transaction, as single statements, and says what
it did: dangling ``superseded_by`` cleared (the memory is then live, as it was in effect),
dangling ids dropped from ``related_to`` (the rest kept, order kept), health outside 0..1
clamped; an import stopped part-way (its process killed: :mod:`..exchange.pending`), or an undo,
redo or restore of many memories (:mod:`..operations.chunked_undo`), is taken back. Repaired
rows get ``updated_at`` now and sync status pending, like any edit.
Everything else is reported for a person to decide. A damaged file is never repaired.

Damage is reported only when a stable read confirms it: when ``integrity_check`` (or the open)
found damage and the file changed meanwhile (another program committed), the check runs again,
up to three times, and says "the file changed during the check; checked again".
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..connection import commit_counter, file_stamp
from ..errors import CorruptFile, OraError
from ..exchange import pending
from ..operations import chunked_undo
from ..rawsql import run_sql
from ..schema import MEMORY_TYPES, SYNC_STATUSES
from ..store import Store, open_store
from . import values
from .context import Cancelled, JobContext, Outcome
from .values import is_number, odd_value_rules

SAMPLE = 200
TIME_FIELDS = ("last_accessed_at", "created_at", "updated_at", "expires_at", "synced_at")
_VALID_JSON_ARRAY = "(CASE WHEN json_valid(related_to) THEN json_type(related_to) = 'array' ELSE 0 END)"
_HAS_RELATED = "related_to IS NOT NULL AND related_to != ''"
# json_each over a malformed value raises even behind an AND: feed it an empty array instead.
_LINKS = "json_each(CASE WHEN json_valid(memories.related_to) THEN memories.related_to ELSE '[]' END)"
_DANGLING_RELATED = (
    f"{_HAS_RELATED} AND {_VALID_JSON_ARRAY} AND EXISTS (SELECT 1 FROM {_LINKS} j "
    "WHERE j.value NOT IN (SELECT id FROM memories))"
)
_DANGLING_SUPERSEDED = (
    "superseded_by IS NOT NULL AND superseded_by != '' AND superseded_by NOT IN (SELECT id FROM memories)"
)
_EXPIRED = "(expires_at IS NOT NULL AND expires_at != '' AND julianday(expires_at) < julianday(:now))"
_LINKS_EXPIRED = (
    f"NOT {_EXPIRED} AND {_HAS_RELATED} AND {_VALID_JSON_ARRAY} "
    f"AND EXISTS (SELECT 1 FROM {_LINKS} j "
    f"JOIN memories e ON e.id = j.value WHERE {_EXPIRED.replace('expires_at', 'e.expires_at')})"
)


def _problems(columns: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """name → (WHERE clause, description) for every lint rule the file's columns allow."""
    types = ",".join(f"'{t}'" for t in MEMORY_TYPES)
    syncs = ",".join(f"'{s}'" for s in SYNC_STATUSES)
    rules = {
        "bad_type": ("type", f"type IS NOT NULL AND type NOT IN ({types})", "type outside the seed's list"),
        "bad_importance": ("importance", "importance IS NOT NULL AND (importance < 1 OR importance > 10)",
                           "importance outside 1..10"),
        "bad_health": ("health_score", f"{is_number('health_score')} AND (health_score < 0 OR health_score > 1)",
                       "health outside 0..1"),
        "bad_sync_status": ("sync_status", f"sync_status IS NOT NULL AND sync_status NOT IN ({syncs})",
                            "sync status outside the seed's list"),
        "malformed_related_to": ("related_to", f"{_HAS_RELATED} AND NOT {_VALID_JSON_ARRAY}",
                                 "related_to is not a JSON array"),
        "dangling_related_to": ("related_to", _DANGLING_RELATED, "related_to names a memory that does not exist"),
        "dangling_superseded_by": ("superseded_by", _DANGLING_SUPERSEDED,
                                   "superseded_by names a memory that does not exist"),
        "linked_to_expired": ("expires_at", _LINKS_EXPIRED, "live memory linked to an expired one"),
    }
    out = {name: (where, text) for name, (col, where, text) in rules.items()
           if col in columns and (name != "linked_to_expired" or "related_to" in columns)}
    for col in TIME_FIELDS:
        if col in columns:
            out[f"unparseable_{col}"] = (f"{col} IS NOT NULL AND {col} != '' AND julianday({col}) IS NULL",
                                         f"{col} is not a timestamp SQLite can read")
    out.update(odd_value_rules(columns))
    return out


LABELS = {
    "integrity_errors": "integrity errors",
    "bad_type": "types outside the seed's list",
    "bad_importance": "importances outside 1..10",
    "bad_health": "health scores outside 0..1",
    "bad_sync_status": "sync statuses outside the seed's list",
    "malformed_related_to": "malformed related_to",
    "dangling_related_to": "related_to with dangling ids",
    "dangling_superseded_by": "dangling superseded_by",
    "linked_to_expired": "live memories linked to expired ones",
    "supersession_cycles": "supersession cycles",
    "invalid_utf8": "text values that are not valid UTF-8",
    "interrupted_imports": "imports stopped part-way",
    "interrupted_steps": "undos, redos or restores stopped part-way",
}


def label(count_name: str) -> str:
    """Words for a count name (``unparseable_created_at`` → ``unparseable created_at``)."""
    if count_name in LABELS:
        return LABELS[count_name]
    if count_name.startswith("unparseable_"):
        return f"unparseable {count_name[len('unparseable_'):]}"
    return count_name.replace("_", " ")


def integrity(store: Store) -> list[str]:
    """``PRAGMA integrity_check`` messages (empty when the file is sound).

    A file too damaged for the check to finish gives SQLite's error as the one message.
    """
    try:
        rows = [r[0] for r in run_sql(store, "PRAGMA integrity_check")]
    except (OraError, sqlite3.DatabaseError) as exc:
        if isinstance(exc, Cancelled) or "interrupt" in str(exc):
            raise
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def supersession_cycles(store: Store) -> list[list[str]]:
    """Each cycle of ``superseded_by`` links, as the list of ids around it."""
    if "superseded_by" not in store.columns:
        return []
    nxt = dict(run_sql(store, "SELECT id, superseded_by FROM memories WHERE superseded_by IS NOT NULL "
                             "AND superseded_by != ''").fetchall())
    cycles, state = [], {}  # state: 1 = on the current path, 2 = done
    for start in nxt:
        path, node = [], start
        while node in nxt and state.get(node) is None:
            state[node] = 1
            path.append(node)
            node = nxt[node]
        if state.get(node) == 1:
            cycles.append(path[path.index(node):])
        for visited in path:
            state[visited] = 2
    return cycles


ATTEMPTS = 3
CHANGED = "the file changed during the check; checked again"


def file_version(path: Path) -> tuple:
    """What moves when any program commits to ``path``: SQLite's commit counter and the stat of
    the file and its ``-wal`` (read without closing a descriptor of the file)."""
    return commit_counter(path), file_stamp(path)


def run(ctx: JobContext) -> Outcome:
    """Check one file; damage seen while the file changed is checked again (module docstring)."""
    changed = False
    for attempt in range(ATTEMPTS):
        before = file_version(ctx.path)
        outcome = _check(ctx)
        if outcome.outcome != "problems" or attempt == ATTEMPTS - 1 or file_version(ctx.path) == before:
            break
        changed = True
    if changed:
        outcome.message = f"{outcome.message}; {CHANGED}"
    return outcome


def _check(ctx: JobContext) -> Outcome:
    """One check of one file; with ``ctx.repair`` (and not a dry run) also the safe repairs."""
    repair = ctx.repair and not ctx.dry_run
    try:
        store = open_store(ctx.path, readonly=not repair)
    except CorruptFile as exc:  # too damaged to open: that is what a check is for, not a failure
        return Outcome({"problems": 1, "integrity_errors": 1}, f"the file is damaged: {exc.problem}; "
                       "salvage it with 'ora-desktop recover' or restore it from a backup",
                       [("(file)", f"integrity: {exc.problem}")], outcome="problems")
    with store, ctx.interruptible(store):
        ctx.step(0, 3)
        damage = integrity(store)
        findings: list[tuple[str, str]] = [("(file)", f"integrity: {m}") for m in damage[:SAMPLE]]
        counts = {"integrity_errors": len(damage)}
        ctx.step(1, 3)
        if not damage:  # linting a damaged file would only stumble over the same damage
            counts.update(_lint(store, ctx, findings))
            counts.update(values.lint_text(store, findings))
            cycles = supersession_cycles(store)
            counts["supersession_cycles"] = len(cycles)
            findings += [(c[0], "supersession cycle: " + " → ".join([*c, c[0]])) for c in cycles[:SAMPLE]]
            interrupted = pending.stale(store)
            counts["interrupted_imports"] = len(interrupted)
            findings += [("(file)", f"an import of {source} stopped part-way (its process is gone): what it wrote is "
                          "in the file; --repair or the next import takes it back") for source in interrupted.values()]
            step = chunked_undo.stopped_elsewhere(store)
            counts["interrupted_steps"] = int(step is not None)
            if step is not None:
                findings.append(("(file)", f"“{step['verb']} {step['label']}” stopped part-way (its process is "
                                 "gone): what it wrote is in the file; --repair or the next undo, redo or restore "
                                 "takes it back"))
        ctx.step(2, 3)
        problems = sum(counts.values())
        message = "no problems found" if not problems else "found " + ", ".join(
            f"{v} {label(k)}" for k, v in counts.items() if v)
        if damage:
            message += ("; the file is damaged: salvage it with 'ora-desktop recover' or restore it from a "
                        "backup (not repaired)")
        elif ctx.repair:
            done = _repair(store, counts, dry_run=ctx.dry_run)
            if counts.get("interrupted_imports"):
                done["interrupted_imports"] = counts["interrupted_imports"] if ctx.dry_run else len(
                    pending.recover(store))
            if counts.get("interrupted_steps"):
                done["interrupted_steps"] = 1 if ctx.dry_run or chunked_undo.recover(store) else 0
            if counts.get("invalid_utf8"):
                done["invalid_utf8"] = values.repair_text(store, dry_run=ctx.dry_run)
            counts.update({f"repaired_{k}": v for k, v in done.items()})
            verb = "would repair" if ctx.dry_run else "repaired"
            message += f"; {verb}: " + (", ".join(f"{v} {label(k)}" for k, v in done.items() if v)
                                        or "nothing (no safe repair applies)")
        ctx.step(3, 3)
    counts = {"problems": problems, **{k: v for k, v in counts.items() if v}}
    return Outcome(counts, message, findings, outcome="problems" if damage else "ok")


# One pass over every link: dangling ids, and links from a live memory to an expired one.
_LINK_PASS = f"""
SELECT m.id, max(e.rowid IS NULL) AS dangling,
       max(e.rowid IS NOT NULL AND {_EXPIRED.replace('expires_at', 'e.expires_at')}) AS to_expired,
       {_EXPIRED.replace('expires_at', 'm.expires_at')} AS expired
FROM memories m
JOIN json_each(CASE WHEN {_VALID_JSON_ARRAY.replace('related_to', 'm.related_to')} THEN m.related_to
               ELSE '[]' END) j
LEFT JOIN memories e ON e.id = j.value
WHERE m.related_to IS NOT NULL AND m.related_to != ''
GROUP BY m.rowid
HAVING dangling OR (to_expired AND NOT expired)
"""
_LINK_RULES = ("dangling_related_to", "linked_to_expired")


def _lint(store: Store, ctx: JobContext, findings: list[tuple[str, str]]) -> dict[str, int]:
    """Per-row rules in one aggregate scan, link rules in one pass over ``json_each``."""
    rules = _problems(store.columns)
    params = {"now": ctx.now_sql}
    row_rules = {k: v for k, v in rules.items() if k not in _LINK_RULES}
    sums = ", ".join(f"coalesce(sum({where}), 0)" for where, _ in row_rules.values())
    totals = dict(zip(row_rules, run_sql(store, f"SELECT {sums} FROM memories", params).fetchone(), strict=True))
    for name, (where, text) in row_rules.items():
        if totals[name]:
            for (memory_id,) in run_sql(store, f"SELECT id FROM memories WHERE {where} LIMIT {SAMPLE}", params):
                findings.append((str(memory_id), text))
    if "dangling_related_to" in rules:
        linked = {name: 0 for name in _LINK_RULES if name in rules}
        for memory_id, dangling, to_expired, expired in run_sql(store, _LINK_PASS, params):
            for name, hit in (("dangling_related_to", dangling), ("linked_to_expired", to_expired and not expired)):
                if hit and name in linked:
                    linked[name] += 1
                    if linked[name] <= SAMPLE:
                        findings.append((str(memory_id), rules[name][1]))
        totals.update(linked)
    return {name: int(totals.get(name, 0)) for name in rules}


def _repair(store: Store, counts: dict[str, int], dry_run: bool) -> dict[str, int]:
    """The safe repairs, each one UPDATE, in one ``BEGIN IMMEDIATE`` transaction."""
    fixes = {
        "dangling_superseded_by": ("superseded_by = NULL", _DANGLING_SUPERSEDED),
        "dangling_related_to": (
            f"related_to = (SELECT json_group_array(j.value) FROM {_LINKS} j "
            "WHERE j.value IN (SELECT id FROM memories))", _DANGLING_RELATED),
        "bad_health": ("health_score = MIN(1.0, MAX(0.0, health_score))",
                       f"{is_number('health_score')} AND (health_score < 0 OR health_score > 1)"),
    }
    fixes = {k: v for k, v in fixes.items() if counts.get(k)}
    if dry_run or not fixes:
        return {k: counts[k] for k in fixes}
    sync = []
    if "updated_at" in store.columns:
        sync.append("updated_at = datetime('now')")
    if "sync_status" in store.columns:
        sync.append("sync_status = CASE WHEN sync_status = 'local_only' THEN 'local_only' ELSE 'pending' END")
    done = {}
    with store.write():
        for name, (assign, where) in fixes.items():
            done[name] = run_sql(store, f"UPDATE memories SET {', '.join([assign, *sync])} WHERE {where}").rowcount
    return done
