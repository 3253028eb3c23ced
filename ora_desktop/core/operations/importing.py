"""Import memories from our JSONL/CSV, another ``.site.db`` or a neighbouring store, and undo it.

One operation for every face (library, CLI, window). Every row is read and checked before the
first is written: by default nothing is written unless every row is valid; with ``skip_bad`` the
valid rows go in and the result lists the skipped ones (line number and field). The rows then go
in short ``BEGIN IMMEDIATE`` transactions (:mod:`..chunks`: an agent writing beside the import
never waits long for the lock), each deciding its rows' conflicts against the file as it is then
(an agent may have written one of those ids meanwhile). To the person the import stays
all-or-nothing: one that fails part-way takes back what it wrote, and one whose process was killed
is taken back by the next import into the file (:mod:`..exchange.pending`). Each chunk's commit is
heard once, as the import's, naming the ids it added and replaced.
The source is only ever read. Ids of neighbouring stores derive from the source, so a second
import of the same source adds nothing. A conflicting id is skipped, replaced, replaced only
when the incoming row is newer (``updated_at`` compared as time), or replaced only when its
content changed (``changed``, the default for Markdown notes); replaced rows go to the trash
first (ARCHITECTURE.md, contract 5), which is also how :func:`undo_import` brings them back.

An import of up to :data:`JOURNAL_LIMIT` memories is one step of the file's undo journal
(``import of 576 memories from notes.jsonl``): ``ora-desktop undo`` or the window's Undo moves
the new memories to the trash and writes the replaced rows back as they were; Redo imports them
again. A bigger import is not journalled (the journal would hold every id and previous row):
:func:`undo_import` takes it back.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import chunks, feedreaders, timestamps
from ..decoding import RawText, Replaced
from ..errors import InvalidValue, OraError
from ..exchange import pending as import_pending
from ..exchange.detect import open_source
from ..exchange.orafile import KIND as ORA_KIND
from ..exchange.rows import BadRow, BadSource, Skipped, check_row
from ..exchange.sources import ImportOptions
from ..exchange.spool import Spool
from ..home import SUFFIX
from ..rawsql import run_sql
from ..records import Change, Initiator, Memory, row_to_memory
from ..schema import MEMORY_COLUMNS
from ..store import Store
from ..writes import IDS_JSON
from . import edits, journal
from .export import site_and_agent

CONFLICT_POLICIES = ("skip", "replace", "newer", "changed")
#: How many bad rows are reported before an all-or-nothing import gives up reading.
MAX_REPORTED = 20
_CHUNK = 5000
#: The most memories an import adds or replaces and still journals (one undo step).
JOURNAL_LIMIT = 100_000
_OWN_FORMATS = ("jsonl", "csv", "md", "ora")
_UPDATED = MEMORY_COLUMNS.index("updated_at")
_SYNC = MEMORY_COLUMNS.index("sync_status")
_TYPE = MEMORY_COLUMNS.index("type")
Progress = Callable[[int, int], None]


class ImportRefused(OraError):
    """Some rows of the source are invalid and ``skip_bad`` was not asked: nothing was written."""

    def __init__(self, source: Path, skipped: list[Skipped]) -> None:
        self.skipped = tuple(skipped)
        shown = "; ".join(str(s) for s in skipped[:5])
        more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
        super().__init__(f"{source}: {shown}{more}; nothing was imported (--skip-bad imports the valid rows)")


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did (or, for a dry run, would do)."""

    source: Path
    format: str
    target: Path
    #: New memories (or, on a dry run, that would be new).
    added: int
    #: Memories whose id was already in the file and that the import replaced.
    replaced: int
    #: Rows whose id was already in the file and that were left as they are.
    kept: int
    #: Rows of the source that repeat an earlier one (chat-log content_hash duplicates).
    collapsed: int
    #: Rows left out by ``skip_bad``, with line number and field.
    skipped: tuple[Skipped, ...]
    by_type: dict[str, int]
    #: The first memories as they will look in the file.
    sample: tuple[Memory, ...]
    dry_run: bool
    #: The trash batch holding the rows the import replaced, all chunks' (for :func:`undo_import`;
    #: empty when it replaced none).
    replaced_batches: tuple[str, ...] = ()
    change: Change = field(default_factory=Change)
    #: The ``(site, agent)`` pairs the source says its memories came from (an Ora export's
    #: columns, another ``.site.db``'s place); empty when the source does not say.
    origins: tuple[tuple[str, str], ...] = ()
    #: Earlier imports into the file that were stopped part-way (their process killed), taken
    #: back before this one, each said in one line (:mod:`..exchange.pending`).
    recovered: tuple[str, ...] = ()

    @property
    def conflicts(self) -> int:
        """Rows whose id was already in the file."""
        return self.replaced + self.kept

    @property
    def other_origins(self) -> tuple[tuple[str, str], ...]:
        """The origins that are not the target's own site and agent: one agent's memory going
        into another's file, which the faces warn about."""
        return tuple(o for o in self.origins if o != site_and_agent(self.target))

    @property
    def origin_warning(self) -> str | None:
        """One line warning that the source came from another agent, or None."""
        others = self.other_origins
        if not others:
            return None
        named = ", ".join(f"{site}/{agent}" for site, agent in others[:3])
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        site, agent = site_and_agent(self.target)
        return (f"{self.source.name} holds memories of {named}{more}, not of {site}/{agent}: "
                "they will become this agent's memories")


