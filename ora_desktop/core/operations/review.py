"""The review desk: what is new or changed since a person last reviewed an agent, and what needs a decision.

``review(store)`` lists, for one reviewer (default: the login name):

* **new** / **changed** — memories created / updated since the reviewer's last *mark all
  reviewed* of this file (every memory, the first time), newest first;
* **attention** — memories that need a decision whatever their age: important but below
  recall's health threshold, expiring within a week, ``related_to`` naming a missing memory or
  not a JSON array, ``superseded_by`` naming a missing memory, supersession cycles. More rules
  plug in through :data:`ATTENTION_RULES` (see :func:`add_attention_rule`); duplicates are
  listed as the other members of each group (near ones once the file's vectors exist); two live
  memories joined by a ``contradicts`` typed link (:mod:`.links`) are both listed;
* **flagged** — memories the reviewer flagged with a note.

A memory the reviewer marked reviewed drops out until it changes again (its ``updated_at``
moves past the marked version); a flag stays until it is cleared or the memory is marked
reviewed.

Marks live in a plain ``ora_desktop_review`` table in the agent's own file, so they travel
with it (ARCHITECTURE.md, contract 2): created by the first mark or flag, never by reading.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from .. import engine_tables, timestamps
from ..errors import InvalidValue, NotFound
from ..maintenance.check import _problems, supersession_cycles
from ..rawsql import all_rows, run_sql
from ..records import Change, ChangeKind, Initiator, Memory
from ..schema import RECALL_THRESHOLD
from ..store import Store

TABLE = engine_tables.REVIEW
#: The ``memory_id`` of the row holding a reviewer's last "mark all reviewed" of the file.
WHOLE_FILE = ""
MAX_NOTE = 200
EXPIRING_DAYS = 7
IMPORTANT = 7
DEFAULT_LIMIT = 200

#: Words for every reason a memory is listed.
REASONS = {
    "flagged": "flagged",
    "new": "new since your last review",
    "changed": "changed since your last review",
    "important_low_health": f"important (≥ {IMPORTANT}) but health at or below {RECALL_THRESHOLD} (recall skips it)",
    "expiring": f"expires within {EXPIRING_DAYS} days",
    "dangling_related_to": "related_to names a memory that does not exist",
    "malformed_related_to": "related_to is not a JSON array",
    "dangling_superseded_by": "superseded_by names a memory that does not exist",
    "supersession_cycle": "part of a supersession cycle",
    "duplicate": "says the same as another memory",
    "contradiction": "contradicts another live memory (a typed link)",
}
ATTENTION = ("important_low_health", "expiring", "dangling_related_to", "malformed_related_to",
             "dangling_superseded_by", "supersession_cycle", "duplicate", "contradiction")


def default_reviewer() -> str:
    """The login name of the person at the desk (``"me"`` when the system cannot say)."""
    try:
        return getpass.getuser() or "me"
    except (OSError, KeyError):
        return "me"


@dataclass(frozen=True, slots=True)
class AttentionRule:
    """One kind of "needs attention": a SQL condition on ``memories`` (``:now`` is bound), or a
    ``finder(store, limit) -> [(memory id, detail)]`` for what SQL alone cannot say."""

    name: str
    label: str
    where: str | None = None
    finder: Callable[[Store, int], list[tuple[str, str]]] | None = None
    columns: tuple[str, ...] = ()


def _cycle_members(store: Store, limit: int) -> list[tuple[str, str]]:
    out = []
    for cycle in supersession_cycles(store):
        loop = " → ".join([*cycle, cycle[0]])
        out += [(memory_id, loop) for memory_id in cycle]
    return out[:limit]


def _duplicate_members(store: Store, limit: int) -> list[tuple[str, str]]:
    """The other members of each duplicate group (the group's most important member is the one to
    keep): exact copies always, near ones when the file's vectors exist (the desk never embeds a
    whole file on its own; ``ora-desktop embed`` or a search by meaning does)."""
    from ..search.semantic import has_vectors
    from .duplicates import find_duplicates

    try:
        near = has_vectors(store)
    except Exception:  # noqa: BLE001 (a model that cannot load: exact copies still count)
        near = False
    out = []
    for group in find_duplicates(store, near=near).groups:
        out += [(other, f"{group.kind} duplicate of {group.ids[0]}") for other in group.ids[1:]]
    return out[:limit]


def _contradicting(store: Store, limit: int) -> list[tuple[str, str]]:
    """Both members of each ``contradicts`` link between two live memories (:mod:`.links`)."""
    from .links import contradictions

    out = []
    for a, b in contradictions(store):
        detail = f"{a.id} contradicts {b.id}, both live"
        out += [(a.id, detail), (b.id, detail)]
    return out[:limit]


def _rules(columns: Sequence[str]) -> list[AttentionRule]:
    """The attention rules the file's columns allow (link lint shared with ``run check``)."""
    lint = _problems(tuple(columns))
    rules = [
        AttentionRule("important_low_health", REASONS["important_low_health"],
                      f"importance >= {IMPORTANT} AND health_score IS NOT NULL AND health_score <= {RECALL_THRESHOLD} "
                      "AND (superseded_by IS NULL OR superseded_by = '')",
                      columns=("importance", "health_score", "superseded_by")),
        AttentionRule("expiring", REASONS["expiring"],
                      "expires_at IS NOT NULL AND expires_at != '' AND julianday(expires_at) >= julianday(:now) "
                      f"AND julianday(expires_at) < julianday(:now, '+{EXPIRING_DAYS} days')",
                      columns=("expires_at",)),
    ]
    for name in ("dangling_related_to", "malformed_related_to", "dangling_superseded_by"):
        if name in lint:
            rules.append(AttentionRule(name, REASONS[name], lint[name][0]))
    if "superseded_by" in columns:
        rules.append(AttentionRule("supersession_cycle", REASONS["supersession_cycle"], finder=_cycle_members))
    rules.append(AttentionRule("duplicate", REASONS["duplicate"], finder=_duplicate_members, columns=("content",)))
    rules.append(AttentionRule("contradiction", REASONS["contradiction"], finder=_contradicting))
    rules += [rule for rule in ATTENTION_RULES if all(c in columns for c in rule.columns)]
    return [r for r in rules if all(c in columns for c in r.columns)]


