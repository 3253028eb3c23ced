"""The semantica context module (seed ``002_…``): a JSON dump of ``MemoryItem``s and the graph.

The dump is one JSON object: ``memory_items`` (also ``items`` or ``memories``) — each with
``content``, ``timestamp``, ``metadata``, ``embedding``, ``entities`` — and the graph's node and
edge dictionaries under ``nodes``/``edges`` (or ``graph: {nodes, edges}``). A bare JSON array of
memory items is read too.

* a **MemoryItem** -> a ``context`` memory, importance 5, created at its ``timestamp``; its
  metadata ``tags``/``topics`` and ``source`` become a ``Tags:`` line; entities naming a graph
  node relate it to that node's memory; the embedding is not imported;
* a **node** -> a ``fact`` memory, importance 5: ``properties.content`` (or the id), then
  ``Node: id (type)``;
* an **edge** -> a ``related_to`` link between its two nodes' memories, both ways.

Ids derive from the node id, or from an item's content and timestamp.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .. import timestamps
from .rows import BadRow, Incoming, derived_id
from .sources import ImportOptions, join_blocks, memory, sql_time, tags_line

KIND = "semantica"
_ITEM_KEYS = ("memory_items", "items", "memories")


def parts(data: Any) -> tuple[list, list, list] | None:
    """(items, nodes, edges) of a dump, or ``None`` when ``data`` is not one."""
    if isinstance(data, list):
        if data and all(isinstance(i, dict) and "content" in i and "timestamp" in i for i in data):
            return data, [], []
        return None
    if not isinstance(data, dict):
        return None
    graph = data.get("graph") if isinstance(data.get("graph"), dict) else data
    items = next((data[k] for k in _ITEM_KEYS if k in data), [])
    nodes, edges = graph.get("nodes", []), graph.get("edges", [])
    if not any(k in data for k in _ITEM_KEYS) and "nodes" not in graph and "edges" not in graph:
        return None
    for name, value in (("memory_items", items), ("nodes", nodes), ("edges", edges)):
        if not isinstance(value, list):
            raise BadRow(name, name, "is not a JSON array")
    return items, nodes, edges


def count(data: Any) -> int:
    """How many memories the dump will give."""
    found = parts(data)
    return len(found[0]) + len(found[1]) if found else 0


def read(data: Any, options: ImportOptions) -> Iterator[Incoming | BadRow]:
    """Memories from a semantica dump (already parsed JSON)."""
    found = parts(data)
    if found is None:
        return
    items, nodes, edges = found
    node_ids: dict[str, str] = {}
    for number, node in enumerate(nodes):
        if isinstance(node, dict) and node.get("id") not in (None, ""):
            node_ids[str(node["id"])] = derived_id("semantica-node", node["id"])
        else:
            yield BadRow(f"nodes[{number}]", "id", "a node needs an id")
    links: dict[str, list[str]] = {}
    for number, edge in enumerate(edges):
        where = f"edges[{number}]"
        if not isinstance(edge, dict):
            yield BadRow(where, "edge", "is not a JSON object")
            continue
        missing = next((f for f in ("source_id", "target_id") if str(edge.get(f)) not in node_ids), None)
        if missing:
            yield BadRow(where, missing, f"{edge.get(missing)!r} is not a node of the dump")
            continue
        source, target = node_ids[str(edge["source_id"])], node_ids[str(edge["target_id"])]
        links.setdefault(source, []).append(target)
        links.setdefault(target, []).append(source)
    stamp = timestamps.now_sql()
    for number, item in enumerate(items):
        where = f"memory_items[{number}]"
        if not isinstance(item, dict):
            yield BadRow(where, "item", "is not a JSON object")
            continue
        created = sql_time(item.get("timestamp"))
        metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        related = [node_ids[str(e.get("id", e.get("name")))] for e in item.get("entities") or []
                   if isinstance(e, dict) and str(e.get("id", e.get("name"))) in node_ids]
        content = item.get("content")
        text = join_blocks(content, tags_line(_metadata_tags(metadata))) if isinstance(content, str) else content
        id_ = derived_id("semantica-item", content, item.get("timestamp"))
        yield Incoming(memory(id_, text, "context", 5, created, None, options, related), where, may_repeat=True)
    for number, node in enumerate(nodes):
        if not isinstance(node, dict) or str(node.get("id")) not in node_ids:
            continue
        properties = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        text = properties.get("content") or properties.get("name") or str(node["id"])
        id_ = node_ids[str(node["id"])]
        content = join_blocks(str(text), f"Node: {node['id']} ({node.get('type') or 'node'})")
        yield Incoming(memory(id_, content, "fact", 5, stamp, None, options, links.get(id_)), f"nodes[{number}]")


def _metadata_tags(metadata: dict) -> list[tuple[str, str]]:
    tags = []
    for key in ("tags", "topics"):
        value = metadata.get(key)
        values = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        tags += [("topic", str(v)) for v in values]
    if isinstance(metadata.get("source"), str):
        tags.append(("topic", metadata["source"]))
    return tags


def load(text: str) -> Any:
    """The parsed dump, or ``None`` when the text is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None
