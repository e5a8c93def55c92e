"""No import cycles between modules, in the product or in the benches.

import-linter's contracts (pyproject.toml) keep the layers' arrows pointing inward, which rules out
cycles between layers but not between two modules of one layer. This finds every cycle at module
level (TYPE_CHECKING imports included: they tie the modules together for a reader all the same),
with grimp, the graph import-linter itself builds.
"""

from __future__ import annotations

import grimp
import pytest


def strongly_connected(graph: grimp.ImportGraph) -> list[set[str]]:
    """Tarjan's components of the module graph, iteratively (the graph is deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph.modules:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


@pytest.fixture(scope="module")
def cycles() -> list[frozenset[str]]:
    graph = grimp.build_graph("limitguard", "bench", cache_dir=None)
    return [frozenset(component) for component in strongly_connected(graph) if len(component) > 1]


def test_no_module_imports_itself_round_a_cycle(cycles: list[frozenset[str]]) -> None:
    assert [sorted(cycle) for cycle in cycles] == []


def test_the_search_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.z")
    graph.add_import(importer="a.z", imported="a.x")
    assert [component for component in strongly_connected(graph) if len(component) > 1] == [
        {"a.x", "a.y", "a.z"}
    ]