#: Extra attention rules (beyond the built-in ones above), in the order they are listed.
ATTENTION_RULES: list[AttentionRule] = []


def add_attention_rule(rule: AttentionRule) -> None:
    """Register another kind of "needs attention" (replacing one of the same name)."""
    ATTENTION_RULES[:] = [r for r in ATTENTION_RULES if r.name != rule.name] + [rule]
    REASONS.setdefault(rule.name, rule.label)


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One memory on the desk and why: ``reasons`` (keys of :data:`REASONS`), with details."""

    memory: Memory
    reasons: tuple[str, ...]
    details: tuple[str, ...] = ()
    note: str | None = None

    @property
    def needs_attention(self) -> bool:
        return any(r not in ("new", "changed") for r in self.reasons)

    def describe(self) -> str:
        """The reasons in words (details after a colon)."""
        words = []
        for reason in self.reasons:
            text = REASONS.get(reason, reason)
            if reason == "flagged" and self.note:
                text = f"flagged: {self.note}"
            words.append(text)
        return "; ".join(words + list(self.details))


@dataclass(frozen=True, slots=True)
class ReviewResult:
    """What is on the desk for ``reviewer`` in one file."""

    path: str
    reviewer: str
    since: datetime | None  # the reviewer's last "mark all reviewed" (None: never)
    items: tuple[ReviewItem, ...]
    counts: dict[str, int] = field(default_factory=dict)  # reason -> matching memories (not cut by limit)
    limit: int = DEFAULT_LIMIT

    @property
    def truncated(self) -> tuple[str, ...]:
        """Reasons with more matching memories than were listed."""
        return tuple(r for r, n in self.counts.items() if n > self.limit)


@dataclass(frozen=True, slots=True)
class ReviewWrite:
    """What a mark or flag did: the memories concerned and the ``Change`` reported."""

    path: str
    reviewer: str
    ids: tuple[str, ...]
    action: str  # reviewed | reviewed_all | flagged | unflagged | restored
    change: Change


def _marks(store: Store, reviewer: str) -> dict[str, tuple[str | None, str | None, str | None, int]]:
    """memory id -> (version, reviewed_at, note, via_all) for the reviewer (empty without the table).

    ``via_all`` marks were made by a *mark all* for memories written in its very second: they keep
    those out of "new", but unlike a person's own mark they do not hide what needs attention."""
    if not store.has_table(TABLE):
        return {}
    rows = all_rows(store, f"SELECT memory_id, version, reviewed_at, note, via_all FROM {TABLE} WHERE reviewer = ?",
                           (reviewer,))
    return {str(r[0]): (r[1], r[2], r[3], int(r[4] or 0)) for r in rows}


