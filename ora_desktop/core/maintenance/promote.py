"""Extraction: copy a finished task agent's important memories into its parent agent, once.

"Important" is the seed's extraction query (``Store.important()``: importance >= 7, or facts
with health >= 0.5, most important first, 50 at most). Copies get the id ``extracted-<id>``;
links between copied memories are kept (renamed), links to memories not copied are dropped.
The parent's ``ora_desktop_state`` records that the task was promoted, so a second run — from
the window, the daemon or the command line — copies nothing, even if a copy was since deleted.
"""

from __future__ import annotations

from pathlib import Path

from .. import timestamps
from ..home import AgentFile, OraHome
from ..records import Memory
from ..store import Store, open_store
from .context import JobContext, Outcome, read_state, summary, write_state

PREFIX = "extracted-"
COPIED_FIELDS = ("type", "importance", "health_score", "access_count", "last_accessed_at", "expires_at",
                 "created_at")


def agent_file(home: OraHome, path: Path) -> AgentFile:
    """The :class:`AgentFile` for ``path`` (built from its folder and name when outside ``home``)."""
    found = home.agent_for(path)
    if found is not None:
        return found
    name = path.name[: -len(".site.db")] if path.name.endswith(".site.db") else path.stem
    return AgentFile(path.parent.name, name, path)


def is_finished(store: Store) -> bool:
    """A task is finished when its ``task_context`` has a completed row and none still active."""
    statuses = {t.status for t in store.tasks()}
    return "completed" in statuses and "active" not in statuses


def run(ctx: JobContext) -> Outcome:
    """Promote one task agent's file into its parent (nothing to do for other files)."""
    agent = agent_file(ctx.home, ctx.path)
    if not agent.is_task_agent:
        return Outcome({"promoted": 0}, f"{agent.label} is not a task agent: nothing to promote")
    parent = _parent(ctx.home, agent)
    if parent is None:
        return Outcome({"promoted": 0}, f"{agent.label}: no parent agent in site {agent.site!r} to promote into")
    key = f"promote.done.{agent.agent}"
    with open_store(ctx.path, readonly=True) as task:
        if not is_finished(task):
            return Outcome({"promoted": 0}, f"{agent.label}: the task is not finished yet: nothing promoted")
        chosen = task.important(current=False)  # the seed's extraction query as written
    ctx.step(0, len(chosen))
    with open_store(parent.path, readonly=ctx.dry_run) as target:
        if ctx.dry_run:
            done = read_state(target, key)
            fresh = [] if done else _fresh(target, chosen)
            note = f" (already promoted at {done})" if done else ""
            return Outcome({"promoted": len(fresh), "important": len(chosen)},
                           f"would copy {len(fresh)} memories into {parent.label}{note}",
                           [summary(PREFIX + m.id, m.content, f"importance {m.importance}") for m in fresh])
        with target.write():
            target.ensure_engine_tables()  # rolled back with the rest if the run fails
            done = read_state(target, key)
            if done:
                return Outcome({"promoted": 0, "important": len(chosen)},
                               f"{agent.label} was already promoted into {parent.label} at {done}")
            fresh = _fresh(target, chosen)
            if fresh:
                target.add_many(_copy(m, {c.id for c in chosen}) for m in fresh)
            write_state(target, key, timestamps.now_sql())
    ctx.step(len(chosen), len(chosen))
    return Outcome({"promoted": len(fresh), "important": len(chosen)},
                   f"copied {len(fresh)} important memories from {agent.label} into {parent.label}",
                   changed_path=parent.path)


def _parent(home: OraHome, agent: AgentFile) -> AgentFile | None:
    if agent.path.parent.parent.resolve() == home.sites_dir.resolve():
        return home.parent_of(agent)
    # A file outside ORA_HOME: its siblings are the candidates, as in OraHome.parent_of.
    return OraHome(agent.path.parent.parent.parent).parent_of(agent)


def _fresh(target: Store, chosen: list[Memory]) -> list[Memory]:
    existing = target.get_many(PREFIX + m.id for m in chosen)
    return [m for m in chosen if PREFIX + m.id not in existing]


def _copy(memory: Memory, copied: set[str]) -> dict:
    row = {"id": PREFIX + memory.id, "content": memory.content}
    for name in COPIED_FIELDS:
        value = getattr(memory, name)
        if value is not None:
            row[name] = value
    links = [PREFIX + i for i in memory.related_to if i in copied]
    if links:
        row["related_to"] = links
    return row
