"""Where each box of the graph goes: a force-directed layout that keeps boxes and lines apart.

Starts from rings by distance (the memory in the middle, one hop away on the first ring …) and
relaxes: linked boxes pull together to a comfortable length, every box pushes every other away
(measured in box units, so wide boxes keep their width apart), and a box near a line that is not
its own is pushed off it, so no line runs through another memory's box. Plain numpy, no Qt, the
same result for the same graph (no randomness).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

NODE_W, NODE_H = 190.0, 48.0
RING = 230.0
LINK = 260.0  # the length a link settles at
STEPS = 220


def ring_positions(origin: str, depths: Sequence[tuple[str, int]]) -> dict[str, tuple[float, float]]:
    """Rings by distance, in the order the walk found the memories (neighbours stay close)."""
    rings: dict[int, list[str]] = {}
    for node, depth in depths:
        rings.setdefault(depth, []).append(node)
    positions = {origin: (0.0, 0.0)}
    for depth, members in sorted(rings.items()):
        if depth == 0:
            continue
        radius = max(RING * depth, len(members) * (NODE_W + 20) / (2 * math.pi))
        offset = -math.pi / 2 + (0.35 if depth % 2 == 0 else 0.0)
        for i, node in enumerate(members):
            angle = offset + 2 * math.pi * i / len(members)
            positions[node] = (radius * math.cos(angle), radius * math.sin(angle) * 0.72)
    return positions


def relax(origin: str, depths: Sequence[tuple[str, int]], links: Sequence[tuple[str, str]],
          steps: int | None = None) -> dict[str, tuple[float, float]]:
    """Positions for ``depths`` (id, distance) joined by ``links`` (id pairs), ``origin`` at (0, 0).
    Fewer steps for large graphs (each step compares every box with every box and line)."""
    start = ring_positions(origin, depths)
    names = list(start)
    if len(names) < 2:
        return start
    if steps is None:
        steps = STEPS if len(names) <= 40 else max(40, STEPS * 40 // len(names))
    index = {name: i for i, name in enumerate(names)}
    pos = np.array([start[n] for n in names], dtype=float)
    pairs = np.array(sorted({tuple(sorted((index[a], index[b]))) for a, b in links
                             if a in index and b in index and a != b}), dtype=int).reshape(-1, 2)
    fixed = index[origin]
    scale = np.array([1.0 / (NODE_W + 40), 1.0 / (NODE_H + 40)])  # distances in box units
    for step in range(steps):
        cool = 1.0 - step / steps
        delta = pos[:, None, :] - pos[None, :, :]
        box = np.abs(delta) * scale
        dist = np.sqrt((box ** 2).sum(-1)) + np.eye(len(names))
        push = (delta / dist[..., None] ** 2 * (dist < 2.5)[..., None]).sum(1) * 60.0
        pull = np.zeros_like(pos)
        if len(pairs):
            vec = pos[pairs[:, 1]] - pos[pairs[:, 0]]
            length = np.linalg.norm(vec, axis=1) + 1e-9
            force = ((length - LINK) / length)[:, None] * vec * 0.08
            np.add.at(pull, pairs[:, 0], force)
            np.add.at(pull, pairs[:, 1], -force)
            pull += _off_lines(pos, pairs, scale) * 40.0
        move = (push + pull) * (0.2 + cool)
        limit = 40.0 * (0.1 + cool)
        norms = np.linalg.norm(move, axis=1, keepdims=True) + 1e-9
        move = np.where(norms > limit, move / norms * limit, move)
        move[fixed] = 0.0
        pos += move
    pos -= pos[fixed]
    return {name: (float(x), float(y)) for name, (x, y) in zip(names, pos, strict=True)}


def _off_lines(pos: np.ndarray, pairs: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """For each box lying near a line between two other boxes: a push away from the line, and the
    opposite push shared by the line's two ends (so a fixed box moves the line instead). A box
    exactly on a line is pushed to one side of it (its left), so the picture never sticks there."""
    a, b = pos[pairs[:, 0]], pos[pairs[:, 1]]
    ab = b - a
    t = np.clip(((pos[:, None, :] - a[None]) * ab[None]).sum(-1) / ((ab ** 2).sum(-1)[None] + 1e-9), 0.0, 1.0)
    nearest = a[None] + t[..., None] * ab[None]
    away = pos[:, None, :] - nearest
    side = np.stack([-ab[:, 1], ab[:, 0]], axis=-1) / (np.linalg.norm(ab, axis=1, keepdims=True) + 1e-9)
    flat = np.linalg.norm(away, axis=-1) < 1.0
    away = np.where(flat[..., None], side[None] * 1.0, away)
    dist = np.sqrt(((np.abs(away) * scale) ** 2).sum(-1)) + 1e-9
    index = np.arange(len(pos))[:, None]
    own = (index == pairs[None, :, 0]) | (index == pairs[None, :, 1])
    near = (dist < 0.75) & ~own
    force = away / dist[..., None] ** 2 * near[..., None] * 0.02
    out = force.sum(1)
    back = -force.sum(0)  # per line
    ends = np.zeros_like(pos)
    weight = (t * near).sum(0) / (near.sum(0) + 1e-9)
    np.add.at(ends, pairs[:, 0], back * (1.0 - weight)[:, None])
    np.add.at(ends, pairs[:, 1], back * weight[:, None])
    return out + ends


def crossings(positions: dict[str, tuple[float, float]],
              links: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(a, b, box) for every line a–b that runs through a third memory's box."""
    found = []
    for a, b in links:
        if a not in positions or b not in positions or a == b:
            continue
        (x1, y1), (x2, y2) = positions[a], positions[b]
        for name, (x, y) in positions.items():
            if name in (a, b):
                continue
            if _segment_hits_box(x1, y1, x2, y2, x - NODE_W / 2, y - NODE_H / 2, x + NODE_W / 2, y + NODE_H / 2):
                found.append((a, b, name))
    return found


def overlaps(positions: dict[str, tuple[float, float]]) -> list[tuple[str, str]]:
    """Pairs of boxes that overlap."""
    items = list(positions.items())
    return [(a, b) for i, (a, (xa, ya)) in enumerate(items) for b, (xb, yb) in items[i + 1:]
            if abs(xa - xb) < NODE_W and abs(ya - yb) < NODE_H]


def _segment_hits_box(x1: float, y1: float, x2: float, y2: float,
                      left: float, top: float, right: float, bottom: float) -> bool:
    """Liang–Barsky: whether the segment crosses the rectangle."""
    t0, t1 = 0.0, 1.0
    dx, dy = x2 - x1, y2 - y1
    for p, q in ((-dx, x1 - left), (dx, right - x1), (-dy, y1 - top), (dy, bottom - y1)):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
        if t0 > t1:
            return False
    return True