def review(store: Store, reviewer: str | None = None, *, limit: int = DEFAULT_LIMIT,
           now: datetime | None = None) -> ReviewResult:
    """The review desk of ``store`` for ``reviewer`` (reads only; see the module doc)."""
    reviewer = reviewer or default_reviewer()
    limit = max(1, int(limit))
    now_sql = timestamps.to_sql(now or timestamps.now())
    marks = _marks(store, reviewer)
    since_raw = marks.get(WHOLE_FILE, (None, None, None, 0))[1]
    reviewed = {m: v for m, (v, _at, _note, via_all) in marks.items()
                if m != WHOLE_FILE and v is not None and not via_all}
    reasons: dict[str, list[str]] = {}
    details: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    has_table = bool(marks) or store.has_table(TABLE)
    # A memory marked reviewed at its current version is left out (in SQL, so limits stay true);
    # the marks a "mark all" made for its own second count for new/changed only.
    mark = (f"EXISTS (SELECT 1 FROM {TABLE} r WHERE r.reviewer = :who AND r.memory_id = memories.id "
            "AND r.version IS memories.updated_at{})")
    not_seen = f"NOT {mark.format('')}" if has_table else "1"
    not_reviewed = f"NOT {mark.format(' AND r.via_all = 0')}" if has_table else "1"
    params = {"now": now_sql, "who": reviewer, "since": since_raw}

    def listed(name: str, where: str, order: str = "rowid DESC") -> None:
        condition = f"({where}) AND {not_seen}"
        rows = all_rows(store, f"SELECT id FROM memories WHERE {condition} ORDER BY {order} LIMIT {limit}",
                               params)  # type: ignore[arg-type]  (named parameters)
        counts[name] = len(rows) if len(rows) < limit else int(
            all_rows(store, f"SELECT count(*) FROM memories WHERE {condition}", params)[0][0])  # type: ignore[arg-type]
        for (memory_id,) in rows:
            reasons.setdefault(str(memory_id), []).append(name)

    flagged = {m: note for m, (_v, _at, note, _all) in marks.items() if note and m != WHOLE_FILE}
    if flagged:
        counts["flagged"] = len(flagged)
        for memory_id in list(flagged)[:limit]:
            reasons.setdefault(memory_id, []).append("flagged")
    newest = "julianday(coalesce(updated_at, created_at)) DESC, rowid DESC"
    if since_raw is None:  # never reviewed: everything is new, the latest added first
        listed("new", "1")
    else:
        listed("new", "julianday(created_at) >= julianday(:since)", newest)
        listed("changed", "julianday(updated_at) >= julianday(:since) AND NOT (julianday(created_at) >= "
                          "julianday(:since))", newest)
    rules = _rules(store.columns)
    sql_rules = [rule for rule in rules if rule.where is not None]
    if sql_rules:  # one scan for every SQL rule (a row stops at the first rule it meets), flags per rule
        flags = ", ".join(f"coalesce(({rule.where}), 0)" for rule in sql_rules)
        any_rule = " OR ".join(f"({rule.where})" for rule in sql_rules)
        hits = all_rows(store, f"SELECT id, {flags} FROM memories WHERE ({any_rule}) AND {not_reviewed} "
                               "ORDER BY rowid DESC", params)  # type: ignore[arg-type]  (named parameters)
        for position, rule in enumerate(sql_rules, start=1):
            matching = [row[0] for row in hits if row[position]]
            counts[rule.name] = len(matching)
            for memory_id in matching[:limit]:
                reasons.setdefault(str(memory_id), []).append(rule.name)
    for rule in rules:
        if rule.finder is None:
            continue
        found = rule.finder(store, limit * 4)
        current = store.get_many(i for i, _d in found)
        found = [(i, d) for i, d in found if i in current and reviewed.get(i) != current[i].updated_at_text]
        counts[rule.name] = len(found)
        for memory_id, detail in found[:limit]:
            reasons.setdefault(memory_id, []).append(rule.name)
            if detail:
                details.setdefault(memory_id, []).append(detail)
    counts = {k: v for k, v in counts.items() if v}
    memories = store.get_many(reasons)
    items = []
    for memory_id, why in reasons.items():
        memory = memories.get(memory_id)
        if memory is None:  # a flag on a memory deleted since: nothing to show
            continue
        if "flagged" not in why and reviewed.get(memory_id) == memory.updated_at_text:
            continue  # reviewed at this version (finder rules are filtered here)
        order = [r for r in REASONS if r in why] + [r for r in why if r not in REASONS]
        items.append(ReviewItem(memory, tuple(dict.fromkeys(order)), tuple(details.get(memory_id, ())),
                                flagged.get(memory_id)))
    items.sort(key=_rank)
    return ReviewResult(str(store.path), reviewer, timestamps.parse(since_raw), tuple(items), counts, limit)


