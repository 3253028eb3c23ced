"""``ora-desktop undo`` and ``redo``: take back the last operation on a file, whichever process
made it, and do again the step undone last.

The operations journal themselves in the file's ``ora_desktop_journal`` table (see
:mod:`ora_desktop.core.operations.journal`), one history per file shared with the window; these
commands only parse and print.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import Change, Conflict, InvalidValue
from ..core.operations import chunked_undo, journal
from ..core.operations.undo import Undone, drop_latest, redo, undo
from . import common
from .common import command, emit_json, open_target, table


def register(sub: Any) -> None:
    """Add ``undo`` to the ora-desktop parser."""
    p = command(sub, "undo", cmd_undo, "undo the last operation on a memory file (edit, delete, merge, ...)",
                "Undo the latest journalled operation on the file — made by this command line, the window or "
                "an agent, or a decay — putting the rows back as they were; run it again to undo the one before, "
                "and 'ora-desktop redo' to do it again. This is the file's one history, the same the window's "
                f"Undo walks; its ora_desktop_journal table keeps the last {journal.KEEP} steps. An undo is "
                "refused, changing nothing, when a memory it would touch was changed since.")
    common.add_target(p)
    p.add_argument("--list", action="store_true", help="show what can be undone, newest first (changes nothing)")
    p.add_argument("--forget", action="store_true",
                   help="drop the latest step without undoing it (one refused because the memory changed since)")
    p = command(sub, "redo", cmd_redo, "do again the step undone last on a memory file",
                "Redo the step 'ora-desktop undo' or the window's Undo took back last, putting the rows back as "
                "the step left them; run it again to redo the one undone before it. A new change to the file "
                "ends what can be redone, as in an editor. A redo is refused, changing nothing, when a memory "
                "it would touch was changed since the undo.")
    common.add_target(p)
    p.add_argument("--list", action="store_true", help="show what can be redone, next first (changes nothing)")


def _list(args: argparse.Namespace, entries: list[journal.Entry], nothing: str, store: Any) -> int:
    mark = chunked_undo.stopped(store)
    if args.json:
        emit_json([{"entry": e.id, "at": e.at, "kind": e.kind.value, "label": e.label, "by": e.who}
                   for e in entries])
        return 0
    if mark is not None:
        where = f"process {mark.get('pid')} on {mark.get('host', 'this machine')}"
        print(f"“{mark['verb']} {mark['label']}” (in chunks, {where}) has not finished: if that process ended, "
              "the next undo or redo takes back what it wrote first")
    if not entries:
        print(nothing)
    else:
        print(table(("STEP", "AT (UTC)", "KIND", "BY", "WHAT"),
                    [(e.id, e.at, e.kind.value, e.who, e.label) for e in entries]))
    return 0


def _changed(change: Change) -> str:
    """``1 restored, 2 put back`` (or ``no rows``)."""
    parts = [f"{len(ids)} {word}" for ids, word in ((change.added, "restored"), (change.changed, "put back"),
                                                   (change.removed, "moved to the trash")) if ids]
    return ", ".join(parts) or "no rows"


def cmd_redo(args: argparse.Namespace) -> int:
    """Redo, or list, the steps undone in the file."""
    if args.list:
        with open_target(args, readonly=True) as store:
            return _list(args, journal.redoable(store), f"nothing to redo in {store.path}", store)
    with open_target(args) as store:
        done: Undone = redo(store)
    change = done.change
    if args.json:
        emit_json({"redone": done.entry.label, "added": sorted(change.added), "changed": sorted(change.changed),
                   "removed": sorted(change.removed), "note": done.note})
    else:
        _note(done.note)
        print(f"redid “{done.entry.label}” in {store.path} ({_changed(change)})")
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    """Undo, list or forget the latest journalled operation."""
    if args.list and args.forget:
        raise InvalidValue("undo", "give --list or --forget, not both")
    if args.list:
        with open_target(args, readonly=True) as store:
            return _list(args, journal.entries(store), f"nothing to undo in {store.path}", store)
    with open_target(args) as store:
        note = None
        if args.forget:
            entry = drop_latest(store)
            change = None
        else:
            try:
                done = undo(store)
            except Conflict as exc:
                raise Conflict(exc.memory_id, f"{exc} ('ora-desktop undo --forget' drops this step so the one "
                               "before can be undone)") from None
            entry, change = done.entry, done.change
            note = done.note
    if args.json:
        emit_json({"undone": None if change is None else entry.label, "forgotten": entry.label if change is None
                   else None, "added": sorted(change.added) if change else [],
                   "changed": sorted(change.changed) if change else [],
                   "removed": sorted(change.removed) if change else [], "note": note})
        return 0
    _note(note)
    if change is None:
        print(f"forgot “{entry.label}” without undoing it; 'ora-desktop undo' now takes back the step before")
    else:
        what, then = _changed(change), "; 'ora-desktop redo' does it again"
        if entry.undo.decay is not None:  # a decay's undo is not redone
            what, then = f"{what}, health values and the decay mark put back".removeprefix("no rows, "), ""
        print(f"undid “{entry.label}” in {store.path} ({what}{then})")
    return 0


def _note(note: str | None) -> None:
    """What an earlier step in chunks, stopped part-way, left, and what was done about it."""
    if note:
        print(note)
