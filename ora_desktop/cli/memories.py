"""Subcommands of the memories feature: their parsers, and the commands that read.

Reading commands open the file read-only; every write goes through ``Store`` (validation,
the sync rule, recoverable deletes). Output is a readable table, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import ListQuery, Memory, OraError, open_store
from ..core.links import LINK_TYPES
from ..core.listing import SORTABLE, Cursor
from ..core.operations.memory_history import MemoryHistory, memory_history
from ..core.operations.pins import is_pinned, pinned_ids
from ..core.schema import MEMORY_TYPES, SYNC_STATUSES
from . import common
from . import memory_edits as edits
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
    p.add_argument("--history", action="store_true",
                   help="also every journalled change of it (when, by whom, what changed), newest first")

    p = command(sub, "add", edits.cmd_add, "add a memory",
                "Add a memory (the seed's insert). CONTENT '-' reads the content from standard input.")
    common.add_target(p)
    p.add_argument("content", help="the memory text ('-' reads standard input)")
    _add_field_options(p, adding=True)
    p.add_argument("--id", help="use this id (default: a new unique id)")
    p.add_argument("--create", action="store_true", help="create the agent file (seed schema) if it is missing")
    p.add_argument("--allow-duplicate", action="store_true",
                   help="add even when a live memory holds the same text (default: refuse and name it)")

    p = command(sub, "edit", edits.cmd_edit, "change fields of a memory (sync status goes back to pending)",
                "Edit a memory. updated_at becomes now and sync_status pending (unless local_only), "
                "per the sync rule.")
    common.add_target(p)
    p.add_argument("id", help="memory id")
    p.add_argument("--content", help="new text ('-' reads standard input)")
    _add_field_options(p, adding=False)
    p.add_argument("--expect-version", metavar="VERSION",
                   help="refuse, changing nothing, if the memory changed in any way since it had this version "
                        "(the token 'show' prints as 'version', also in 'show --json' and 'list --json')")

    p = command(sub, "rm", edits.cmd_rm, "delete memories (kept in the trash; restore with 'undelete')")
    common.add_target(p)
    p.add_argument("ids", nargs="+", metavar="ID", help="memory ids")
    p.add_argument("--reason", default="deleted from the command line", help="why (kept with the trash row)")

    p = command(sub, "trash", edits.cmd_trash, "list deleted memories that can be restored")
    common.add_target(p)
    p.add_argument("--limit", type=common.positive_int, default=100, help="at most this many rows (default 100)")

    p = command(sub, "undelete", edits.cmd_undelete, "restore deleted memories from the trash by trash id")
    common.add_target(p)
    p.add_argument("trash_ids", nargs="+", type=common.positive_int, metavar="TRASH_ID",
                   help="ids shown by 'trash' or 'rm'")

    p = command(sub, "touch", edits.cmd_touch, "record an access: count +1, last access now, health +0.1")
    common.add_target(p)
    p.add_argument("ids", nargs="+", metavar="ID", help="memory ids")

    p = command(sub, "recall", cmd_recall, "the seed's recall: one type, healthy, most important and newest first")
    common.add_target(p)
    p.add_argument("type", choices=MEMORY_TYPES, help=TYPE_HELP)
    p.add_argument("--limit", type=common.positive_int, default=20, help="at most this many (default 20)")
    p.add_argument("--all-versions", action="store_true",
                   help="include superseded and expired memories (the seed's query as written)")

    p = command(sub, "important", cmd_important,
                "the seed's extraction query: importance >= 7, or facts with health >= 0.5")
    common.add_target(p)
    p.add_argument("--limit", type=common.positive_int, default=50, help="at most this many (default 50)")
    p.add_argument("--all-versions", action="store_true",
                   help="include superseded and expired memories (the seed's query as written)")

    p = command(sub, "tasks", cmd_tasks, "list the task_context rows of a spawned task agent's file",
                "List the file's task_context rows (the seed's table of what a spawned task agent was asked "
                "and produced), newest first; --json gives input_data and output_data as stored. Read-only.")
    common.add_target(p)

    for name, verb, helptext in (("pin", edits.cmd_pin, "pin memories: always first in an agent's context"),
                                 ("unpin", edits.cmd_unpin, "unpin memories")):
        p = command(sub, name, verb, helptext)
        common.add_target(p)
        p.add_argument("ids", nargs="+", metavar="ID", help="memory ids")

    p = command(sub, "link", edits.cmd_link, "relate two memories (related_to, or a typed link with --type), "
                "or unlink them with --remove")
    common.add_target(p)
    p.add_argument("a", metavar="ID", help="memory id")
    p.add_argument("b", metavar="OTHER_ID", help="the memory to relate it to")
    p.add_argument("--remove", action="store_true", help="remove the link instead of adding it")
    p.add_argument("--one-way", action="store_true", help="only change ID's related_to, not OTHER_ID's")
    p.add_argument("--type", metavar="TYPE",
                   help=f"a typed link ID --TYPE--> OTHER_ID ({', '.join(LINK_TYPES)}, or a few words of "
                        "your own), kept beside related_to, which is left as it is")

    p = command(sub, "links", edits.cmd_links, "list a memory's links both ways, typed and related_to")
    common.add_target(p)
    p.add_argument("id", metavar="ID", help="memory id")

    p = command(sub, "replace", edits.cmd_replace, "find and replace text in memories (previewed with --dry-run)",
                "Replace TEXT by REPLACEMENT wherever it stands, as written (case-sensitive), in every memory "
                "of the file or only those named by --id; one step for 'ora-desktop undo'.")
    common.add_target(p)
    p.add_argument("find", metavar="TEXT", help="the text to find, as written")
    p.add_argument("replacement", metavar="REPLACEMENT", help="what replaces it (may be empty)")
    p.add_argument("--id", dest="ids", action="append", metavar="ID", help="only this memory (repeatable)")
    p.add_argument("--dry-run", action="store_true", help="show what would change and change nothing")

    p = command(sub, "repair-links", edits.cmd_repair_links,
                "rewrite a related_to that is not a list of ids as the memory ids its text names",
                "Keep the ids of this file found in the text (in order), drop the rest; 'ora-desktop undo' "
                "puts the original text back.")
    common.add_target(p)
    p.add_argument("id", metavar="ID", help="the memory whose related_to to repair")

    p = command(sub, "supersede", edits.cmd_supersede, "mark a memory as superseded by a newer one")
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
    p.add_argument("--memories", type=common.count_int, default=2000, metavar="N",
                   help="memories in total, shared among the agents (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same data)")
    common.add_json(p)


def _add_list_options(p: argparse.ArgumentParser) -> None:
    f = p.add_argument_group("filters")
    f.add_argument("--type", action="append", choices=MEMORY_TYPES, help=f"{TYPE_HELP} (repeatable)")
    f.add_argument("--min-importance", type=common.importance_arg, metavar="N", help="importance at least N (1-10)")
    f.add_argument("--max-importance", type=common.importance_arg, metavar="N", help="importance at most N (1-10)")
    f.add_argument("--min-health", type=common.health_arg, metavar="X", help="health at least X (0-1)")
    f.add_argument("--max-health", type=common.health_arg, metavar="X", help="health at most X (0-1)")
    f.add_argument("--sync", action="append", choices=SYNC_STATUSES, help="sync status (repeatable)")
    expiry = f.add_mutually_exclusive_group()
    expiry.add_argument("--expired", action="store_true", default=None, help="only memories past their expires_at")
    expiry.add_argument("--not-expired", dest="expired", action="store_false", help="hide expired memories")
    f.add_argument("--expiring-days", type=float, metavar="DAYS", help="only memories expiring within DAYS")
    f.add_argument("--superseded", choices=("hide", "show", "only"), default="hide",
                   help="superseded memories: hide (default), show or only")
    dirty = f.add_mutually_exclusive_group()
    dirty.add_argument("--dirty", action="store_true", default=None, help="only memories changed since their last sync")
    dirty.add_argument("--clean", dest="dirty", action="store_false", help="only memories in sync")
    f.add_argument("--text", help="content contains this text (plain substring)")
    f.add_argument("--pinned", action="store_true", help="only pinned memories (see 'ora-desktop pin')")
    f.add_argument("--created-after", type=common.created_after_arg, metavar="WHEN",
                   help="created on or after a date (2026-11-01, UTC) or within an age (7d, 12h, 2w, 3mo, 1y)")
    f.add_argument("--created-before", type=common.created_before_arg, metavar="WHEN",
                   help="created before a date (2026-11-01, UTC) or longer ago than an age (30d)")
    o = p.add_argument_group("order and paging")
    o.add_argument("--sort", default="created_at", choices=sorted(SORTABLE), metavar="COLUMN",
                   help=f"sort column: {', '.join(sorted(SORTABLE))} (default created_at; times sort as time)")
    o.add_argument("--ascending", dest="descending", action="store_false", default=True,
                   help="oldest/smallest first (default: descending)")
    o.add_argument("--limit", type=common.positive_int, default=50, help="rows per page (default 50)")
    where = o.add_mutually_exclusive_group()
    where.add_argument("--after", metavar="TOKEN", help="next page: the token printed after the previous page")
    where.add_argument("--offset", type=common.count_int, metavar="N", help="skip the first N rows")
    o.add_argument("--count", action="store_true", help="only print how many memories match")


def _add_field_options(p: argparse.ArgumentParser, adding: bool) -> None:
    p.add_argument("--type", choices=MEMORY_TYPES, default="fact" if adding else None,
                   help=TYPE_HELP + (" (default fact)" if adding else ""))
    p.add_argument("--importance", type=common.importance_arg, default=5 if adding else None,
                   help="1 (forgettable) to 10 (critical)" + (", default 5" if adding else ""))
    p.add_argument("--health", type=common.health_arg, help="health score, 0.0 to 1.0")
    p.add_argument("--expires", metavar="TIME",
                   help="expiry: a span from now (30m, 3h, 7d, 2w), a date (2026-12-31) or a time "
                   "('2026-12-31 12:00:00' UTC, or ISO 8601 with an offset); '' clears")
    p.add_argument("--sync-status", choices=SYNC_STATUSES, help="pending, synced or local_only")
    p.add_argument("--related", action="append", metavar="ID",
                   help="related memory id (repeatable)" + ("" if adding else "; replaces the list"))


# ----------------------------------------------------------------------------- helpers
def _flags(memory: Memory) -> str:
    """D dirty, E expired, S superseded, R related, M malformed related_to, U not valid UTF-8."""
    return "".join(flag for flag, on in (
        ("D", memory.is_dirty), ("E", memory.is_expired()), ("S", memory.is_superseded),
        ("R", bool(memory.related_to)), ("M", memory.related_malformed), ("U", bool(memory.undecodable)),
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


# ----------------------------------------------------------------------------- commands
def cmd_sites(args: argparse.Namespace) -> int:
    """Every agent file under the Ora home, with its memory count (unreadable files say so)."""
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
        times=tuple((args.created_after or []) + (args.created_before or [])),
    )


def cmd_list(args: argparse.Namespace) -> int:
    """One page of memories matching the filters, as a table or JSON, with the next page's token."""
    query = _list_query(args)
    with open_target(args, readonly=True) as store:
        if args.pinned:
            query = query.with_(ids=tuple(pinned_ids(store)))
        if args.count:
            total = store.count(query)
            emit_json({"count": total}) if args.json else print(total)
            return 0
        if args.after:
            query = query.with_(after=_cursor_from(args))
        elif args.offset:
            cursor = store.cursor_at(args.offset - 1, query)
            query = query.with_(ids=()) if cursor is None else query.with_(after=cursor)
        memories = store.list(query)
        token = None
        if len(memories) == args.limit:
            cursor = store.cursor_for(memories[-1], args.sort)
            token = common.encode_token([args.sort, args.descending, cursor.value, cursor.rowid])
    if args.json:
        emit_json({"memories": memories, "next_after": token})
        return 0
    _print_memories(args, memories, "no memories match")
    if token:
        print(f"-- more: add --after {token}")
    return 0


