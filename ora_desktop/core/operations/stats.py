"""Figures about files for the charts and the sidebar: aggregate reads, no rows loaded.

Every figure is a ``GROUP BY`` or an aggregate over ``memories`` (through the store's facets or
one statement here), so a million-row file costs a few index or table scans. The
importance/health scatter is binned (importance x health rounded to 0.02) with a count per
point, which bounds it to ~560 points whatever the file's size; files over 40,000 rows are
sampled for it (20,000 rows by rowid, no scan). The window's Charts tab and sidebar call these
on a worker thread; nothing here writes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from ..errors import OraError
from ..health_buckets import HEALTH_BUCKETS, UNKNOWN
from ..history import history
from ..rawsql import all_rows
from ..records import Change
from ..schema import RECALL_THRESHOLD
from ..store import Store

#: Health is rounded to this step for the scatter (51 steps x 11 importances at most).
HEALTH_STEP = 0.02
#: Files bigger than twice this are sampled for the scatter (by evenly spread rowids).
SAMPLE = 20_000


@dataclass(frozen=True, slots=True)
class FileHealth:
    """One file at a glance: every memory counted (superseded ones included)."""

    count: int
    #: Mean health, ``None`` when no memory has one.
    average_health: float | None
    #: Memories at or below the recall threshold (recall no longer returns them).
    low_health: int
    warnings: tuple[str, ...] = ()


def file_health(store: Store) -> FileHealth:
    """Count, mean health and low-health count of ``store`` (reads only the seed's health index)."""
    row = all_rows(store,
        "SELECT count(*), avg(health_score), sum(health_score <= ?) FROM memories", (RECALL_THRESHOLD,)
    )[0]
    return FileHealth(count=row[0], average_health=row[1], low_health=row[2] or 0, warnings=tuple(store.warnings))


def health_may_change(change: Change) -> bool:
    """Whether ``change`` can move a file's :class:`FileHealth` (its count or its health figures):
    not when it only edited rows in place through columns other than ``health_score``."""
    if change.membership_changed or change.columns is None:
        return True
    return "health_score" in change.columns


def last_check_damage(path: Path) -> str | None:
    """The message of the latest check of ``path`` if it found the file damaged (outcome
    "problems", recorded by the daemon, the window or ``ora-desktop run check``), else ``None``."""
    try:
        runs = history(limit=1, path=path, job="check")
    except Exception:  # the history database must never stop a file from being shown
        return None
    return runs[0].message if runs and runs[0].outcome == "problems" else None


@dataclass(frozen=True, slots=True)
class ChartData:
    """Aggregates for one scope (one agent, a site, or every agent)."""

    scope: str
    files: int
    total: int = 0
    health_buckets: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    sync_statuses: dict[str, int] = field(default_factory=dict)
    #: (day, memories created that day), oldest first; rows with no readable date are left out.
    growth: tuple[tuple[date, int], ...] = ()
    undated: int = 0
    #: (importance, health rounded to HEALTH_STEP, how many memories sit there).
    scatter: tuple[tuple[int, float, int], ...] = ()
    #: Rows the scatter was estimated from (0 = every row counted exactly).
    scatter_sampled: int = 0
    #: Files that could not be read, with the reason in words.
    problems: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.total == 0


def chart_data(scope: str, paths: Iterable[Path], open_store: Callable[[Path], Store]) -> ChartData:
    """Aggregate every file in ``paths`` (each opened with ``open_store``) into one :class:`ChartData`.

    A file that cannot be read is named in ``problems`` and the others are still counted.
    """
    health: Counter[str] = Counter()
    types: Counter[str] = Counter()
    syncs: Counter[str] = Counter()
    growth: Counter[date] = Counter()
    scatter: Counter[tuple[int, float]] = Counter()
    problems: list[str] = []
    total = undated = files = sampled = 0
    for path in paths:
        try:
            store = open_store(path)
            facets = store.facets(superseded="show")
            days, no_day = _growth(store)
            points, read = _scatter(store, facets.total)
        except OraError as exc:
            problems.append(str(exc))
            continue
        files += 1
        total += facets.total
        health.update(facets.health_buckets)
        types.update({_label(k): v for k, v in facets.types.items()})
        syncs.update({_label(k): v for k, v in facets.sync_statuses.items()})
        growth.update(days)
        undated += no_day
        scatter.update(points)
        sampled += read
    return ChartData(
        scope=scope,
        files=files,
        total=total,
        health_buckets={b: health[b] for b in (*HEALTH_BUCKETS, UNKNOWN) if b != UNKNOWN or health[b]},
        types=dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))),
        sync_statuses=dict(sorted(syncs.items(), key=lambda kv: (-kv[1], kv[0]))),
        growth=tuple(sorted(growth.items())),
        undated=undated,
        scatter=tuple((imp, h, n) for (imp, h), n in sorted(scatter.items())),
        scatter_sampled=sampled,
        problems=tuple(problems),
    )