@feedreaders.initiated(Initiator.IMPORT)  # (other stores of the file here hear its commits as an import's)
def import_memories(store: Store, source: str | Path, format: str = "auto", *, on_conflict: str | None = None,
                    dry_run: bool = False, skip_bad: bool = False, options: ImportOptions | None = None,
                    sample: int = 10, progress: Progress | None = None,
                    cancel: Callable[[], bool] | None = None, whole: bool = False) -> ImportResult:
    """Import ``source`` into ``store`` (see the module docstring); ``dry_run`` writes nothing;
    ``whole`` writes in one transaction (a new file no agent has open: :mod:`.import_new`).

    ``options.sync_status`` (pending or local_only) applies to neighbouring stores; our own
    formats keep each row's sync status unless ``options.force_sync_status``.
    """
    options = options or ImportOptions()
    if on_conflict is None:  # notes are imported again to update them; anything else keeps what is there
        on_conflict = "changed" if format == "markdown" else "skip"
    if on_conflict not in CONFLICT_POLICIES:
        raise InvalidValue("on_conflict", f"{on_conflict!r} is not one of {', '.join(CONFLICT_POLICIES)}")
    if options.sync_status not in ("pending", "local_only"):
        raise InvalidValue("sync_status", f"imported memories are pending or local_only, not {options.sync_status!r}")
    if not dry_run:
        store._require_writable()
    path = Path(source).expanduser()
    if path.exists() and path.resolve() == store.path.resolve():
        raise BadSource(f"{path}: is the file being imported into; import from another file")
    run = _Run(store, on_conflict, dry_run, skip_bad, sample)
    with run.rows:
        kind = _read(run, path, format, options, progress, cancel)
        recovered: tuple[str, ...] = ()
        if dry_run:
            for part in run.rows.parts(lambda: _CHUNK):
                run.decide(part)
        else:
            recovered = tuple(str(t) for t in import_pending.recover(store))
            _write(run, path, whole, progress, cancel)
    if progress is not None:
        progress(run.read, run.read)
    change = _change(run.added_ids, run.replaced_ids)
    return ImportResult(
        source=path, format=kind, target=store.path, added=len(run.added_ids), replaced=len(run.replaced_ids),
        kept=run.kept, collapsed=run.collapsed, skipped=tuple(run.skipped), by_type=dict(sorted(run.types.items())),
        sample=tuple(run.samples), dry_run=dry_run, replaced_batches=(run.batch,) if run.batch else (),
        change=Change() if dry_run else change, origins=tuple(sorted(run.origins)), recovered=recovered,
    )


