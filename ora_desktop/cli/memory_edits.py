"""Memory subcommands that change a file: add, edit, rm, undelete, touch, pin, unpin, link,
links, repair-links, supersede.

Each calls one operation of :mod:`ora_desktop.core.operations.edits` (validation before any
write, one-line errors, nothing changed; the sync rule on edits; recoverable deletes into
``ora_desktop_trash``), which journals it so ``ora-desktop undo`` can take it back. ``trash``
lists what ``undelete`` can bring back. The parsers are declared in :mod:`.memories`.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import Duplicate, OraError, create_database
from ..core.fingerprint import check_version
from ..core.operations import edits, links, pins
from ..core.operations.agent_memory import touch
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


def cmd_add(args: argparse.Namespace) -> int:
    """Store a new memory (optionally creating the agent file first)."""
    path = target_path(args)
    if not path.exists():
        if not args.create:
            raise OraError(f"{path}: no such file (add --create to start a new agent file there)")
        create_database(path)
    with open_target(args) as store:
        try:
            memory = edits.add(store, text_arg(args.content), args.type, args.importance, id=args.id,
                               on_duplicate="add" if args.allow_duplicate else "error", **_fields(args, True)).memory
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
    expected = None if args.expect_version is None else check_version(args.expect_version, "--expect-version")
    with open_target(args) as store:
        memory = edits.edit(store, args.id, fields, expected_version=expected).memory
    if args.json:
        emit_json(memory)
    else:
        print(f"updated {describe(memory)}: {', '.join(sorted(fields))}; sync status {memory.sync_status}")
    return 0


def cmd_rm(args: argparse.Namespace) -> int:
    """Delete memories recoverably and print the command that restores them."""
    ids = list(dict.fromkeys(args.ids))
    with open_target(args) as store:
        deleted = edits.delete(store, ids, reason=args.reason)
    removed, trash_ids = deleted.removed, list(deleted.trash_ids)
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
        result = edits.restore(store, wanted)
    restored, skipped = list(result.restored), result.skipped
    if args.json:
        emit_json({"restored": restored, "skipped_existing": list(skipped), "note": result.note})
    else:
        if result.note:
            print(result.note)
        for memory_id in restored:
            print(f"restored {memory_id}")
        for memory_id in skipped:
            print(f"skipped {memory_id}: a memory with that id exists again (left in the trash)")
    return 0 if restored or not skipped else 1


def cmd_touch(args: argparse.Namespace) -> int:
    """The seed's access update for each id (all ids must exist)."""
    ids = list(dict.fromkeys(args.ids))
    with open_target(args) as store:
        memories = list(touch(store, ids).memories)
    if args.json:
        emit_json(memories)
    else:
        for m in memories:
            print(f"touched {m.id}: accessed {m.access_count} times, health {m.health_score:.2f}")
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    """Add or remove a ``related_to`` link (both ways unless ``--one-way``), or a typed link (``--type``)."""
    if args.type is not None:
        return _typed_link(args)
    with open_target(args) as store:
        change = edits.link(store, args.a, args.b, mutual=not args.one_way, remove=args.remove).change
    verb = "unlinked" if args.remove else "linked"
    if args.json:
        emit_json({"action": verb, "changed": change.changed})
    elif change.changed:
        print(f"{verb} {args.a} and {args.b} (changed: {', '.join(sorted(change.changed))})")
    else:
        print(f"nothing to do: {args.a} and {args.b} were already {verb}")
    return 0


def cmd_pin(args: argparse.Namespace) -> int:
    """Pin memories: they come first in every context."""
    return _pins(args, pins.pin)


def cmd_unpin(args: argparse.Namespace) -> int:
    """Unpin memories."""
    return _pins(args, pins.unpin)