def _history_json(history: MemoryHistory) -> dict[str, Any]:
    return {"covers_since": history.covers, "changed_outside_the_journal": history.unexplained,
            "steps": [{"entry": s.entry, "at": s.at, "kind": s.kind, "by": s.initiator, "what": s.label,
                       "created": s.created,
                       "changes": {c: {"before": b, "after": a} for c, (b, a) in s.changes.items()}}
                      for s in history.steps]}


def _print_history(history: MemoryHistory) -> None:
    print()
    if not history.steps:
        print("history: no journalled change of this memory"
              + (f" since {common.cell(history.covers)}" if history.covers else " (nothing journalled in this file)"))
        return
    print(f"history (journalled steps, newest first; the journal reaches back to {common.cell(history.covers)}):")
    if history.unexplained:
        print("  changed since by a program that does not journal its writes")
    for step in history.steps:
        print(f"  {common.cell(step.at)}  {step.initiator:<8} {step.label}")
        for column, (before, after) in step.changes.items():
            print(f"      {column}: {_short(before)} → {_short(after)}")


def _short(value: Any, limit: int = 70) -> str:
    text = " ".join(str(value).split()) if value is not None else "(none)"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _cursor_from(args: argparse.Namespace) -> Cursor:
    """The keyset cursor in ``--after``; it must come from a listing in the same order."""
    value = common.decode_token(args.after)
    if not (isinstance(value, list) and len(value) == 4 and isinstance(value[3], int)):
        raise OraError(f"--after: {args.after!r} is not a page token printed by this command")
    sort, descending, key, rowid = value
    if (sort, descending) != (args.sort, args.descending):
        order = f"--sort {sort}" + ("" if descending else " --ascending")
        raise OraError(f"--after: that token continues a listing in another order; repeat it with {order}")
    return Cursor(key, rowid)


