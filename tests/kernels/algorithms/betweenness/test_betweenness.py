"""Betweenness: CPU vs networkx.betweenness_centrality to 1e-9; GPU vs CPU (``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.betweenness import BetweennessParams
from graphgpu.kernels.algorithms.betweenness.cpu import betweenness as betweenness_cpu
from graphgpu.kernels.algorithms.betweenness.gpu import betweenness as betweenness_gpu
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import from_nx


def sample_graph(seed: int) -> nx.Graph:
    """Pieces with cycles and many equal-length paths, a path, isolated nodes; sorted nodes."""
    g = nx.disjoint_union_all([nx.gnp_random_graph(30, 0.12, seed=seed), nx.grid_2d_graph(4, 5),
                               nx.path_graph(6), nx.empty_graph(3)])
    h = nx.Graph()
    h.add_nodes_from(range(g.number_of_nodes()))
    h.add_edges_from(g.edges())
    return h


def as_list(scores: dict) -> list[float]:
    return [scores[v] for v in sorted(scores)]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_exact_matches_networkx(seed: int, normalized: bool, endpoints: bool) -> None:
    g = sample_graph(seed)
    params = BetweennessParams(normalized=normalized, endpoints=endpoints)
    result = betweenness_cpu(from_nx(g), params, no_progress)
    expected = nx.betweenness_centrality(g, normalized=normalized, endpoints=endpoints)
    got = result.node_values["betweenness"]
    np.testing.assert_allclose(got, as_list(expected), rtol=1e-9, atol=1e-12)
    assert result.summary["exact"] and result.summary["sources"] == g.number_of_nodes()


@pytest.mark.parametrize("k", [1, 5, 20])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_sampled_matches_networkx_with_same_seed(k: int, normalized: bool,
                                                 endpoints: bool) -> None:
    g = sample_graph(3)
    params = BetweennessParams(k=k, seed=42, normalized=normalized, endpoints=endpoints)
    result = betweenness_cpu(from_nx(g), params, no_progress)
    expected = nx.betweenness_centrality(g, k=k, seed=42, normalized=normalized,
                                         endpoints=endpoints)
    np.testing.assert_allclose(result.node_values["betweenness"], as_list(expected),
                               rtol=1e-9, atol=1e-12, equal_nan=True)
    assert not result.summary["exact"] and result.summary["sources"] == k


def test_brute_force_on_a_tiny_graph() -> None:
    """Pair-by-pair fractions of shortest paths through each node, from the path lists."""
    g = nx.Graph([(0, 1), (1, 2), (0, 3), (3, 2), (2, 4), (4, 5), (1, 5)])
    n = g.number_of_nodes()
    brute = np.zeros(n)
    for s in range(n):
        for t in range(s + 1, n):
            paths = list(nx.all_shortest_paths(g, s, t))
            for v in range(n):
                if v not in (s, t):
                    brute[v] += sum(v in p for p in paths) / len(paths)
    result = betweenness_cpu(from_nx(g), BetweennessParams(normalized=False), no_progress)
    np.testing.assert_allclose(result.node_values["betweenness"], brute, rtol=1e-12)


def test_k_too_large_is_refused() -> None:
    with pytest.raises(InvalidInput):
        betweenness_cpu(from_nx(nx.path_graph(4)), BetweennessParams(k=5), no_progress)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("params", [BetweennessParams(), BetweennessParams(endpoints=True),
                                    BetweennessParams(k=50, seed=3, normalized=False)])
def test_gpu_equals_cpu(params: BetweennessParams) -> None:
    g = nx.disjoint_union(nx.barabasi_albert_graph(1500, 3, seed=2), nx.grid_2d_graph(20, 30))
    graph = from_nx(g)
    cpu = betweenness_cpu(graph, params, no_progress)
    gpu = betweenness_gpu(graph, params, no_progress)
    assert cpu.summary == gpu.summary
    np.testing.assert_allclose(gpu.node_values["betweenness"], cpu.node_values["betweenness"],
                               rtol=1e-9, atol=1e-15)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_matches_networkx() -> None:
    g = sample_graph(4)
    result = betweenness_gpu(from_nx(g), BetweennessParams(endpoints=True), no_progress)
    expected = nx.betweenness_centrality(g, endpoints=True)
    np.testing.assert_allclose(result.node_values["betweenness"], as_list(expected), rtol=1e-9)


def test_given_sources_match_networkx_sample() -> None:
    """Sources drawn as NetworkX draws them, from a graph whose node order is not sorted."""
    import random

    g = sample_graph(6)
    shuffled = nx.Graph()
    order = list(g.nodes())
    random.Random(1).shuffle(order)
    shuffled.add_nodes_from(order)
    shuffled.add_edges_from(g.edges())
    chosen = random.Random(9).sample(list(shuffled.nodes()), 7)
    graph = from_nx(g)
    params = BetweennessParams(sources=[int(graph.node_ids[v]) for v in chosen])
    result = betweenness_cpu(graph, params, no_progress)
    expected = nx.betweenness_centrality(shuffled, k=7, seed=9)
    np.testing.assert_allclose(result.node_values["betweenness"], as_list(expected), rtol=1e-9)
    with pytest.raises(InvalidInput):
        betweenness_cpu(graph, BetweennessParams(sources=[3, 3]), no_progress)
