"""core_number and k_core: CPU against NetworkX and brute force; GPU against CPU (``-m gpu``)."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.kcore import (
    CORE_NUMBER,
    K_CORE,
    CoreParams,
    KCoreParams,
)
from graphgpu.kernels.algorithms.kcore import cpu as host
from graphgpu.kernels.algorithms.kcore import gpu as device
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import skewed_arcs, spread
from tests.support.results import assert_backends_agree


def to_graph(g: nx.Graph, weighted: bool = False) -> Graph:
    return spread(g, 4, 1, np.linspace(0.5, 3.0, g.number_of_edges()) if weighted else None)


def cases() -> dict[str, nx.Graph]:
    layered = nx.complete_graph(7)  # a 6-core with a 2-core tail and pendants
    layered.add_edges_from([(6, 7), (7, 8), (8, 6), (8, 9), (9, 10)])
    return {
        "random": nx.gnp_random_graph(150, 0.05, seed=1),
        "dense": nx.gnp_random_graph(60, 0.3, seed=2),
        "layered": layered,
        "disconnected": nx.disjoint_union_all([nx.complete_graph(5), nx.cycle_graph(6),
                                               nx.star_graph(4), nx.empty_graph(3)]),
        "barabasi": nx.barabasi_albert_graph(300, 4, seed=3),
        "edgeless": nx.empty_graph(5),
    }


def nx_cores(g: nx.Graph) -> np.ndarray:
    core = nx.core_number(g)
    return np.array([core[v] for v in sorted(g.nodes)], dtype=np.int32)


@pytest.mark.parametrize("name", sorted(cases()))
def test_core_number_matches_networkx(name: str) -> None:
    g = cases()[name]
    result = host.core_number(to_graph(g, weighted=name == "dense"), CoreParams(), no_progress)
    expected = nx_cores(g)
    np.testing.assert_array_equal(result.node_values["core_number"], expected)
    assert result.summary == {"max_core": int(expected.max()),
                              "max_core_size": int((expected == expected.max()).sum())}


@pytest.mark.parametrize("name", sorted(cases()))
@pytest.mark.parametrize("k", [None, 0, 2, 3])
def test_k_core_matches_networkx(name: str, k: int | None) -> None:
    g = cases()[name]
    result = host.k_core(to_graph(g), KCoreParams(k=k), no_progress)
    sub = nx.k_core(g, k)
    member = np.array([v in sub for v in sorted(g.nodes)])
    np.testing.assert_array_equal(result.node_values["in_core"], member)
    assert result.summary["nodes"] == sub.number_of_nodes()
    assert result.summary["edges"] == sub.number_of_edges()
    if k is not None:
        assert result.summary["k"] == k


def test_brute_force_on_tiny_graphs() -> None:
    """Core number = the largest k with a vertex set holding v of minimum inner degree >= k."""
    pairs = list(itertools.combinations(range(5), 2))
    for mask in range(0, 1 << len(pairs), 11):
        g = nx.Graph([p for i, p in enumerate(pairs) if mask >> i & 1])
        g.add_nodes_from(range(5))
        core = host.core_number(to_graph(g), CoreParams(), no_progress).node_values["core_number"]
        for v in range(5):
            best = 0
            for size in range(1, 6):
                for subset in itertools.combinations(range(5), size):
                    if v in subset:
                        h = g.subgraph(subset)
                        best = max(best, min(d for _, d in h.degree()))
            assert core[v] == best


def test_directed_is_symmetrised() -> None:
    assert CORE_NUMBER.directed == "symmetrise" and K_CORE.directed == "symmetrise"
    g = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 1)])
    graph = to_graph(g).undirected()
    result = host.core_number(graph, CoreParams(), no_progress)
    np.testing.assert_array_equal(result.node_values["core_number"], [2, 2, 2])


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("name", sorted(cases()))
def test_gpu_matches_cpu(name: str) -> None:
    graph = to_graph(cases()[name])
    assert_backends_agree(graph, CoreParams(), host.core_number, device.core_number,
                          ("core_number",))
    for k in (None, 2):
        assert_backends_agree(graph, KCoreParams(k=k), host.k_core, device.k_core, ("in_core",))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_larger_graph_matches_cpu() -> None:
    _, src, dst = skewed_arcs(4, 30_000, 300_000, 1.0, 5)
    graph, _ = build_graph(src, dst)
    np.testing.assert_array_equal(
        device.core_number(graph, CoreParams(), no_progress).node_values["core_number"],
        host.core_number(graph, CoreParams(), no_progress).node_values["core_number"])