def cumulative(growth: Iterable[tuple[date, int]], max_points: int = 400) -> list[tuple[date, int]]:
    """Running totals per day, thinned to at most ``max_points`` (the last day always kept)."""
    running = 0
    points: list[tuple[date, int]] = []
    for day, count in growth:
        running += count
        points.append((day, running))
    if len(points) <= max_points:
        return points
    step = len(points) / max_points
    thinned = [points[int(i * step)] for i in range(max_points)]
    if thinned[-1] != points[-1]:
        thinned.append(points[-1])
    return thinned


def _label(value: object) -> str:
    return "(none)" if value in (None, "", "None") else str(value)


def _growth(store: Store) -> tuple[Counter[date], int]:
    """Memories created per day (``date()`` reads every timestamp format SQLite knows)."""
    if "created_at" not in store.columns:
        return Counter(), store.count(superseded="show")
    days: Counter[date] = Counter()
    undated = 0
    for day, count in all_rows(store, "SELECT date(created_at) AS d, count(*) FROM memories GROUP BY d"):
        parsed = _day(day)
        if parsed is None:
            undated += count
        else:
            days[parsed] += count
    return days, undated


def _day(text: str | None) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _scatter(store: Store, total: int) -> tuple[Counter[tuple[int, float]], int]:
    """Importance x health binned to ``HEALTH_STEP``, with the number of rows read.

    Files up to ``2 * SAMPLE`` rows are counted exactly in one aggregate query. Larger files are
    sampled: ``SAMPLE`` rowids spread evenly over the table, looked up by primary key (no scan),
    and the counts scaled up to the file's total.
    """
    if "importance" not in store.columns or "health_score" not in store.columns or not total:
        return Counter(), 0
    inverse = round(1 / HEALTH_STEP)
    select = f"SELECT importance, CAST(round(health_score * {inverse}) AS INTEGER) AS h, count(*) FROM memories"
    group = "importance IS NOT NULL AND health_score IS NOT NULL GROUP BY importance, h"
    if total <= 2 * SAMPLE:
        rows, scale, read = all_rows(store, f"{select} WHERE {group}"), 1.0, 0
    else:
        low, high = all_rows(store, "SELECT min(rowid), max(rowid) FROM memories")[0]
        step = (high - low + 1) / SAMPLE
        rowids = sorted({low + int(i * step) for i in range(SAMPLE)})
        rows = all_rows(store, f"{select} WHERE rowid IN ({','.join('?' * len(rowids))}) AND {group}", rowids)
        read = sum(n for _i, _h, n in rows)
        scale = total / read if read else 0.0
    points: Counter[tuple[int, float]] = Counter()
    for importance, step_index, count in rows:
        try:
            points[(int(importance), round(int(step_index) / inverse, 4))] += max(1, round(count * scale))
        except (TypeError, ValueError):
            continue  # a legacy file with text in a numeric column: not plottable
    return points, read