def _rank(item: ReviewItem) -> tuple:
    """Flagged first, then what needs attention, then the newest changes."""
    changed = item.memory.updated_at or item.memory.created_at
    return ("flagged" not in item.reasons, not item.needs_attention,
            -(changed.timestamp() if changed else 0.0), item.memory.id)


# ----------------------------------------------------------------------------- writes
def _ensure_table(store: Store) -> None:
    store.create_engine_tables(TABLE)


def _existing(store: Store, ids: Sequence[str]) -> dict[str, Memory]:
    found = store.get_many(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"{store.path}: no memory with id {', '.join(repr(i) for i in missing)} (nothing changed)")
    return found


def _done(store: Store, reviewer: str, ids: Iterable[str], action: str) -> ReviewWrite:
    ids = tuple(ids)
    change = store._emit(Change(changed=frozenset(ids), source="review"))  # noqa: SLF001 (listeners hear of it)
    return ReviewWrite(str(store.path), reviewer, ids, action, change)


def mark_reviewed(store: Store, ids: Sequence[str], reviewer: str | None = None) -> ReviewWrite:
    """Mark memories reviewed at their current version (clears their flags). Unknown ids refuse
    the whole call, changing nothing."""
    reviewer = reviewer or default_reviewer()
    ids = list(dict.fromkeys(ids))
    if not ids:
        raise InvalidValue("ids", "name at least one memory to mark reviewed")
    store._require_writable()  # noqa: SLF001 (refuse before anything else)
    stamp = timestamps.now_sql()
    with store.write():
        found = _existing(store, ids)
        _ensure_table(store)
        store.db.cursor().executemany(
            f"INSERT OR REPLACE INTO {TABLE} (reviewer, memory_id, version, reviewed_at, note, flagged_at, via_all) "
            "VALUES (?, ?, ?, ?, NULL, NULL, 0)",
            [(reviewer, memory_id, found[memory_id].updated_at_text, stamp) for memory_id in ids])
    return _done(store, reviewer, ids, "reviewed")


def mark_all_reviewed(store: Store, reviewer: str | None = None, as_of: datetime | None = None) -> ReviewWrite:
    """Everything created or changed up to ``as_of`` (default now) counts as reviewed: later
    changes are new again. Memories written in that very second are marked one by one (times
    have whole seconds), so none of them shows again and none written after is missed."""
    reviewer = reviewer or default_reviewer()
    stamp = timestamps.to_sql(as_of or timestamps.now())
    store._require_writable()  # noqa: SLF001
    with store.write():
        _ensure_table(store)
        run_sql(store, f"INSERT OR REPLACE INTO {TABLE} (reviewer, memory_id, reviewed_at) VALUES (?, ?, ?)",
                      (reviewer, WHOLE_FILE, stamp))
        same_second = all_rows(store,
            "SELECT id, updated_at FROM memories WHERE julianday(coalesce(updated_at, created_at)) >= julianday(?) "
            "AND julianday(coalesce(updated_at, created_at)) < julianday(?, '+1 second')", (stamp, stamp))
        store.db.cursor().executemany(
            f"INSERT INTO {TABLE} (reviewer, memory_id, version, reviewed_at, via_all) VALUES (?, ?, ?, ?, 1) "
            "ON CONFLICT (reviewer, memory_id) DO UPDATE SET via_all = CASE WHEN version IS excluded.version "
            "THEN via_all ELSE 1 END, version = excluded.version, reviewed_at = excluded.reviewed_at",
            [(reviewer, str(memory_id), version, stamp) for memory_id, version in same_second])
    return _done(store, reviewer, (), "reviewed_all")


def check_note(note: str) -> str:
    """A flag's note: one line of 1 to 200 characters."""
    text = " ".join(str(note or "").split())
    if not text:
        raise InvalidValue("note", "say why it is flagged (a short note)")
    if len(text) > MAX_NOTE:
        raise InvalidValue("note", f"{len(text)} characters; keep it to {MAX_NOTE}")
    return text