def _read(run: _Run, path: Path, format: str, options: ImportOptions, progress: Progress | None,
          cancel: Callable[[], bool] | None) -> str:
    """Read and check every row of the source into ``run`` (nothing is written); returns its kind.
    Bad rows refuse the import unless ``skip_bad``. Progress counts reading a row and writing it
    as one step each."""
    try:
        with open_source(path, format, options) as src:
            force = options.force_sync_status or src.kind not in _OWN_FORMATS
            for item in src.rows:
                if isinstance(item, BadRow):
                    run.bad(path, item.skipped)
                    continue
                try:
                    values = check_row(item)
                except BadRow as bad:
                    run.bad(path, bad.skipped)
                    continue
                origin = item.values.get("site"), item.values.get("agent")
                if isinstance(origin[0], str) and isinstance(origin[1], str):
                    run.origins.add(origin)
                if force and values[_SYNC] != options.sync_status:
                    values = (*values[:_SYNC], options.sync_status, *values[_SYNC + 1:])
                run.take(path, values, item.where, item.may_repeat)
                if run.read % _CHUNK == 0 and cancel is not None and cancel():
                    raise OraError(f"{path}: import cancelled; nothing was imported")
                if run.read % _CHUNK == 0 and progress is not None:
                    progress(run.read, 2 * max(src.total, run.read))
            if run.skipped and not run.skip_bad:
                raise ImportRefused(path, run.skipped)
            if src.kind == ORA_KIND and path.name.endswith(SUFFIX):  # an agent's file: its place says whose
                run.origins.add(site_and_agent(path))
            return src.kind
    except UnicodeDecodeError as exc:
        raise BadSource(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except BadRow as exc:  # the source's structure (a header, a dump's layout), not one row
        raise BadSource(f"{path}: {exc}; nothing was imported") from None


def _write(run: _Run, path: Path, whole: bool, progress: Progress | None, cancel: Callable[[], bool] | None) -> None:
    """Write the checked rows in short transactions (:mod:`..chunks`), each deciding its rows'
    conflicts against the file as it is then; all of them inside the caller's transaction, or in
    one when ``whole`` or few. The last chunk journals the import (it is kept small: the entry
    holds every chunk's ids); a failure part-way takes the chunks before it back
    (:mod:`..exchange.pending`) and says so."""
    store, total = run.store, run.rows.count
    sizer = chunks.new_sizer()
    nested = store.db.in_transaction()
    single = whole or nested or total <= chunks.FIRST
    if single:
        sizer.size = max(1, total)
    mark, at = import_pending.Mark(), 0

    def size() -> int:
        left = total - at
        if single or left <= chunks.FIRST or left > sizer.size:
            return sizer.size
        return left - chunks.FIRST  # (and then a last chunk of FIRST rows, with the journal entry)

    with mark:
        try:
            for part in run.rows.parts(size):
                at += len(part)

                def chunk(part: list[tuple[Any, ...]] = part, final: bool = at >= total) -> int:
                    run.write(part)
                    heard = _change(*run.chunk_ids()[:2])  # (each commit heard once, as the import's)
                    if nested:
                        store._emit(heard)  # (with the caller's own changes, at its commit)
                    else:
                        store.announce(heard)
                    if final:
                        mark.end(store)
                        run.journal(path)
                    else:
                        if not mark.chunks:
                            mark.begin(store, str(path))
                        mark.chunk(store, *run.chunk_ids())
                    return len(part)

                chunks.timed_write(store, sizer, chunk)
                run.keep()
                if at < total and cancel is not None and cancel():
                    raise OraError(f"{path}: import cancelled")
                if at < total and progress is not None:
                    progress(total + at, 2 * total)
        except BaseException as exc:
            if not mark.chunks:  # (nothing committed: a failed chunk rolled back by itself)
                raise
            try:
                taken = import_pending.take_back(store, mark.run)
            except Exception as again:
                raise OraError(f"{exc}; the import stopped part-way and the {run.written:,} memories it had written "
                               f"could not be taken back ({again}); the next import into {store.path} takes them "
                               "back") from exc
            if isinstance(exc, OraError | OSError):
                raise OraError(f"{exc}; the import stopped part-way: the {taken.removed:,} memories it had written "
                               "were taken back, nothing was imported") from exc
            raise


class _Run:
    """The state of one import: the checked rows, counts, and what was written."""

    def __init__(self, store: Store, on_conflict: str, dry_run: bool, skip_bad: bool, sample: int) -> None:
        self.store, self.on_conflict, self.dry_run, self.skip_bad = store, on_conflict, dry_run, skip_bad
        self.sample_size = sample
        present = [c for c in MEMORY_COLUMNS if c in store.columns]
        self.positions = [MEMORY_COLUMNS.index(c) for c in present]
        self.insert_sql = store._insert_sql()
        self.rows = Spool()
        self.seen: set[str] = set()
        self.added_ids: list[str] = []
        self.replaced_ids: list[str] = []
        #: The one trash batch holding every row the import replaced (made by the first chunk
        #: that replaces one; the later chunks add to it): one batch to list and to restore.
        self.batch: str | None = None
        #: The replaced rows as they were and the rows as written, for the journal (while the
        #: import is small enough): the last chunk's below, the chunks' before it encoded ahead.
        self.previous: dict[str, dict[str, Any]] = {}
        self.before, self.after = journal.Ahead(), journal.Ahead()
        self.skipped: list[Skipped] = []
        self.samples: list[Memory] = []
        self.types: Counter[str] = Counter()
        self.kept = self.collapsed = self.read = 0
        self.origins: set[tuple[str, str]] = set()
        #: What the chunk being written did: (added, replaced, trash batch, written versions).
        self.chunk: tuple[list[str], list[str], str | None, dict[str, str | None]] = ([], [], None, {})

    @property
    def written(self) -> int:
        return len(self.added_ids) + len(self.replaced_ids)

    def bad(self, path: Path, skipped: Skipped) -> None:
        self.skipped.append(skipped)
        if not self.skip_bad and len(self.skipped) >= MAX_REPORTED:
            raise ImportRefused(path, self.skipped)

    def take(self, path: Path, values: tuple[Any, ...], where: str, may_repeat: bool) -> None:
        self.read += 1
        memory_id = values[0]
        if memory_id in self.seen:
            if may_repeat:
                self.collapsed += 1
            else:
                self.bad(path, Skipped(where, "id", f"{memory_id!r} appears earlier in the source"))
            return
        self.seen.add(memory_id)
        self.rows.append(values)

    def decide(self, part: Sequence[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], list[str], list[str]]:
        """Which of ``part`` go in, against the file as it is now: (rows to write, ids they
        replace, ids they add); counts them."""
        ids = json.dumps([v[0] for v in part])
        column = "content" if self.on_conflict == "changed" else "updated_at"
        existing = dict(run_sql(self.store, f"SELECT id, {column} FROM memories WHERE id IN {IDS_JSON}", [ids]))
        rows, replace = [], []
        for values in part:
            current = existing.get(values[0], _ABSENT)
            if current is not _ABSENT:
                keep = self.on_conflict == "skip" or (
                    self.on_conflict == "newer" and not _newer(values[_UPDATED], current)) or (
                    self.on_conflict == "changed" and values[1] == current)
                if keep:
                    self.kept += 1
                    continue
                replace.append(values[0])
            rows.append(values)
            self.types[values[_TYPE] or "untyped"] += 1
            if len(self.samples) < self.sample_size:
                self.samples.append(row_to_memory((None, *_readable(values))))
        added = [v[0] for v in rows if v[0] not in existing]
        self.replaced_ids += replace
        self.added_ids += added
        return rows, replace, added

    def write(self, part: Sequence[tuple[Any, ...]]) -> None:
        """Decide and write one chunk (inside its write transaction)."""
        rows, replace, added = self.decide(part)
        journalled = self.written <= JOURNAL_LIMIT
        batch = None
        self.previous = {}
        if replace:
            if journalled:
                self.previous = journal.capture(self.store, replace, self.store.columns)
            batch = self.store.remove_where_recoverably(f"id IN {IDS_JSON}", [json.dumps(replace)],
                                                        "replaced by import", return_records=False,
                                                        batch=self.batch, unlink=False).batch
        raw_text = [v[0] for v in rows if v[1].__class__ is RawText]
        positions = self.positions
        if len(positions) < len(MEMORY_COLUMNS):  # a file lacking some columns: leave them out
            rows = [[v[i] for i in positions] for v in rows]
        self.store.db.cursor().executemany(self.insert_sql, rows)
        if raw_text:  # bound as bytes (a BLOB); stored as the TEXT it was, byte for byte
            run_sql(self.store, f"UPDATE memories SET content = CAST(content AS TEXT) WHERE id IN {IDS_JSON}",
                    [json.dumps(raw_text)])
        versions = journal.fingerprints(self.store, [*added, *replace]) if journalled else {}
        self.chunk = (added, replace, batch, versions)

    def chunk_ids(self) -> tuple[list[str], list[str], str | None]:
        """What the chunk being written added and replaced, and the trash batch of the replaced."""
        return self.chunk[:3]

    def keep(self) -> None:
        """The chunk committed: keep its batch, and encode its journal pieces (outside the lock)."""
        self.batch = self.chunk[2] or self.batch
        self._encode()
        self.chunk = ([], [], None, {})

    def _encode(self) -> None:
        """Add the chunk's previous values and versions to what the journal entry will hold."""
        self.before.add(self.previous)
        self.after.add(self.chunk[3])
        self.previous, self.chunk = {}, (*self.chunk[:3], {})

    def journal(self, path: Path) -> None:
        """Journal the import as one undo step (inside its last chunk's write), unless it is too big."""
        count = self.written
        if not count or count > JOURNAL_LIMIT:
            return
        self._encode()  # (the last chunk's pieces; the others' were encoded between chunks)
        change = _change(self.added_ids, self.replaced_ids)
        journal.record(self.store, change, f"import of {count:,} memor{'y' if count == 1 else 'ies'} from {path.name}",
                       journal.Undo(added=tuple(self.added_ids)), after=self.after, rows=self.before)


_ABSENT = object()


def _change(added: list[str], replaced: list[str]) -> Change:
    return Change(added=frozenset(added), changed=frozenset(replaced), source="import", initiator=Initiator.IMPORT)


def _readable(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row whose content is kept bytes, with that content as text (for a sample shown)."""
    content = values[1]
    if not isinstance(content, bytes):
        return values
    return (values[0], Replaced(content.decode("utf-8", "replace")), *values[2:])


def _newer(incoming: Any, current: Any) -> bool:
    """Whether the incoming ``updated_at`` is later than the stored one (as time, any format)."""
    new, old = timestamps.parse(incoming), timestamps.parse(current)
    return old is None or (new is not None and new > old)


def undo_import(store: Store, result: ImportResult) -> Change:
    """Take an import back (one too big for the journal): what it wrote goes to the trash
    (recoverable) in short transactions (:mod:`..chunks`) under one trash batch, then the rows it
    replaced come back from the trash (:func:`.edits.restore`, in short transactions too when
    many; the other memories' links to them were never taken)."""
    if result.dry_run or not result.change:
        return Change()
    batch = None
    for ids, unlink in ((result.change.changed, False), (result.change.added, True)):  # (the replaced come back)
        batch = store.remove_where_recoverably(f"id IN {IDS_JSON}", [json.dumps(sorted(ids))], "import undone",
                                               return_records=False, recheck="1", batch=batch, unlink=unlink).batch
    trash_ids = [t for b in result.replaced_batches for t in store.batch_rows(b).values()]
    if trash_ids:  # (in short transactions too, when many)
        edits.restore(store, trash_ids, initiator=Initiator.IMPORT, journal_it=False)
    return Change(removed=frozenset(result.change.added), changed=frozenset(result.change.changed),
                  source="undo import")

