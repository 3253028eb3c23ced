"""Subcommands of the memories feature: browse, read, edit, link and delete memories.

Reading commands open the file read-only; every write goes through ``Store`` (validation,
the sync rule, recoverable deletes). Output is a readable table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from ..core import ListQuery, Memory, NotFound, OraError, Store, create_database, open_store
from ..core.listing import SORTABLE, Cursor
from ..core.schema import MEMORY_TYPES, SYNC_STATUSES
from . import common
from .common import command, emit_json, open_target, table, target_path

TYPE_HELP = f"memory type: {', '.join(MEMORY_TYPES)}"


def register(sub: Any) -> None:
    """Add this feature's subcommands to the ora-desktop parser."""
    p = command(sub, "sites", cmd_sites, "list sites and their agent files (with memory counts)")
    p.add_argument("--home", dest="target_home", metavar="DIR", help="Ora home (default $ORA_HOME or ~/.ora)")
    common.add_json(p)

    p = command(sub, "list", cmd_list, "list memories with filters, sorting and paging",
                "List memories as a table (or JSON). Superseded memories are hidden unless asked. "
                "Paging is by keyset: pass the printed --after token for the next page.")
    common.add_target(p)
    _add_list_options(p)

    p = command(sub, "show", cmd_show, "show one memory in full, with its chain and related memories")
    common.add_target(p)
    p.add_argument("id", help="memory id")

    p = command(sub, "add", cmd_add, "add a memory",
                "Add a memory (the seed's insert). CONTENT '-' reads the content from standard input.")
    common.add_target(p)
    p.add_argument("content", help="the memory text ('-' reads standard input)")
    _add_field_options(p, adding=True)
    p.add_argument("--id", help="use this id (default: a new unique id)")
    p.add_argument("--create", action="store_true", help="create the agent file (seed schema) if it is missing")

    p = command(sub, "edit", cmd_edit, "change fields of a memory (sync status goes back to pending)",
                "Edit a memory. updated_at becomes now and sync_status pending (unless local_only), "
                "per the sync rule.")
    common.add_target(p)
    p.add_argument("id", help="memory id")
    p.add_argument("--content", help="new text ('-' reads standard input)")
    _add_field_options(p, adding=False)
    p.add_argument("--expect-version", metavar="UPDATED_AT",
                   help="refuse if the memory changed since this updated_at (its 'version')")

    p = command(sub, "rm", cmd_rm, "delete memories (kept in the trash; restore with 'undelete')")
    common.add_target(p)
    p.add_argument("ids", nargs="+", metavar="ID", help="memory ids")
    p.add_argument("--reason", default="deleted from the command line", help="why (kept with the trash row)")

    p = command(sub, "trash", cmd_trash, "list deleted memories that can be restored")
    common.add_target(p)
    p.add_argument("--limit", type=_positive, default=100, help="at most this many rows (default 100)")

    p = command(sub, "undelete", cmd_undelete, "restore deleted memories from the trash by trash id")
    common.add_target(p)
    p.add_argument("trash_ids", nargs="+", type=_positive, metavar="TRASH_ID", help="ids shown by 'trash' or 'rm'")

    p = command(sub, "touch", cmd_touch, "record an access: count +1, last access now, health +0.1")
    common.add_target(p)
    p.add_argument("ids", nargs="+", metavar="ID", help="memory ids")

    p = command(sub, "recall", cmd_recall, "the seed's recall: one type, healthy, most important and newest first")
    common.add_target(p)
    p.add_argument("type", choices=MEMORY_TYPES, help=TYPE_HELP)
    p.add_argument("--limit", type=_positive, default=20, help="at most this many (default 20)")

    p = command(sub, "important", cmd_important,
                "the seed's extraction query: importance >= 7, or facts with health >= 0.5")
    common.add_target(p)
    p.add_argument("--limit", type=_positive, default=50, help="at most this many (default 50)")

    p = command(sub, "link", cmd_link, "relate two memories (related_to), or unlink them with --remove")
    common.add_target(p)
    p.add_argument("a", metavar="ID", help="memory id")
    p.add_argument("b", metavar="OTHER_ID", help="the memory to relate it to")
    p.add_argument("--remove", action="store_true", help="remove the link instead of adding it")
    p.add_argument("--one-way", action="store_true", help="only change ID's related_to, not OTHER_ID's")

    p = command(sub, "supersede", cmd_supersede, "mark a memory as superseded by a newer one")
    common.add_target(p)
    p.add_argument("old", help="the outdated memory")
    p.add_argument("new", help="the memory that replaces it")

    p = command(sub, "check-schema", cmd_check_schema, "check files against the seed schema (read-only)",
                "Open each file read-only and report what differs from the seed schema. A file that "
                "cannot be used is named on stderr and the exit status is 1; warnings alone exit 0.")
    common.add_target(p, required=False, all_option=True)

    p = command(sub, "demo", cmd_demo, "write a realistic demo Ora home (sites, agents, a task agent)",
                "Write demo sites and agents under --home (default $ORA_HOME or ~/.ora). "
                "Never overwrites a file.")
    p.add_argument("--home", dest="target_home", metavar="DIR", help="where to write (default $ORA_HOME or ~/.ora)")
    p.add_argument("--memories", type=_count, default=2000, metavar="N",
                   help="memories in total, shared among the agents (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same data)")
    common.add_json(p)


