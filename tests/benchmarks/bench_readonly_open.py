"""What keeping SQLite's locks costs a read-only open, beside the ``immutable`` open it replaced.

A read-only store of a WAL file with nothing beside it used to open ``immutable`` (no locks, no
files: an agent's checkpoint could tear its view). It now opens ``shared`` (read-write with
``query_only``: SQLite's locks, its ``-wal``/``-shm`` while open, removed at close). Both are
measured in the same run on the same file: open and close, the window's first screenful
(``first_rows.default_query``) on a fresh store, and one point read (a read transaction each).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from ora_desktop import open_store
from ora_desktop.core import connection
from ora_desktop.views.first_rows import default_query

from .bench_core import paired
from .common import Row, bench_file, report


@contextlib.contextmanager
def immutable_opens() -> Iterator[None]:
    """Read-only opens as before: ``immutable`` whenever nothing is beside the file."""
    real = connection.may_add_files
    connection.may_add_files = lambda path: False
    try:
        yield
    finally:
        connection.may_add_files = real


def as_before(fn: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        with immutable_opens():
            fn()
    return run


def run(memories: int) -> None:
    path = bench_file(memories)

    def open_close() -> None:
        open_store(path, readonly=True).close()

    def first_rows() -> None:
        with open_store(path, readonly=True) as store:
            store.list(default_query(store))

    with open_store(path, readonly=True) as store:
        some_id = store.list(limit=1)[0].id

    def point_reads() -> None:
        with open_store(path, readonly=True) as store:
            for _ in range(100):
                store.get(some_id)

    rows = []
    for name, fn, per in (("open + close", open_close, 1), ("open + first 200 rows + close", first_rows, 1),
                          ("one point read (open once, 100 reads)", point_reads, 100)):
        ours, before = paired(fn, as_before(fn), repeat=15)  # alternated: a busy machine weighs on both
        rows.append(Row(name, ours / per, before / per, "no target: the price of no torn reads"))
    with open_store(path, readonly=True) as store:
        mode = "immutable" if store.immutable else "shared (locks)"
    leftovers = sorted(p.name for p in path.parent.glob(f"{path.name}-*"))
    report(f"read-only open of a WAL file, {memories:,} memories: ours = {mode}", rows,
           baseline="immutable")
    print(f"  files left beside the database after the runs: {leftovers or 'none'}")