def cmd_show(args: argparse.Namespace) -> int:
    """One memory in full, with its supersession chain and related memories."""
    with open_target(args, readonly=True) as store:
        memory = store.get(args.id)
        chain = store.chain(memory.id)
        neighbors = store.neighbors(memory.id, 1)
        tasks = store.tasks()
        pinned = is_pinned(store, memory.id)
        history = memory_history(store, memory.id) if args.history else None
    related = [m for m, _ in neighbors.found]
    if args.json:
        emit_json({
            "memory": memory, "pinned": pinned,
            "chain": [m.id for m in chain.members], "live": chain.live.id if chain.live else None,
            "chain_cycle": chain.cycle, "chain_dangling": list(chain.dangling),
            "related": related, "dangling_related": list(neighbors.dangling),
            **({"history": _history_json(history)} if history is not None else {}),
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
        ("pinned", "yes (first in every context)" if pinned else "no"),
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
    if memory.undecodable:
        print(f"{', '.join(memory.undecodable)}: bytes that are not valid UTF-8 in the file (shown as \ufffd; "
              "'ora-desktop run check --repair' fixes them, keeping the original bytes)")
    for other in related:
        print(f"related: {common.describe(other)}")
    for missing in neighbors.dangling:
        print(f"related: {missing} (missing: no such memory)")
    if tasks:
        print(f"task agent: {len(tasks)} task_context row(s), e.g. {tasks[0].task_description!r} "
              f"({tasks[0].status})")
    if history is not None:
        _print_history(history)
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """The seed's recall query for one type (current memories unless --all-versions)."""
    with open_target(args, readonly=True) as store:
        memories = store.recall(args.type, limit=args.limit, current=not args.all_versions)
    _print_memories(args, memories, f"nothing to recall of type {args.type}")
    return 0


def cmd_important(args: argparse.Namespace) -> int:
    """The seed's extraction query (current memories unless --all-versions)."""
    with open_target(args, readonly=True) as store:
        memories = list(store.important(limit=args.limit, current=not args.all_versions))
    _print_memories(args, memories, "no important memories")
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    """The file's task_context rows (none, said, when the table is empty or missing)."""
    with open_target(args, readonly=True) as store:
        tasks = store.tasks()
    if args.json:
        emit_json([{"id": t.id, "task_description": t.task_description, "status": t.status,
                    "created_at": t.created_at, "completed_at": t.completed_at,
                    "input_data": t.input_raw, "output_data": t.output_raw} for t in tasks])
    elif not tasks:
        print("no task_context rows (not a spawned task agent's file)")
    else:
        print(table(("status", "started", "completed", "id", "task"),
                    [(t.status, t.created_at, t.completed_at or "", t.id, t.task_description) for t in tasks]))
    return 0


def cmd_check_schema(args: argparse.Namespace) -> int:
    """Compare files with the seed schema, read-only; exit 1 if any cannot be used."""
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
    """Write demo sites and agents under the Ora home; never overwrites a file."""
    from ..core.demo import write_demo_home

    home = common.home_of(args)
    paths = write_demo_home(home.root, memories=args.memories, seed=args.seed)
    if args.json:
        emit_json({"home": home.root, "files": paths})
        return 0
    for path in paths:
        print(f"wrote {path}")
    print(f"{args.memories:,} demo memories in {len(paths)} agent files; see them with: "
          f"ora-desktop sites --home {common.quote_path(home.root)}")
    return 0

