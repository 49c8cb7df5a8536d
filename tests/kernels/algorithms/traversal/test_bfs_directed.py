"""bfs on directed graphs: out-edges as NetworkX follows them, ``in`` and ``both``; parents by
the family's rule (smallest in-neighbour one level up); GPU against CPU exactly (``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.traversal import BfsParams
from graphgpu.kernels.algorithms.traversal.cpu import bfs as bfs_cpu
from graphgpu.kernels.algorithms.traversal.gpu import bfs as bfs_gpu
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress


def directed(g: nx.DiGraph) -> Graph:
    src, dst = (np.array(c, dtype=np.int64) for c in zip(*g.edges, strict=True))
    graph, _ = build_graph(src, dst, extra_nodes=np.array(list(g), dtype=np.int64),
                           directed=True)
    return graph


def cases() -> dict[str, nx.DiGraph]:
    return {"gnp": nx.gnp_random_graph(60, 0.05, seed=1, directed=True),
            "dag": nx.DiGraph((u, v) for u, v in nx.gnp_random_graph(50, 0.1, seed=2).edges
                              if u < v),
            "cycle_tail": nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (5, 4)]),
            # large enough for the GPU's bottom-up steps (dense frontiers)
            "big": nx.gnp_random_graph(3000, 0.004, seed=3, directed=True)}


CASES = cases()


def expected(g: nx.DiGraph, source: int, direction: str) -> tuple[dict, dict]:
    """NetworkX's levels in the view ``direction``, and the parent rule by brute force."""
    view = {"out": g, "in": g.reverse(copy=True), "both": g.to_undirected()}[direction]
    level = nx.single_source_shortest_path_length(view, source)
    into = view.pred if view.is_directed() else view.adj
    parent = {v: min((u for u in into[v] if level.get(u) == d - 1), default=None)
              for v, d in level.items() if d > 0}
    return level, {**parent, source: source}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_cpu_bfs_follows_the_direction(name: str, direction: str) -> None:
    g = CASES[name]
    graph = directed(g)
    for source in sorted(g)[:3]:
        result = bfs_cpu(graph, BfsParams(source=source, direction=direction), no_progress)
        level, parent = expected(g, source, direction)
        got = result.node_values["level"]
        assert {int(graph.node_ids[i]): int(d) for i, d in enumerate(got) if d >= 0} == level
        got_parent = graph.to_original(result.node_values["parent"])
        assert {int(graph.node_ids[i]): int(p) for i, p in enumerate(got_parent)
                if p >= 0} == parent


def test_directed_bfs_refuses_pruning_on() -> None:
    graph = directed(CASES["cycle_tail"])
    with pytest.raises(InvalidInput) as refused:
        bfs_cpu(graph, BfsParams(source=0, prune="on"), no_progress)
    assert refused.value.field == "prune"
    both = bfs_cpu(graph, BfsParams(source=0, prune="on", direction="both"), no_progress)
    assert both.summary["reached"] == 6


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_gpu_bfs_directed_matches_cpu(name: str, direction: str) -> None:
    graph = directed(CASES[name])
    for sources in ([0], [1, max(CASES[name])]):
        params = BfsParams(sources=sources, direction=direction)
        cpu, gpu = bfs_cpu(graph, params, no_progress), bfs_gpu(graph, params, no_progress).host()
        for field in ("level", "parent"):
            np.testing.assert_array_equal(gpu.node_values[field], cpu.node_values[field])
        assert gpu.summary == cpu.summary


def test_directed_parents_pass_matches_the_cpu_rule() -> None:
    from graphgpu.kernels.algorithms.traversal.cpu import bfs_graph
    from graphgpu.kernels.algorithms.traversal.driver import directed_parents

    graph = directed(CASES["big"])
    sources = np.array([0, 11], dtype=np.int64)
    level, parent = bfs_graph(graph, sources)
    np.testing.assert_array_equal(
        directed_parents(np, graph.in_indptr, graph.in_indices, level, sources), parent)
