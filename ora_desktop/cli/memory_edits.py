"""Memory subcommands that change a file: add, edit, rm, undelete, touch, link, supersede.

Each validates before it writes (one-line errors, nothing changed) and goes through ``Store``:
the sync rule on edits, recoverable deletes into ``ora_desktop_trash``. ``trash`` lists what
``undelete`` can bring back. The parsers are declared in :mod:`.memories`.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import Duplicate, NotFound, OraError, Store, create_database
from ..core.operations.agent_memory import require_ids
from .common import describe, emit_json, open_target, quote_path, table, target_path, text_arg


def _fields(args: argparse.Namespace, adding: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if not adding:
        if args.content is not None:
            fields["content"] = text_arg(args.content)
        if args.type is not None:
            fields["type"] = args.type
        if args.importance is not None:
            fields["importance"] = args.importance
    if args.health is not None:
        fields["health_score"] = args.health
    if args.expires is not None:
        fields["expires_at"] = args.expires or None
    if args.sync_status is not None:
        fields["sync_status"] = args.sync_status
    if args.related is not None:
        fields["related_to"] = [r for r in args.related if r]
    return fields


def _require(store: Store, ids: list[str]) -> None:
    """Raise ``NotFound`` naming every id that is not in the file (before any change)."""
    require_ids(store, ids)


def cmd_add(args: argparse.Namespace) -> int:
    """Store a new memory (optionally creating the agent file first)."""
    path = target_path(args)
    if not path.exists():
        if not args.create:
            raise OraError(f"{path}: no such file (add --create to start a new agent file there)")
        create_database(path)
    with open_target(args) as store:
        try:
            memory = store.add(text_arg(args.content), args.type, args.importance, id=args.id,
                               on_duplicate="add" if args.allow_duplicate else "error", **_fields(args, True))
        except Duplicate as exc:
            raise OraError(f"{exc} (--allow-duplicate adds it anyway)") from None
    if args.json:
        emit_json(memory)
    else:
        print(f"added {describe(memory)} to {store.path}")
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    """Change fields of a memory through the sync rule; ``--expect-version`` guards against overwrites."""
    fields = _fields(args, adding=False)
    if not fields:
        raise OraError("nothing to change: give --content, --type, --importance, --health, --expires, "
                       "--sync-status or --related")
    with open_target(args) as store:
        memory = store.update(args.id, expected_version=args.expect_version, **fields)
    if args.json:
        emit_json(memory)
    else:
        print(f"updated {describe(memory)}: {', '.join(sorted(fields))}; sync status {memory.sync_status}")
    return 0


def cmd_rm(args: argparse.Namespace) -> int:
    """Delete memories recoverably and print the command that restores them."""
    ids = list(dict.fromkeys(args.ids))
    with open_target(args) as store:
        _require(store, ids)
        removed = store.delete(ids, reason=args.reason)
        batch = getattr(store, "last_trash_batch", None)
        kept = store.trash(limit=None, batch=batch) if batch else []
    trash_ids = sorted(d.trash_id for d in kept)
    if args.json:
        emit_json({"removed": removed, "trash_ids": trash_ids, "file": str(store.path),
                   "restore": f"ora-desktop undelete --db {quote_path(store.path)} {' '.join(map(str, trash_ids))}"})
        return 0
    for memory in removed:
        print(f"removed {describe(memory)}")
    print(f"kept in the trash of {store.path} (table ora_desktop_trash); to restore:")
    print(f"  ora-desktop undelete --db {quote_path(store.path)} {' '.join(map(str, trash_ids))}")
    return 0


def cmd_trash(args: argparse.Namespace) -> int:
    """List deleted memories that can be restored."""
    with open_target(args, readonly=True) as store:
        rows = store.trash(limit=args.limit)
    if args.json:
        emit_json(rows)
        return 0
    if not rows:
        print(f"the trash of {store.path} is empty")
        return 0
    print(table(("TRASH_ID", "DELETED (UTC)", "REASON", "MEMORY", "TYPE", "CONTENT"),
                [(d.trash_id, d.deleted_at, d.reason, d.memory.id, d.memory.type, d.memory.title) for d in rows]))
    print(f"restore with: ora-desktop undelete --db {quote_path(store.path)} TRASH_ID...")
    return 0


def cmd_undelete(args: argparse.Namespace) -> int:
    """Restore trashed rows by trash id (unknown ids: nothing restored)."""
    wanted = list(dict.fromkeys(args.trash_ids))
    with open_target(args) as store:
        known: set[int] = set()
        if store.has_table("ora_desktop_trash"):
            marks = ",".join("?" * len(wanted))
            known = {r[0] for r in store.execute(f"SELECT id FROM ora_desktop_trash WHERE id IN ({marks})", wanted)}
        unknown = [t for t in wanted if t not in known]
        if unknown:
            raise NotFound(f"{store.path}: no trash row {', '.join(map(str, unknown))} "
                           "(see 'ora-desktop trash'; nothing restored)")
        change, skipped = store.restore_deleted(wanted)
    restored = sorted(change.added)
    if args.json:
        emit_json({"restored": restored, "skipped_existing": list(skipped)})
    else:
        for memory_id in restored:
            print(f"restored {memory_id}")
        for memory_id in skipped:
            print(f"skipped {memory_id}: a memory with that id exists again (left in the trash)")
    return 0 if restored or not skipped else 1


def cmd_touch(args: argparse.Namespace) -> int:
    """The seed's access update for each id (all ids must exist)."""
    ids = list(dict.fromkeys(args.ids))
    with open_target(args) as store:
        _require(store, ids)
        store.touch_many(ids)
        found = store.get_many(ids)
    memories = [found[i] for i in ids if i in found]
    if args.json:
        emit_json(memories)
    else:
        for m in memories:
            print(f"touched {m.id}: accessed {m.access_count} times, health {m.health_score:.2f}")
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    """Add or remove a ``related_to`` link (both ways unless ``--one-way``)."""
    with open_target(args) as store:
        if args.remove:
            change = store.unlink(args.a, args.b, mutual=not args.one_way)
        else:
            change = store.link(args.a, args.b, mutual=not args.one_way)
    verb = "unlinked" if args.remove else "linked"
    if args.json:
        emit_json({"action": verb, "changed": change.changed})
    elif change.changed:
        print(f"{verb} {args.a} and {args.b} (changed: {', '.join(sorted(change.changed))})")
    else:
        print(f"nothing to do: {args.a} and {args.b} were already {verb}")
    return 0


def cmd_supersede(args: argparse.Namespace) -> int:
    """Mark OLD as superseded by NEW (cycles refused)."""
    with open_target(args) as store:
        store.supersede(args.old, args.new)
        chain = store.chain(args.new)
    if args.json:
        emit_json({"superseded": args.old, "by": args.new, "chain": [m.id for m in chain.members]})
    else:
        print(f"{args.old} is now superseded by {args.new}; chain (newest first): "
              + " <- ".join(m.id for m in chain.members))
    return 0