def flag(store: Store, memory_id: str, note: str, reviewer: str | None = None) -> ReviewWrite:
    """Flag a memory with a short note (replacing an earlier note)."""
    reviewer = reviewer or default_reviewer()
    text = check_note(note)
    store._require_writable()  # noqa: SLF001
    stamp = timestamps.now_sql()
    with store.write():
        _existing(store, [memory_id])
        _ensure_table(store)
        run_sql(store,
            f"INSERT INTO {TABLE} (reviewer, memory_id, note, flagged_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (reviewer, memory_id) DO UPDATE SET note = excluded.note, flagged_at = excluded.flagged_at",
            (reviewer, memory_id, text, stamp))
    return _done(store, reviewer, [memory_id], "flagged")


def unflag(store: Store, memory_id: str, reviewer: str | None = None) -> ReviewWrite:
    """Clear a memory's flag (a memory that was never flagged is refused: nothing to clear)."""
    reviewer = reviewer or default_reviewer()
    store._require_writable()  # noqa: SLF001
    if not store.has_table(TABLE):
        raise NotFound(f"{store.path}: memory {memory_id!r} is not flagged (nothing changed)")
    with store.write():
        cursor = run_sql(store, f"UPDATE {TABLE} SET note = NULL, flagged_at = NULL WHERE reviewer = ? "
                               "AND memory_id = ? AND note IS NOT NULL", (reviewer, memory_id))
        if cursor.rowcount == 0:
            raise NotFound(f"{store.path}: memory {memory_id!r} is not flagged (nothing changed)")
    return _done(store, reviewer, [memory_id], "unflagged")


_COLUMNS = "reviewer, memory_id, version, reviewed_at, note, flagged_at, via_all"


def snapshot(store: Store, reviewer: str | None = None) -> tuple[tuple, ...]:
    """Every mark and flag of ``reviewer`` in the file, to undo a later mark with :func:`restore`."""
    reviewer = reviewer or default_reviewer()
    if not store.has_table(TABLE):
        return ()
    return tuple(tuple(r) for r in all_rows(store, f"SELECT {_COLUMNS} FROM {TABLE} WHERE reviewer = ?",
                                                   (reviewer,)))


def journalled(store: Store, reviewer: str | None, label: str,
               work: Callable[[Store], ReviewWrite]) -> ReviewWrite:
    """Run ``work`` (a mark or flag by ``reviewer``) as one step of the file's undo journal: its
    undo puts the reviewer's marks and flags back as they were (:func:`restore`)."""
    from . import journal

    reviewer = reviewer or default_reviewer()
    with store.write():
        before = snapshot(store, reviewer)
        done = work(store)
        journal.record(store, Change(source="review", kind=ChangeKind.EDITED, initiator=Initiator.USER), label,
                       journal.Undo(review={"reviewer": reviewer, "rows": [list(r) for r in before]}))
    return done


def restore(store: Store, reviewer: str | None, rows: tuple[tuple, ...]) -> ReviewWrite:
    """Put ``reviewer``'s marks and flags back as :func:`snapshot` saw them (one transaction)."""
    reviewer = reviewer or default_reviewer()
    store._require_writable()  # noqa: SLF001
    with store.write():
        _ensure_table(store)
        before = {r[0] for r in all_rows(store, f"SELECT memory_id FROM {TABLE} WHERE reviewer = ?", (reviewer,))}
        run_sql(store, f"DELETE FROM {TABLE} WHERE reviewer = ?", (reviewer,))
        store.db.cursor().executemany(f"INSERT INTO {TABLE} ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                      [r for r in rows if r[0] == reviewer])
    touched = sorted((before | {r[1] for r in rows}) - {WHOLE_FILE})
    return _done(store, reviewer, touched, "restored")


def as_json(result: ReviewResult) -> dict:
    """A JSON-able form of a review (used by the CLI and any other face)."""
    return {
        "path": result.path, "reviewer": result.reviewer,
        "since": timestamps.to_sql(result.since) if result.since else None,
        "counts": result.counts, "truncated": list(result.truncated),
        "items": [{"id": i.memory.id, "reasons": list(i.reasons), "why": i.describe(), "note": i.note,
                   "type": i.memory.type, "importance": i.memory.importance, "health_score": i.memory.health_score,
                   "updated_at": i.memory.updated_at_text, "content": i.memory.content} for i in result.items],
    }


__all__ = ["ATTENTION", "ATTENTION_RULES", "AttentionRule", "REASONS", "ReviewItem", "ReviewResult", "ReviewWrite",
           "add_attention_rule", "as_json", "check_note", "default_reviewer", "flag", "mark_all_reviewed",
           "mark_reviewed", "restore", "review", "snapshot", "unflag"]
