"""sssp on directed graphs: paths along out-edges as NetworkX's Dijkstra, ``in`` and ``both``;
parents by the family's rule on in-rows; GPU against CPU exactly (``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.sssp import SsspParams
from graphgpu.kernels.algorithms.sssp.cpu import sssp as sssp_cpu
from graphgpu.kernels.algorithms.sssp.gpu import sssp as sssp_gpu
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress


def weighted_digraph(n: int, p: float, seed: int, integer: bool) -> nx.DiGraph:
    g = nx.gnp_random_graph(n, p, seed=seed, directed=True)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.integers(0, 4)) if integer else float(rng.uniform(0.1, 5))
    return g


CASES = {"uniform": weighted_digraph(60, 0.06, 1, False),
         "small_ints": weighted_digraph(60, 0.06, 2, True),  # zero weights, many ties
         "big": weighted_digraph(2000, 0.004, 3, False)}


def directed(g: nx.DiGraph) -> Graph:
    src, dst, w = (np.array(c) for c in zip(*g.edges(data="weight"), strict=True))
    graph, _ = build_graph(src.astype(np.int64), dst.astype(np.int64), w.astype(np.float64),
                           extra_nodes=np.array(list(g), dtype=np.int64), directed=True)
    return graph


def check_parents(graph: Graph, view: nx.DiGraph | nx.Graph, dist: np.ndarray,
                  parent: np.ndarray, source: int) -> None:
    """Every parent is a tight in-arc; following parents reaches the source."""
    ids = {int(v): i for i, v in enumerate(graph.node_ids)}
    for v, i in ids.items():
        if not np.isfinite(dist[i]):
            assert parent[i] == -1
        elif v == source:
            assert parent[i] == i
        else:
            u = int(graph.node_ids[parent[i]])
            assert view.has_edge(u, v) and dist[parent[i]] + view[u][v]["weight"] == dist[i]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_cpu_sssp_follows_the_direction(name: str, direction: str) -> None:
    g = CASES[name]
    view = {"out": g, "in": g.reverse(copy=True), "both": g.to_undirected()}[direction]
    if direction == "both":  # reciprocal arcs merge keeping the smaller weight
        for u, v in view.edges:
            view[u][v]["weight"] = min(g[a][b]["weight"] for a, b in ((u, v), (v, u))
                                       if g.has_edge(a, b))
    graph = directed(g)
    for source in (0, 5):
        result = sssp_cpu(graph, SsspParams(source=source, direction=direction), no_progress)
        dist = result.node_values["distance"]
        want = nx.single_source_dijkstra_path_length(view, source)
        got = {int(graph.node_ids[i]): float(d) for i, d in enumerate(dist) if np.isfinite(d)}
        assert got.keys() == want.keys()
        assert all(got[v] == pytest.approx(want[v], abs=1e-9) for v in want)
        check_parents(graph, view, dist, result.node_values["parent"], source)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("direction", ["out", "in", "both"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_sssp_directed_matches_cpu(name: str, direction: str, dtype: str) -> None:
    graph = directed(CASES[name])
    params = SsspParams(source=0, direction=direction, dtype=dtype)
    cpu, gpu = sssp_cpu(graph, params, no_progress), sssp_gpu(graph, params, no_progress)
    for field in ("distance", "parent"):
        np.testing.assert_array_equal(gpu.node_values[field], cpu.node_values[field])
