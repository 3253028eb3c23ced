"""Consolidation: clusters of old, low-health memories on one topic become one summary memory.

Candidates are live memories created at least ``min_age_days`` ago whose health is below
``max_health``. Their vectors are grouped like near duplicates, at the looser
:data:`TOPIC_THRESHOLD` (one topic, not one fact); groups of at least ``min_size`` become a
cluster, numbered from 1 in a stable order (the same file gives the same numbers, so a person can
review a dry run and then apply one cluster). Each cluster gets an **extractive** summary
(:func:`extractive_summary`): the members' own sentences and code nearest the cluster's centre in
meaning, a code block, command or path never cut inside, within :data:`MAX_SUMMARY_CHARS`, ending
with a line naming the memories it merged. The summary is a new memory (the members' most common
type, their highest importance, ``related_to`` = the members' ids) that supersedes every member.
With ``summarizer="endpoint"`` an OpenAI-compatible chat endpoint writes the summaries instead
(:mod:`.summarizer`); on any failure the cluster keeps its extractive summary and its ``note`` says
why, in the dry run and in the journal step that applies it.

Applying a cluster is one transaction and one step of the undo journal (:mod:`.journal`), so
``ora-desktop undo`` or the window's Change history takes it back: the summary goes to the trash
and the members are live again. Nothing is deleted.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from .. import timestamps
from ..errors import InvalidValue
from ..rawsql import all_rows
from ..records import Change, ChangeKind, Initiator, Memory
from . import journal
from .duplicates import _components, similar_pairs
from .edits import SYNC_COLUMNS
from .summarizer import (
    ENDPOINT,
    EXTRACTIVE,
    SUMMARIZERS,
    Endpoint,
    SummarizerError,
    configured_endpoint,
    endpoint_summary,
)

if TYPE_CHECKING:
    import numpy as np

    from ..embeddings import Provider
    from ..store import Store

TOPIC_THRESHOLD = 0.70
#: How many sentences (or code blocks) a summary takes at most.
SUMMARY_SENTENCES = 3
#: The longest summary text before the line naming what it merged.
MAX_SUMMARY_CHARS = 1200
SAME_SENTENCE = 0.92
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_LINE = re.compile(
    r"^(?:\s{4}|\t|\$ |> ?\$ )"                        # indented, or a shell prompt
    r"|[{};]\s*$|=>|^\s*[})\]]"                          # braces, semicolons, arrows
    r"|^\s*(?:export|import|def|class|function|const|let|var|return|async|await|if|for|while|from)\b"
    r"|^\s*(?:npm|npx|yarn|pnpm|git|docker|pip|uv|make|cargo|go|kubectl|curl|python3?|ora-desktop)\s")
#: A sentence ends at . ! or ? followed by space and a capital, digit or quote (not inside `code`).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_TICKED = re.compile(r"`[^`\n]*`")


@dataclass(frozen=True, slots=True)
class Cluster:
    """Memories on one topic and the summary that would replace them (``number`` from 1)."""

    ids: tuple[str, ...]
    summary: str
    type: str
    importance: int
    number: int = 0
    summarizer: str = EXTRACTIVE  # which one wrote ``summary``: "extractive" or "endpoint"
    note: str = ""  # the endpoint and model that wrote it, or why the extractive one stands in


@dataclass(frozen=True, slots=True)
class ConsolidateResult:
    """Clusters found; on a real run, the summary memories written (one per applied cluster) and
    their journal entries."""

    clusters: tuple[Cluster, ...]
    summaries: tuple[str, ...]
    candidates: int
    change: Change
    entries: tuple[int, ...] = ()
    applied: tuple[int, ...] = ()  # numbers of the clusters written


def units(content: str) -> list[tuple[str, str]]:
    """``content`` as (kind, text) units a summary may take whole: ``code`` (a fenced block, or a
    run of lines that look like code or commands) and ``prose`` sentences (never split inside
    backticks, a path or a number)."""
    out: list[tuple[str, str]] = []
    prose: list[str] = []
    code: list[str] = []
    fenced = False

    def flush_prose() -> None:
        text = " ".join(" ".join(prose).split())
        prose.clear()
        if not text:
            return
        shielded = _TICKED.sub(lambda m: m.group(0).replace(" ", "\x00"), text)
        out.extend(("prose", part.replace("\x00", " ").strip()) for part in _SENTENCE_END.split(shielded)
                   if part.strip())

    def flush_code() -> None:
        if code and "\n".join(code).strip():
            out.append(("code", "\n".join(code).strip("\n")))
        code.clear()

    for line in content.split("\n"):
        if _FENCE.match(line):
            if fenced:
                code.append(line)
                flush_code()
            else:
                flush_prose()
                flush_code()
                code.append(line)
            fenced = not fenced
        elif fenced or (_CODE_LINE.search(line) and line.strip()):
            if not fenced and not code:
                flush_prose()
            code.append(line)
        elif not line.strip():
            flush_code()
            flush_prose()
        else:
            flush_code()
            prose.append(line)
    if fenced:  # an unclosed fence runs to the end
        flush_prose()
    flush_code()
    flush_prose()
    return out


def find_clusters(store: Store, *, min_age_days: float = 30, max_health: float = 0.5, min_size: int = 3,
                  threshold: float = TOPIC_THRESHOLD, provider: Provider | None = None,
                  cancel: object = None, now: datetime | None = None) -> tuple[list[Cluster], int]:
    """(clusters with their extractive summaries, how many memories were candidates)."""

    from ..search.semantic import ensure_vectors

    cutoff = timestamps.to_sql((now or timestamps.now()) - timedelta(days=float(min_age_days)))
    live = "superseded_by IS NULL AND " if "superseded_by" in store.columns else ""
    ids = [r[0] for r in all_rows(store,
        f"SELECT id FROM memories WHERE {live}health_score < ? AND julianday(created_at) <= julianday(?) "
        "ORDER BY rowid", (float(max_health), cutoff))]
    if len(ids) < min_size:
        return [], len(ids)
    vectors = ensure_vectors(store.path, cancel=cancel, provider=provider)
    held, matrix = vectors.vectors_of(ids)
    groups = [members for members, _ in _components(similar_pairs(matrix, threshold), len(held))
              if len(members) >= min_size]
    records = store.get_many([held[m] for members in groups for m in members])
    clusters = []
    groups.sort(key=lambda members: min(held[m] for m in members))  # stable numbers, run after run
    for number, members in enumerate(groups, start=1):
        memories = sorted((records[held[m]] for m in members if held[m] in records),
                          key=lambda m: (-(m.importance or 0), m.id))
        centre = matrix[members].mean(axis=0)
        summary = extractive_summary(memories, centre, vectors.provider)
        kinds = Counter(m.type or "fact" for m in memories)
        clusters.append(Cluster(tuple(m.id for m in memories), summary, kinds.most_common(1)[0][0],
                                max(m.importance or 0 for m in memories) or 5, number))
    return clusters, len(ids)


def extractive_summary(memories: Sequence[Memory], centre: np.ndarray, provider: Provider,
                       sentences: int = SUMMARY_SENTENCES, max_chars: int = MAX_SUMMARY_CHARS) -> str:
    """The members' units (:func:`units`) nearest ``centre`` (no two near-identical, at most
    ``sentences``, within ``max_chars``), in member order, then a line naming every member."""
    import numpy as np

    found: list[tuple[int, int, str, str]] = []  # (member index, unit index, kind, text)
    for i, memory in enumerate(memories):
        found += [(i, j, kind, text) for j, (kind, text) in enumerate(units(memory.content))]
    merged = f"Merged from {len(memories)} memories: {', '.join(m.id for m in memories)}."
    if not found:
        return merged
    vectors = provider.embed([text for *_, text in found])
    scores = vectors @ (centre / (np.linalg.norm(centre) or 1.0))
    chosen: list[int] = []
    used = 0
    for k in np.argsort(-scores, kind="stable"):
        size = len(found[k][3]) + 2
        if used + size > max_chars and chosen:
            continue  # too long to add whole: a shorter unit may still fit
        if all(float(vectors[k] @ vectors[c]) < SAME_SENTENCE for c in chosen):
            chosen.append(int(k))
            used += size
        if len(chosen) == sentences:
            break
    return _render([found[k] for k in sorted(chosen, key=lambda k: found[k][:2])], max_chars) + "\n\n" + merged


def _render(parts: list[tuple[int, int, str, str]], max_chars: int) -> str:
    """Prose joined into paragraphs, code on its own lines (fenced when it was not); a single unit
    longer than ``max_chars`` is cut at a line end with a note, never inside a line."""
    blocks: list[str] = []
    for _i, _j, kind, text in parts:
        if len(text) > max_chars:
            kept = text[:max_chars].rsplit("\n", 1)[0] if "\n" in text[:max_chars] else text[:max_chars]
            text = kept.rstrip() + ("\n```" if kind == "code" and _FENCE.match(text) else "") + " …"
        if kind == "code":
            blocks.append(text if _FENCE.match(text) else f"```\n{text}\n```")
        elif blocks and not blocks[-1].startswith("```"):
            blocks[-1] += " " + (text if text[-1] in ".!?:" else f"{text}.")
        else:
            blocks.append(text if text[-1] in ".!?:" else f"{text}.")
    return "\n\n".join(blocks)


def consolidate(store: Store, *, dry_run: bool = True, clusters: Sequence[int] | None = None,
                progress: Callable[[int, int], None] | None = None, initiator: Initiator = Initiator.USER,
                summarizer: str = EXTRACTIVE, endpoint: Endpoint | None = None,
                **options: object) -> ConsolidateResult:
    """Find clusters (see :func:`find_clusters` for ``options``); unless ``dry_run``, write one
    summary per cluster (all, or those numbered in ``clusters``) that supersedes its members: one
    transaction and one journal step per cluster. An unknown cluster number changes nothing.
    ``summarizer="endpoint"`` has ``endpoint`` (default: ``[summarizer]`` in ``config.toml``)
    write the summaries of the clusters wanted, the extractive one standing in on failure."""
    if summarizer not in SUMMARIZERS:
        raise InvalidValue("summarizer", f"{summarizer!r} is not one of {', '.join(SUMMARIZERS)}; nothing changed")
    if summarizer == ENDPOINT and endpoint is None:
        endpoint = configured_endpoint()  # a missing or bad [summarizer] fails before any work
    found, candidates = find_clusters(store, **options)  # type: ignore[arg-type]
    wanted = found if clusters is None else _pick(found, clusters)
    if endpoint is not None and summarizer == ENDPOINT and wanted:
        rewritten = summarize_with(store, wanted, endpoint)
        found = [rewritten.get(c.number, c) for c in found]
        wanted = [rewritten.get(c.number, c) for c in wanted]
    if dry_run or not wanted:
        return ConsolidateResult(tuple(found), (), candidates, Change())
    written: list[str] = []
    entries: list[int] = []
    for done, cluster in enumerate(wanted, start=1):
        summary, entry = apply_cluster(store, cluster, initiator=initiator)
        written.append(summary.id)
        entries.append(entry)
        if progress:
            progress(done, len(wanted))
    ids = frozenset(i for c in wanted for i in c.ids)
    return ConsolidateResult(tuple(found), tuple(written), candidates,
                             Change(added=frozenset(written), changed=ids, source="consolidate"),
                             tuple(entries), tuple(c.number for c in wanted))


def summarize_with(store: Store, clusters: Sequence[Cluster], endpoint: Endpoint) -> dict[int, Cluster]:
    """Each cluster (by number) with ``endpoint``'s summary, or with its extractive one and a note
    saying why; after one failure the endpoint is not asked again in this run."""
    out: dict[int, Cluster] = {}
    failed = ""
    for cluster in clusters:
        if failed:
            out[cluster.number] = replace(cluster, note=failed)
            continue
        records = store.get_many(list(cluster.ids))
        try:
            text = endpoint_summary(endpoint, [records[i] for i in cluster.ids if i in records], MAX_SUMMARY_CHARS)
        except SummarizerError as exc:
            failed = f"extractive summary instead: {exc}"
            out[cluster.number] = replace(cluster, note=failed)
        else:
            out[cluster.number] = replace(cluster, summary=text, summarizer=ENDPOINT, note=f"written by {endpoint}")
    return out


def _pick(found: list[Cluster], numbers: Sequence[int]) -> list[Cluster]:
    unknown = [n for n in numbers if not 1 <= int(n) <= len(found)]
    if unknown:
        have = f"1 to {len(found)}" if found else "none: no cluster was found"
        raise InvalidValue("cluster", f"{unknown[0]} is not a cluster of this file (the dry run lists {have}); "
                           "nothing changed")
    return [found[int(n) - 1] for n in dict.fromkeys(numbers)]


def apply_cluster(store: Store, cluster: Cluster, *, summary: str | None = None,
                  initiator: Initiator = Initiator.USER) -> tuple[Memory, int]:
    """Write ``cluster``'s summary (or ``summary``, a person's edit of it) superseding its members:
    one transaction, one journal step. Returns (the summary memory, its journal entry)."""
    ids = list(cluster.ids)
    with store.write():
        before = journal.capture(store, ids, ["superseded_by", *SYNC_COLUMNS])
        missing = [i for i in ids if i not in before]
        if missing:
            raise InvalidValue("cluster", f"{', '.join(missing)} is no longer in the file; nothing changed")
        memory = store.add(summary if summary is not None else cluster.summary, cluster.type, cluster.importance,
                           related_to=ids, on_duplicate="add")
        store.update_many(ids, superseded_by=memory.id)
        change = Change(added=frozenset({memory.id}), changed=frozenset(ids), source="consolidate",
                        kind=ChangeKind.SUPERSEDED, initiator=initiator)
        said = f" (summary: {cluster.summarizer}{'; ' + cluster.note if cluster.note else ''})"
        edited = " (summary edited by a person)" if summary is not None and summary != cluster.summary else ""
        entry = journal.record(store, change, f"consolidate {len(ids)} memories into {memory.id}{edited or said}",
                               journal.Undo(added=(memory.id,), rows=before))
        store._emit(change)  # noqa: SLF001 (heard once the transaction commits)
    return memory, entry


def undo_consolidation(store: Store, summary_ids: Sequence[str]) -> Change:
    """Put back the members each summary superseded and move the summaries to the trash."""
    restored: set[str] = set()
    with store.write():
        for summary_id in summary_ids:
            summary = store.get(summary_id)
            for memory_id in summary.related_to:
                member = store.find(memory_id)
                if member is not None and member.superseded_by == summary_id:
                    store.update(memory_id, superseded_by=None)
                    restored.add(memory_id)
        store.delete(list(summary_ids), "undo consolidation")
    return Change(changed=frozenset(restored), removed=frozenset(summary_ids), source="undo consolidation")
