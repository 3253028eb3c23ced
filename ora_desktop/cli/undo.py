"""``ora-desktop undo``: take back the last operation on a file, whichever process made it.

The operations journal themselves in the file's ``ora_desktop_journal`` table (see
:mod:`ora_desktop.core.operations.journal`); this command only parses and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core import Conflict, InvalidValue
from ..core.operations import journal
from ..core.operations.undo import drop_latest, undo
from . import common
from .common import command, emit_json, open_target, table


def register(sub: Any) -> None:
    """Add ``undo`` to the ora-desktop parser."""
    p = command(sub, "undo", cmd_undo, "undo the last operation on a memory file (edit, delete, merge, ...)",
                "Undo the latest journalled operation on the file — made by this command line or the "
                "window, or a decay — putting the rows back as they were; run it again to undo the one before. "
                f"The file's ora_desktop_journal table keeps the last {journal.KEEP}. An undo is refused, "
                "changing nothing, when a memory it would touch was changed since.")
    common.add_target(p)
    p.add_argument("--list", action="store_true", help="show what can be undone, newest first (changes nothing)")
    p.add_argument("--forget", action="store_true",
                   help="drop the latest step without undoing it (one refused because the memory changed since)")


def cmd_undo(args: argparse.Namespace) -> int:
    """Undo, list or forget the latest journalled operation."""
    if args.list and args.forget:
        raise InvalidValue("undo", "give --list or --forget, not both")
    if args.list:
        with open_target(args, readonly=True) as store:
            rows = journal.entries(store)
        if args.json:
            emit_json([{"entry": e.id, "at": e.at, "kind": e.kind.value, "label": e.label, "by": e.who}
                       for e in rows])
        elif not rows:
            print(f"nothing to undo in {store.path}")
        else:
            print(table(("STEP", "AT (UTC)", "KIND", "BY", "WHAT"),
                        [(e.id, e.at, e.kind.value, e.who, e.label) for e in rows]))
        return 0
    with open_target(args) as store:
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
    if args.json:
        emit_json({"undone": None if change is None else entry.label, "forgotten": entry.label if change is None
                   else None, "added": sorted(change.added) if change else [],
                   "changed": sorted(change.changed) if change else [],
                   "removed": sorted(change.removed) if change else []})
    elif change is None:
        print(f"forgot “{entry.label}” without undoing it; 'ora-desktop undo' now takes back the step before")
    else:
        parts = [f"{len(ids)} {word}" for ids, word in ((change.added, "restored"), (change.changed, "put back"),
                                                       (change.removed, "moved to the trash")) if ids]
        if entry.undo.decay is not None:
            parts.append("health values and the decay mark put back")
        print(f"undid “{entry.label}” in {store.path} ({', '.join(parts) or 'no rows'})")
    return 0