# ----------------------------------------------------------------------------- argument types
def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def _count(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be 0 or more")
    return value


def _importance(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to 10") from None
    if not 1 <= value <= 10:
        raise argparse.ArgumentTypeError(f"{value} is outside the allowed range 1 to 10")
    return value


def _health(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 0.0 to 1.0") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{value} is outside the allowed range 0.0 to 1.0")
    return value


def _add_list_options(p: argparse.ArgumentParser) -> None:
    f = p.add_argument_group("filters")
    f.add_argument("--type", action="append", choices=MEMORY_TYPES, help=f"{TYPE_HELP} (repeatable)")
    f.add_argument("--min-importance", type=_importance, metavar="N", help="importance at least N (1-10)")
    f.add_argument("--max-importance", type=_importance, metavar="N", help="importance at most N (1-10)")
    f.add_argument("--min-health", type=_health, metavar="X", help="health at least X (0-1)")
    f.add_argument("--max-health", type=_health, metavar="X", help="health at most X (0-1)")
    f.add_argument("--sync", action="append", choices=SYNC_STATUSES, help="sync status (repeatable)")
    f.add_argument("--expired", action="store_true", default=None, help="only memories past their expires_at")
    f.add_argument("--not-expired", dest="expired", action="store_false", help="hide expired memories")
    f.add_argument("--expiring-days", type=float, metavar="DAYS", help="only memories expiring within DAYS")
    f.add_argument("--superseded", choices=("hide", "show", "only"), default="hide",
                   help="superseded memories: hide (default), show or only")
    f.add_argument("--dirty", action="store_true", default=None, help="only memories changed since their last sync")
    f.add_argument("--clean", dest="dirty", action="store_false", help="only memories in sync")
    f.add_argument("--text", help="content contains this text (plain substring)")
    o = p.add_argument_group("order and paging")
    o.add_argument("--sort", default="created_at", choices=sorted(SORTABLE), metavar="COLUMN",
                   help="sort column (default created_at)")
    o.add_argument("--ascending", dest="descending", action="store_false", default=True,
                   help="oldest/smallest first (default: descending)")
    o.add_argument("--limit", type=_positive, default=50, help="rows per page (default 50)")
    where = o.add_mutually_exclusive_group()
    where.add_argument("--after", metavar="TOKEN", help="next page: the token printed after the previous page")
    where.add_argument("--offset", type=_count, metavar="N", help="skip the first N rows")
    o.add_argument("--count", action="store_true", help="only print how many memories match")


def _add_field_options(p: argparse.ArgumentParser, adding: bool) -> None:
    p.add_argument("--type", choices=MEMORY_TYPES, default="fact" if adding else None,
                   help=TYPE_HELP + (" (default fact)" if adding else ""))
    p.add_argument("--importance", type=int, default=5 if adding else None,
                   help="1 (forgettable) to 10 (critical)" + (", default 5" if adding else ""))
    p.add_argument("--health", type=float, help="health score, 0.0 to 1.0")
    p.add_argument("--expires", metavar="TIME", help="expiry, e.g. '2026-01-31 12:00:00' (UTC; '' clears)")
    p.add_argument("--sync-status", choices=SYNC_STATUSES, help="pending, synced or local_only")
    p.add_argument("--related", action="append", metavar="ID",
                   help="related memory id (repeatable)" + ("" if adding else "; replaces the list"))


# ----------------------------------------------------------------------------- helpers
def _read(args: argparse.Namespace) -> Store:
    return open_target(args, readonly=True)


def _write(args: argparse.Namespace) -> Store:
    return open_target(args, readonly=False)


def _text(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def _flags(memory: Memory) -> str:
    """D dirty, E expired, S superseded, R related, M malformed related_to."""
    return "".join(flag for flag, on in (
        ("D", memory.is_dirty), ("E", memory.is_expired()), ("S", memory.is_superseded),
        ("R", bool(memory.related_to)), ("M", memory.related_malformed),
    ) if on) or "-"


def memory_table(memories: list[Memory]) -> str:
    """Memories as a table; the first line of the content is cut to the terminal width."""
    rows = [
        (m.id, m.type, m.importance, m.health_score, m.access_count, m.created_at, m.sync_status, _flags(m), m.title)
        for m in memories
    ]
    return common.table(("ID", "TYPE", "IMP", "HEALTH", "ACC", "CREATED (UTC)", "SYNC", "FLAGS", "CONTENT"), rows)


def _print_memories(args: argparse.Namespace, memories: list[Memory], empty: str = "no memories") -> None:
    if args.json:
        emit_json(memories)
    elif memories:
        print(memory_table(memories))
    else:
        print(empty)


def _require(store: Store, ids: list[str]) -> None:
    """Raise ``NotFound`` naming every id that is not in the file (before any change)."""
    found = store.get_many(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"{store.path}: no memory with id {', '.join(repr(i) for i in missing)} (nothing changed)")


def _fields(args: argparse.Namespace, adding: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if not adding:
        if args.content is not None:
            fields["content"] = _text(args.content)
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


def _describe(memory: Memory) -> str:
    return f"{memory.id} ({memory.type}, importance {memory.importance}) {common.truncate(memory.title, 60)!r}"


# ----------------------------------------------------------------------------- commands
def cmd_sites(args: argparse.Namespace) -> int:
    home = common.home_of(args)
    entries = []
    for agent in home.agents():
        entry: dict[str, Any] = {"site": agent.site, "agent": agent.agent, "task_agent": agent.is_task_agent,
                                 "path": str(agent.path), "memories": None, "error": None}
        try:
            with open_store(agent.path, readonly=True) as store:
                entry["memories"] = store.count(superseded="show")
        except OraError as exc:
            entry["error"] = str(exc)
        entries.append(entry)
    if args.json:
        emit_json({"home": str(home.root), "agents": entries})
        return 0
    if not entries:
        print(f"no sites in {home.root} (try: ora-desktop demo --home {home.root})")
        return 0
    rows = [(e["site"], e["agent"], "task" if e["task_agent"] else "agent",
             e["memories"] if e["error"] is None else "unreadable", e["path"]) for e in entries]
    print(table(("SITE", "AGENT", "KIND", "MEMORIES", "FILE"), rows))
    return 0


def _list_query(args: argparse.Namespace) -> ListQuery:
    return ListQuery(
        types=tuple(args.type or ()), importance_min=args.min_importance, importance_max=args.max_importance,
        health_min=args.min_health, health_max=args.max_health, sync_statuses=tuple(args.sync or ()),
        expired=args.expired, expiring_within_days=args.expiring_days, superseded=args.superseded,
        dirty=args.dirty, text=args.text, order_by=args.sort, descending=args.descending, limit=args.limit,
    )


def cmd_list(args: argparse.Namespace) -> int:
    query = _list_query(args)
    with _read(args) as store:
        if args.count:
            total = store.count(query)
            emit_json({"count": total}) if args.json else print(total)
            return 0
        if args.after:
            value = common.decode_token(args.after)
            if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], int)):
                raise OraError(f"--after: {args.after!r} is not a page token printed by this command")
            query = query.with_(after=Cursor(value[0], value[1]))
        elif args.offset:
            cursor = store.cursor_at(args.offset - 1, query)
            query = query.with_(ids=()) if cursor is None else query.with_(after=cursor)
        memories = store.list(query)
        token = None
        if len(memories) == args.limit:
            cursor = store.cursor_for(memories[-1], args.sort)
            token = common.encode_token([cursor.value, cursor.rowid])
    if args.json:
        emit_json({"memories": memories, "next_after": token})
        return 0
    _print_memories(args, memories, "no memories match")
    if token:
        print(f"-- more: add --after {token}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with _read(args) as store:
        memory = store.get(args.id)
        chain = store.chain(memory.id)
        neighbors = store.neighbors(memory.id, 1)
        tasks = store.tasks()
    related = [m for m, _ in neighbors.found]
    if args.json:
        emit_json({
            "memory": memory,
            "chain": [m.id for m in chain.members], "live": chain.live.id if chain.live else None,
            "chain_cycle": chain.cycle, "chain_dangling": list(chain.dangling),
            "related": related, "dangling_related": list(neighbors.dangling),
        })
        return 0
    fields = (
        ("id", memory.id), ("type", memory.type), ("importance", memory.importance),
        ("health", memory.health_score), ("accessed", f"{memory.access_count} times, last "
                                                     f"{common.cell(memory.last_accessed_at)}"),
        ("created", memory.created_at), ("updated", memory.updated_at), ("expires", memory.expires_at),
        ("sync", f"{memory.sync_status}, synced {common.cell(memory.synced_at)}"
                 + (" (dirty: changed since)" if memory.is_dirty else "")),
        ("superseded by", memory.superseded_by), ("version", memory.version),
    )
    for name, value in fields:
        print(f"{name + ':':15}{common.cell(value)}")
    for column, raw in memory.unparsed:
        print(f"{'warning:':15}{column} holds {raw!r}, which is not a timestamp")
    if memory.is_expired():
        print(f"{'note:':15}expired")
    print()
    print(memory.content)
    print()
    if len(chain.members) > 1 or chain.dangling or chain.cycle:
        live = chain.live.id if chain.live else "unknown"
        print(f"chain (newest first, live: {live}): " + " <- ".join(m.id for m in chain.members))
        if chain.dangling:
            print(f"  superseded_by points to a missing memory: {', '.join(chain.dangling)}")
        if chain.cycle:
            print("  the chain has a cycle")
    if memory.related_malformed:
        print("related_to: malformed JSON in the file (shown as empty)")
    for other in related:
        print(f"related: {_describe(other)}")
    for missing in neighbors.dangling:
        print(f"related: {missing} (missing: no such memory)")
    if tasks:
        print(f"task agent: {len(tasks)} task_context row(s), e.g. {tasks[0].task_description!r} "
              f"({tasks[0].status})")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    path = target_path(args)
    if args.create and not path.exists():
        create_database(path)
    with _write(args) as store:
        memory = store.add(_text(args.content), args.type, args.importance, id=args.id, **_fields(args, True))
    if args.json:
        emit_json(memory)
    else:
        print(f"added {_describe(memory)} to {store.path}")
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    fields = _fields(args, adding=False)
    if not fields:
        raise OraError("nothing to change: give --content, --type, --importance, --health, --expires, "
                       "--sync-status or --related")
    with _write(args) as store:
        memory = store.update(args.id, expected_version=args.expect_version, **fields)
    if args.json:
        emit_json(memory)
    else:
        print(f"updated {_describe(memory)}: {', '.join(sorted(fields))}; sync status {memory.sync_status}")
    return 0


def cmd_rm(args: argparse.Namespace) -> int:
    ids = list(dict.fromkeys(args.ids))
    with _write(args) as store:
        _require(store, ids)
        removed = store.delete(ids, reason=args.reason)
        batch = getattr(store, "last_trash_batch", None)
        kept = store.trash(limit=None, batch=batch) if batch else []
    trash_ids = sorted(d.trash_id for d in kept)
    if args.json:
        emit_json({"removed": removed, "trash_ids": trash_ids, "file": str(store.path),
                   "restore": f"ora-desktop undelete --db {_quote(store.path)} {' '.join(map(str, trash_ids))}"})
        return 0
    for memory in removed:
        print(f"removed {_describe(memory)}")
    print(f"kept in the trash of {store.path} (table ora_desktop_trash); to restore:")
    print(f"  ora-desktop undelete --db {_quote(store.path)} {' '.join(map(str, trash_ids))}")
    return 0


def _quote(path: Path) -> str:
    return shlex.quote(str(path))


def cmd_trash(args: argparse.Namespace) -> int:
    with _read(args) as store:
        rows = store.trash(limit=args.limit)
    if args.json:
        emit_json(rows)
        return 0
    if not rows:
        print(f"the trash of {store.path} is empty")
        return 0
    print(table(("TRASH_ID", "DELETED (UTC)", "REASON", "MEMORY", "TYPE", "CONTENT"),
                [(d.trash_id, d.deleted_at, d.reason, d.memory.id, d.memory.type, d.memory.title) for d in rows]))
    print(f"restore with: ora-desktop undelete --db {_quote(store.path)} TRASH_ID...")
    return 0


def cmd_undelete(args: argparse.Namespace) -> int:
    wanted = list(dict.fromkeys(args.trash_ids))
    with _write(args) as store:
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
    ids = list(dict.fromkeys(args.ids))
    with _write(args) as store:
        _require(store, ids)
        store.touch_many(ids)
        memories = [store.get(i) for i in ids]
    if args.json:
        emit_json(memories)
    else:
        for m in memories:
            print(f"touched {m.id}: accessed {m.access_count} times, health {m.health_score:.2f}")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    with _read(args) as store:
        memories = store.recall(args.type, limit=args.limit)
    _print_memories(args, memories, f"nothing to recall of type {args.type}")
    return 0


def cmd_important(args: argparse.Namespace) -> int:
    with _read(args) as store:
        memories = store.important(limit=args.limit)
    _print_memories(args, memories, "no important memories")
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    with _write(args) as store:
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
    with _write(args) as store:
        store.supersede(args.old, args.new)
        chain = store.chain(args.new)
    if args.json:
        emit_json({"superseded": args.old, "by": args.new, "chain": [m.id for m in chain.members]})
    else:
        print(f"{args.old} is now superseded by {args.new}; chain (newest first): "
              + " <- ".join(m.id for m in chain.members))
    return 0


def cmd_check_schema(args: argparse.Namespace) -> int:
    if getattr(args, "all", False):
        home = common.home_of(args)
        agents = home.agents()
        if args.site:
            agents = [a for a in agents if a.site == args.site]
        paths = [a.path for a in agents]
        if not paths:
            raise OraError(f"no agent files found in {home.sites_dir}")
    else:
        paths = [target_path(args)]
    results = []
    for path in paths:
        entry: dict[str, Any] = {"path": str(path), "ok": False, "warnings": [], "error": None}
        try:
            with open_store(path, readonly=True) as store:
                report = store.report
            entry.update(ok=True, warnings=list(report.warnings), journal_mode=report.journal_mode,
                         has_task_context=report.has_task_context, extra_columns=list(report.extra_columns))
        except OraError as exc:
            entry["error"] = str(exc)
        results.append(entry)
    if args.json:
        emit_json(results)
    else:
        for entry in results:
            if entry["error"]:
                common.fail(args, entry["error"])
            elif entry["warnings"]:
                for warning in entry["warnings"]:
                    print(f"WARN   {entry['path']}: {warning}")
            else:
                print(f"OK     {entry['path']}: matches the seed schema")
    return 1 if any(e["error"] for e in results) else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ..core.demo import write_demo_home

    home = common.home_of(args)
    paths = write_demo_home(home.root, memories=args.memories, seed=args.seed)
    if args.json:
        emit_json({"home": home.root, "files": paths})
        return 0
    for path in paths:
        print(f"wrote {path}")
    print(f"{args.memories:,} demo memories in {len(paths)} agent files; see them with: "
          f"ora-desktop sites --home {_quote(home.root)}")
    return 0

