"""The engine's modules import each other without cycles (ARCHITECTURE.md, "Layers").

import-linter's layers contracts state the order of the layers; this finds any cycle between two
modules of core, whatever layers they sit in (an import made inside a function counts too; one
under ``if TYPE_CHECKING:`` names a type only and does not)."""

from __future__ import annotations

import grimp


def cycles(graph: grimp.ImportGraph, modules: list[str]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    edges = {m: [n for n in graph.find_modules_directly_imported_by(m) if n in modules] for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def test_core_has_no_import_cycles() -> None:
    graph = grimp.build_graph("ora_desktop", exclude_type_checking_imports=True)
    core = sorted(m for m in graph.modules if m.startswith("ora_desktop.core."))
    assert cycles(graph, core) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(name)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert cycles(graph, ["a.x", "a.y", "a.z"]) == [["a.x", "a.y"]]
