"""The graph's layout (no Qt): boxes never overlap, and lines keep off boxes that are not theirs."""

from __future__ import annotations

from ora_desktop.gui.graph.layout import crossings, overlaps, relax, ring_positions


def star_with_cross_links(n: int) -> tuple[list[tuple[str, int]], list[tuple[str, str]]]:
    """A memory with n neighbours, each with one of its own, and links between some neighbours."""
    depths = [("o", 0)] + [(f"n{i}", 1) for i in range(n)] + [(f"f{i}", 2) for i in range(n)]
    links = [("o", f"n{i}") for i in range(n)] + [(f"n{i}", f"f{i}") for i in range(n)]
    links += [(f"n{i}", f"n{(i + 2) % n}") for i in range(0, n, 3)]
    return depths, links


def test_a_neighbourhood_is_laid_out_without_overlaps_or_lines_through_boxes() -> None:
    for n in (4, 6, 9):
        depths, links = star_with_cross_links(n)
        ring = ring_positions("o", depths)
        placed = relax("o", depths, links)
        assert placed["o"] == (0.0, 0.0)
        assert overlaps(placed) == []
        assert crossings(placed, links) == [], (n, len(crossings(ring, links)))
        assert relax("o", depths, links) == placed  # the same graph, the same picture


def test_the_ring_layout_alone_ran_lines_through_boxes() -> None:
    """What the relaxation fixes (this is the layout the window drew before)."""
    depths, links = star_with_cross_links(9)
    assert crossings(ring_positions("o", depths), links)
