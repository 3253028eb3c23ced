"""A team at once: many homes syncing one agent through one server, with random edits and
touches of the same memories (seeded), then checks that nothing was lost. Used by the
integration test (small) and by ``bench_sync`` (20 homes x 5,000 changes)."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ora_desktop.core.sync import conflicts
from tests.integration.sync_support import Machine


@dataclass
class TeamRun:
    """What the run did and what every home ended with."""

    homes: list[Machine]
    seconds: float = 0.0
    changes: int = 0
    touches: Counter = field(default_factory=Counter)  # memory id -> touches made on every home
    versions: dict[str, set[str]] = field(default_factory=dict)  # memory id -> every content written
    seen: dict[str, set[str]] = field(default_factory=dict)  # memory id -> contents some home edited over
    decided: Counter = field(default_factory=Counter)  # home index -> conflicts its syncs reported


def run_team(url: str, root: Path, *, homes: int = 20, memories: int = 50, changes: int = 100,
             per_sync: int = 20, seed: int = 25) -> TeamRun:
    """Start ``homes`` homes, share ``memories`` memories, then let every home make ``changes``
    changes (a content edit or a touch), syncing after every ``per_sync``, all at once; then sync
    every home twice in turn so all converge."""
    team = TeamRun([Machine(root, f"home-{i:02d}") for i in range(homes)])
    with team.homes[0].store() as store:
        ids = [store.add(f"shared memory {n}", type="fact").id for n in range(memories)]
    for n, memory_id in enumerate(ids):
        team.versions[memory_id] = {f"shared memory {n}"}
        team.seen[memory_id] = set()
    team.homes[0].sync(url)
    lock = threading.Lock()

    def work(index: int) -> None:
        home = team.homes[index]
        rng = random.Random(seed * 1000 + index)
        home.sync(url)
        done = 0
        while done < changes:
            step = min(per_sync, changes - done)
            chosen = rng.sample(ids, k=min(step, len(ids)))  # at most one change per memory between syncs
            with home.store() as store:
                for n, memory_id in enumerate(chosen):
                    if rng.random() < 0.5:
                        store.touch(memory_id)
                        with lock:
                            team.touches[memory_id] += 1
                    else:
                        before = store.get(memory_id).content
                        text = f"home {index} change {done + n}"
                        store.update(memory_id, content=text)
                        with lock:
                            team.seen[memory_id].add(before)
                            team.versions[memory_id].add(text)
            done += len(chosen)
            result = home.sync(url)
            with lock:
                team.decided[index] += len(result.conflicts)
        with lock:
            team.changes += done

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=homes) as pool:
        for future in [pool.submit(work, i) for i in range(homes)]:
            future.result()
    for _ in range(2):
        for index, home in enumerate(team.homes):
            team.decided[index] += len(home.sync(url).conflicts)
    team.seconds = time.perf_counter() - started
    return team


def problems(team: TeamRun) -> list[str]:
    """Everything that went wrong: homes that disagree, lost touches, lost edits, conflicts
    listed other than once."""
    found: list[str] = []
    views = [home.memories() for home in team.homes]
    first = views[0]
    for index, view in enumerate(views[1:], start=1):
        if {i: (m.content, m.access_count, m.health_score) for i, m in view.items()} != {
                i: (m.content, m.access_count, m.health_score) for i, m in first.items()}:
            found.append(f"home {index} differs from home 0")
    kept: set[tuple[str, str]] = set()
    for index, home in enumerate(team.homes):
        with home.store(readonly=True) as store:
            page = conflicts(store, limit=None)
        if page.total != team.decided[index]:
            found.append(f"home {index}: {page.total} conflicts listed, {team.decided[index]} decided")
        # Listed once: the count matches what was decided (above), and no entry comes twice. Two real
        # conflicts of one memory can be decided in the same second on the same basis (two rounds):
        # an entry is told apart by what lost too, as the list shows it.
        keys = [(e.memory_id, e.decided_at, e.kind, e.winner, e.basis,
                 (e.kept.memory.content, e.kept.trash_id) if e.kept is not None else None) for e in page.entries]
        if len(keys) != len(set(keys)):
            found.append(f"home {index}: a conflict is listed twice")
        kept |= {(e.memory_id, e.kept.memory.content) for e in page.entries if e.kept}
    for memory_id, versions in team.versions.items():
        final = first[memory_id]
        if final.access_count != team.touches[memory_id]:
            found.append(f"{memory_id}: {final.access_count} accesses, {team.touches[memory_id]} touches made")
        lost = {v for v in versions if v != final.content and v not in team.seen[memory_id]
                and (memory_id, v) not in kept}
        if lost:
            found.append(f"{memory_id}: edits lost without a trace: {sorted(lost)}")
    return found
