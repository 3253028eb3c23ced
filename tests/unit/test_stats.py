"""The figures the Charts tab and the sidebar show come from core, and match the rows themselves."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

from ora_desktop.core import open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.core.health_buckets import HEALTH_BUCKETS, bucket_bounds, bucket_index, bucket_label, bucket_sql
from ora_desktop.core.operations.stats import chart_data, file_health
from ora_desktop.core.schema import RECALL_THRESHOLD


def demo(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "ora.site.db", tmp_path / "writer.site.db"
    write_agent(first, 1500, seed=1)
    write_agent(second, 400, seed=2)
    return first, second


def test_file_health_is_the_count_mean_and_low_health_of_every_row(tmp_path: Path) -> None:
    path, _ = demo(tmp_path)
    with open_store(path, readonly=True) as store:
        rows = list(store.iter_all(superseded="show"))
        health = file_health(store)
    scores = [m.health_score for m in rows]
    assert health.count == len(rows) == 1500
    assert abs(health.average_health - sum(scores) / len(scores)) < 1e-9
    assert health.low_health == sum(1 for h in scores if h <= RECALL_THRESHOLD) > 0


def test_chart_data_counts_what_the_rows_hold_across_files(tmp_path: Path) -> None:
    paths = demo(tmp_path)
    rows = []
    for path in paths:
        with open_store(path, readonly=True) as store:
            rows += list(store.iter_all(superseded="show"))
    data = chart_data("anwe-sh", paths, lambda p: open_store(p, readonly=True))
    assert (data.files, data.total, data.problems) == (2, 1900, ())
    assert data.health_buckets == {b: Counter(bucket_label(m.health_score) for m in rows)[b] for b in HEALTH_BUCKETS}
    assert data.types == dict(sorted(Counter(m.type for m in rows).items(), key=lambda kv: (-kv[1], kv[0])))
    assert sum(data.sync_statuses.values()) == 1900
    days = Counter(m.created_at.date() for m in rows)
    assert dict(data.growth) == dict(days) and data.undated == 0
    assert sum(n for _, _, n in data.scatter) == 1900 and data.scatter_sampled == 0


def test_a_file_that_cannot_be_read_is_named_and_the_others_still_counted(tmp_path: Path) -> None:
    good, _ = demo(tmp_path)
    broken = tmp_path / "broken.site.db"
    broken.write_bytes(b"this is not a database at all" * 100)
    data = chart_data("site", [good, broken], lambda p: open_store(p, readonly=True))
    assert data.files == 1 and data.total == 1500
    assert len(data.problems) == 1 and "broken.site.db" in data.problems[0]


def test_one_health_bucket_rule_in_python_and_in_sql() -> None:
    assert bucket_label(None) == "unknown" and bucket_index(None) is None
    assert bucket_label(0.0) == "0.0-0.1" and bucket_label(0.1) == "0.1-0.2"
    assert bucket_label(0.3) == "0.3-0.4" and bucket_label(1.0) == "0.9-1.0"
    assert bucket_label(-2) == "0.0-0.1" and bucket_label(7) == "0.9-1.0", "a foreign writer's values clamp"
    assert bucket_bounds("0.2-0.3") == (0.2, 0.3)
    values = [None, -1.0, 0.0, 0.05, 0.0999, 0.1, 0.3, 0.35, 0.5, 0.9, 0.95, 1.0, 1.5]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (h REAL)")
    conn.executemany("INSERT INTO t VALUES (?)", [(v,) for v in values])
    in_sql = [r[0] for r in conn.execute(f"SELECT {bucket_sql('h')} FROM t ORDER BY rowid")]
    assert in_sql == [-1 if v is None else bucket_index(v) for v in values]
