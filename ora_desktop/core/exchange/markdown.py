"""A Markdown review document of memories: grouped by type, each with importance, health, sync
status, times and links, for reading in a diff or a browser — and read back by ``import``, so a
person can edit an export in a text editor and import it (``--on-conflict replace`` to overwrite).

The shape :func:`write` writes and :func:`read` reads::

    # Memories (N)
    ## fact (2)
    ### first words of the memory
    `id` · site/agent · importance 7 · health 0.80 · sync pending · created … · updated … · expires …
    Related: `a`, `b`
    Superseded by `c`
    > the content, line by line
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import IO, Any

from ..records import row_to_memory
from ..schema import MEMORY_TYPES
from .rows import BadRow, Incoming

KIND = "md"
_HEADER = re.compile(r"^# Memories \(\d+\)\s*$")
_TYPE = re.compile(r"^## (.+?) \(\d+\)\s*$")
_TICKED = re.compile(r"`([^`]*)`")


def write(rows: Iterable[tuple[Any, ...]], out: IO[str]) -> int:
    """Write ``(site, agent, *MEMORY_COLUMNS)`` rows as Markdown; returns how many memories."""
    groups: dict[str, list[tuple[str, Any]]] = {}
    count = 0
    for site, agent, *values in rows:
        memory = row_to_memory((None, *values))
        groups.setdefault(memory.type or "untyped", []).append((f"{site}/{agent}", memory))
        count += 1
    out.write(f"# Memories ({count})\n")
    order = [t for t in MEMORY_TYPES if t in groups] + sorted(t for t in groups if t not in MEMORY_TYPES)
    for type_ in order:
        items = sorted(groups[type_], key=lambda p: (-(p[1].importance or 0), p[1].id))
        out.write(f"\n## {type_} ({len(items)})\n")
        for where, m in items:
            out.write(f"\n### {_inline(m.title) or '(empty)'}\n\n")
            health = "-" if m.health_score is None else f"{m.health_score:.2f}"
            facts = [f"`{m.id}`", where, f"importance {m.importance}", f"health {health}",
                     f"sync {m.sync_status}"]
            if m.created_at:
                facts.append(f"created {m.created_at:%Y-%m-%d %H:%M:%S}")
            if m.updated_at and m.updated_at != m.created_at:
                facts.append(f"updated {m.updated_at:%Y-%m-%d %H:%M:%S}")
            if m.expires_at:
                facts.append(f"expires {m.expires_at:%Y-%m-%d %H:%M:%S}")
            out.write(" · ".join(facts) + "\n")
            if m.related_to:
                out.write("\nRelated: " + ", ".join(f"`{r}`" for r in m.related_to) + "\n")
            if m.superseded_by:
                out.write(f"\nSuperseded by `{m.superseded_by}`\n")
            out.write("\n" + "\n".join(f"> {line}" if line else ">" for line in m.content.split("\n")) + "\n")
    return count


def _inline(text: str) -> str:
    return text.replace("#", "\\#")[:120]


def looks_like_review(first_line: str) -> bool:
    """Whether a text file starts as :func:`write` starts one."""
    return bool(_HEADER.match(first_line.strip()))


def read(stream: IO[str]) -> Iterator[Incoming | BadRow]:
    """The memories of a review document (each as :func:`write` wrote it; edits welcome)."""
    type_: str | None = None
    current: dict[str, Any] | None = None
    start = 0
    for number, raw in enumerate(stream, start=1):
        line = raw.rstrip("\n").rstrip("\r")
        heading = _TYPE.match(line)
        if heading or line.startswith("### "):
            if current is not None:
                yield _memory(current, type_, start)
            current = None
            if heading:
                type_ = heading.group(1)
            else:
                current, start = {"content": [], "facts": None}, number
            continue
        if current is None:
            continue
        if line.startswith(">"):
            current["content"].append(line[2:] if line.startswith("> ") else line[1:])
        elif current["facts"] is None and line.startswith("`"):
            current["facts"] = (line, number)
        elif line.startswith("Related:"):
            current["related"] = _TICKED.findall(line)
        elif line.startswith("Superseded by"):
            current["superseded"] = next(iter(_TICKED.findall(line)), None)
    if current is not None:
        yield _memory(current, type_, start)


def _memory(found: dict[str, Any], type_: str | None, start: int) -> Incoming | BadRow:
    where = f"line {start}"
    if found["facts"] is None:
        return BadRow(where, "id", "no line of facts (`id` · site/agent · importance …) under the heading")
    line, number = found["facts"]
    parts = [p.strip() for p in line.split(" · ")]
    ids = _TICKED.findall(parts[0])
    values: dict[str, Any] = {"id": ids[0] if ids else None, "access_count": 0, "last_accessed_at": None,
                              "synced_at": None, "type": None if type_ in (None, "untyped") else type_}
    names = {"importance": "importance", "health": "health_score", "sync": "sync_status", "created": "created_at",
             "updated": "updated_at", "expires": "expires_at"}
    for part in parts[1:]:
        name, _, value = part.partition(" ")
        column = names.get(name)
        if column is None:
            continue  # site/agent, or words a person added
        value = value.strip()
        if value in ("-", "None", ""):
            values[column] = None
        elif column == "importance":
            values[column] = int(value) if value.lstrip("-").isdigit() else value
        elif column == "health_score":
            try:
                values[column] = float(value)
            except ValueError:
                values[column] = value
        else:
            values[column] = value
    values.setdefault("updated_at", values.get("created_at"))
    values["content"] = "\n".join(found["content"]).strip("\n")
    related = found.get("related")
    values["related_to"] = json.dumps(related) if related else None
    values["superseded_by"] = found.get("superseded")
    return Incoming(values, f"line {number}")


def count(text_lines: Iterable[str]) -> int:
    """How many memories a review document holds (its ``###`` headings)."""
    return sum(1 for line in text_lines if line.startswith("### "))