def _pins(args: argparse.Namespace, operation: Any) -> int:
    with open_target(args) as store:
        done = operation(store, args.ids)
    if args.json:
        emit_json({"action": done.action, "done": list(done.done), "already": list(done.already)})
        return 0
    for memory_id in done.done:
        print(f"{done.action} {memory_id}")
    for memory_id in done.already:
        print(f"{memory_id} was already {done.action}")
    return 0


def _typed_link(args: argparse.Namespace) -> int:
    if args.one_way:
        raise OraError("--one-way: a typed link already points one way (ID --TYPE--> OTHER_ID); leave it out")
    with open_target(args) as store:
        done = (links.remove_link if args.remove else links.add_link)(store, args.a, args.b, args.type)
    link = done.link
    if args.json:
        emit_json({"action": done.action, "done": done.done, "source": link.source, "target": link.target,
                   "type": link.type})
    elif done.done:
        print(f"{done.action}: {link.source} {link.type} {link.target}")
    else:
        print(f"nothing to do: {link.source} {link.type} {link.target} was already "
              f"{'there' if done.action == 'added' else 'absent'}")
    return 0


def cmd_links(args: argparse.Namespace) -> int:
    """A memory's links, typed and ``related_to``, both ways."""
    with open_target(args, readonly=True) as store:
        found = links.links_of(store, args.id)
    if args.json:
        emit_json({"id": args.id, "links": [
            {"other": v.other_id, "type": v.type, "direction": v.direction, "missing": v.other is None,
             "content": v.other.content if v.other else None} for v in found]})
        return 0
    if not found:
        print(f"{args.id} has no links")
        return 0
    print(table(("LINK", "DIRECTION", "OTHER", "CONTENT"),
                [(v.describe(args.id), v.direction, v.other_id, v.other.title if v.other else "(not in this file)")
                 for v in found]))
    return 0


def cmd_replace(args: argparse.Namespace) -> int:
    """Find and replace text in memories (``--dry-run`` previews)."""
    from ..core.operations.replace import plan_replace, replace_text

    with open_target(args) as store:
        ids = args.ids  # None: every memory of the file
        plan = plan_replace(store, ids, args.find, args.replacement)
        if not args.dry_run and plan.memories:
            replace_text(store, ids, args.find, args.replacement)
    times = f"{plan.matches:,} time{'s' if plan.matches != 1 else ''}"
    memories = f"{plan.memories:,} memor{'y' if plan.memories == 1 else 'ies'}"
    if args.json:
        emit_json({"dry_run": args.dry_run, "memories": plan.memories, "matches": plan.matches,
                   "preview": [{"id": p.id, "before": p.before, "after": p.after} for p in plan.preview]})
        return 0
    print(f"{'would replace' if args.dry_run else 'replaced'} {times} in {memories}"
          + ("" if args.dry_run or not plan.memories else " ('ora-desktop undo' puts them back)"))
    for p in plan.preview[:20]:
        print(f"  {p.id}: …{p.before}… → …{p.after}…")
    return 0


def cmd_repair_links(args: argparse.Namespace) -> int:
    """Rewrite a malformed ``related_to`` as the ids it names."""
    with open_target(args) as store:
        done = edits.repair_links(store, args.id)
    if args.json:
        emit_json({"id": args.id, "related_to": list(done.kept), "original": done.original})
    else:
        kept = ", ".join(done.kept) or "no ids"
        print(f"repaired the links of {args.id}: kept {kept} (was {done.original!r}; 'ora-desktop undo' restores it)")
    return 0


def cmd_supersede(args: argparse.Namespace) -> int:
    """Mark OLD as superseded by NEW (cycles refused)."""
    with open_target(args) as store:
        edits.supersede(store, args.old, args.new)
        chain = store.chain(args.new)
    if args.json:
        emit_json({"superseded": args.old, "by": args.new, "chain": [m.id for m in chain.members]})
    else:
        print(f"{args.old} is now superseded by {args.new}; chain (newest first): "
              + " <- ".join(m.id for m in chain.members))
    return 0
