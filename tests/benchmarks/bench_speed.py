"""Issue 30's rows ("fast from the first call") in one run, each beside its raw baseline:
``python -m tests.benchmarks speed`` (``make bench ARGS=speed``).

* everything :mod:`.bench_search` measures: the index build (words searchable, then complete),
  the tag pass alone, an agent's first search of a never-indexed file, search p50 with one and
  with three words, the refresh after 100 changed rows, ``context()`` (also on a file holding
  one 10 MB memory);
* ``important()`` beside the seed's SQL (as :mod:`.bench_seed`, 31 alternating runs);
* search by meaning with ``type:preference`` p50 beside numpy brute force over the same vectors
  (as :mod:`.bench_meaning`). The vectors are built once and kept in ``bench-data/speed-cache``
  (the first run embeds every memory: minutes at 1,000,000; later runs reuse them).
"""

from __future__ import annotations

import numpy as np

from ora_desktop import open_store
from ora_desktop.core.embeddings import default_provider
from ora_desktop.core.search import ensure_index
from ora_desktop.core.search.semantic import ensure_vectors, search_by_meaning
from ora_desktop.core.search.vectors import unit

from .bench_core import _raw_reader, paired
from .bench_meaning import BLOCK, QUERIES, _times
from .bench_search import cache_home, search_rows
from .bench_seed import SEED_IMPORTANT
from .common import DATA, Row, bench_file, p50, report


def run(memories: int) -> None:
    rows = search_rows(memories)
    path = bench_file(memories)
    rows.append(_important(path))
    with cache_home(DATA / "speed-cache"):
        rows.append(_filtered_meaning(path))
    report(f"issue 30, fast from the first call ({memories:,} memories)", rows, baseline="raw")


def _important(path) -> Row:  # noqa: ANN001
    raw = _raw_reader(path)
    with open_store(path, readonly=True) as store:
        ours, base = paired(lambda: store.important(current=False), lambda: raw.execute(SEED_IMPORTANT).fetchall(),
                            repeat=31)
    raw.close()
    return Row("important(current=False) vs the seed's SQL", ours, base, "<= 1.5x")


def _filtered_meaning(path) -> Row:  # noqa: ANN001
    ensure_index(path)
    vectors = ensure_vectors(path)
    provider = default_provider()
    ours = _times(lambda q: search_by_meaning(path, f"{q} type:preference", 20, mode="semantic"))
    matrix, mids = vectors.snapshot()
    floats = np.empty(matrix.shape, dtype=np.float32)
    for start in range(0, len(matrix), BLOCK):
        floats[start:start + BLOCK] = unit(matrix[start:start + BLOCK])

    def brute(query: str) -> None:
        scores = floats @ provider.embed([query])[0]
        top = np.argpartition(-scores, 20)[:20]
        _ = [mids[i] for i in top[np.argsort(-scores[top])]]

    raw = _times(brute)
    return Row(f"semantic + type:preference p50 ({len(QUERIES)} queries)", p50(ours), p50(raw),
               "< 100 ms (raw: numpy brute force)")
