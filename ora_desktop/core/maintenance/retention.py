"""Retention (the context-module seed's policy): delete memories older than N days, or keep at
most N memories — per site, from ``config.toml`` — never touching importance 10 ("never
forget"). Deletions are recoverable (the file's trash) and a dry run lists them first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..rawsql import run_sql
from ..store import Store, open_store
from .context import JobContext, Outcome, summary

PREVIEW_LIMIT = 1000
PROTECTED = "coalesce(importance, 0) < 10"
OLDEST_FIRST = "julianday(created_at), rowid"


def _clauses(store: Store, ctx: JobContext) -> Iterator[tuple[str, str, list]]:
    """(name, WHERE, params) for each active part of the policy, age first.

    A generator: the count limit is worked out only after the caller has acted on the age
    limit, and leaves out rows the age limit matches (so a dry run previews the same rows).
    """
    policy = ctx.config.retention(ctx.site)
    old_where, old_params = "0", []
    if policy.max_age_days is not None:
        old_where = f"{PROTECTED} AND julianday(created_at) < julianday(?) - ?"
        old_params = [ctx.now_sql, policy.max_age_days]
        yield "too_old", old_where, old_params
    if policy.max_memories is not None:
        total, old = run_sql(store,
            f"SELECT count(*), coalesce(sum({old_where}), 0) FROM memories", old_params).fetchone()
        excess = max(0, total - old - policy.max_memories)
        yield ("over_limit", f"rowid IN (SELECT rowid FROM memories WHERE {PROTECTED} AND NOT ({old_where}) "
               f"ORDER BY {OLDEST_FIRST} LIMIT ?)", [*old_params, excess])


def run(ctx: JobContext) -> Outcome:
    """Apply the site's retention policy to one file (nothing to do when there is none)."""
    policy = ctx.config.retention(ctx.site)
    if not policy.active:
        return Outcome({"removed": 0}, f"no retention policy for site {ctx.site!r}: nothing to do")
    ctx.step(0, 1)
    with open_store(ctx.path, readonly=ctx.dry_run) as store:
        if ctx.dry_run:
            return _preview(store, ctx)
        counts: dict[str, int] = {}
        # In short transactions (the write lock is never held long): each part of the policy
        # names its rows first, and each chunk checks again that they still match (the count
        # limit: that they are still not importance 10), so rows agents add meanwhile are safe.
        with ctx.interruptible(store):
            for name, where, params in _clauses(store, ctx):
                recheck = None
                if name == "over_limit":
                    where, params, recheck = _oldest(store, where, params), [], PROTECTED
                counts[name] = store.remove_where_recoverably(where, params, reason=f"retention:{name}",
                                                              return_records=False, recheck=recheck).count
    ctx.step(1, 1)
    removed = sum(counts.values())
    counts["removed"] = removed
    return Outcome(counts, f"retention removed {removed} memories ({_describe(policy)}; importance 10 kept)"
                   + (", kept in the trash, restorable" if removed else ""))


def _oldest(store: Store, where: str, params: list) -> str:
    """``where`` (a ``LIMIT`` over the whole table, costly to repeat) as the rowids it picks now."""
    rowids = [r[0] for r in run_sql(store, f"SELECT rowid FROM memories WHERE {where}", params)]
    return f"rowid IN (SELECT value FROM json_each('{json.dumps(rowids)}'))"


def _preview(store: Store, ctx: JobContext) -> Outcome:
    seen: dict[str, tuple[str, str]] = {}
    counts: dict[str, int] = {}
    for name, where, params in _clauses(store, ctx):
        rows = run_sql(store,
            f"SELECT id, content, created_at FROM memories WHERE {where} ORDER BY {OLDEST_FIRST}", params,
        ).fetchall()
        counts[name] = len(rows)
        for r in rows:
            seen.setdefault(r[0], summary(r[0], r[1], f"{name.replace('_', ' ')}, created {r[2]}"))
    counts["removed"] = len(seen)
    listed = list(seen.values())[:PREVIEW_LIMIT]
    more = f"; first {PREVIEW_LIMIT} listed" if len(seen) > PREVIEW_LIMIT else ""
    return Outcome(counts, f"would remove {len(seen)} memories ({_describe(ctx.config.retention(ctx.site))}; "
                   f"importance 10 kept{more})", listed, would_change_total=len(seen))


def _describe(policy) -> str:
    parts = []
    if policy.max_age_days is not None:
        parts.append(f"older than {policy.max_age_days:g} days")
    if policy.max_memories is not None:
        parts.append(f"beyond {policy.max_memories} memories")
    return " or ".join(parts)
