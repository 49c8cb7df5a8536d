"""strongly_connected_components: CPU against SciPy (connection='strong') and brute force;
GPU against CPU node for node (``-m gpu``)."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from graphgpu.kernels.algorithms.scc import SCC, SccParams
from graphgpu.kernels.algorithms.scc.cpu import scc as scc_cpu
from graphgpu.kernels.algorithms.scc.gpu import scc as scc_gpu
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import spread


def to_graph(g: nx.Graph, weighted: bool = False) -> Graph:
    return spread(g, 5, 2, np.linspace(1.0, 2.0, g.number_of_edges()) if weighted else None)


def cases() -> dict[str, nx.Graph]:
    chain = nx.DiGraph([(i, i + 1) for i in range(30)])
    cycles = nx.DiGraph()
    for start in range(0, 40, 8):  # rings of 8 chained one way: 5 components of 8
        cycles.add_edges_from((start + i, start + (i + 1) % 8) for i in range(8))
        if start:
            cycles.add_edge(start - 8, start)
    return {
        "random_sparse": nx.gnp_random_graph(200, 0.012, seed=1, directed=True),
        "random_dense": nx.gnp_random_graph(120, 0.03, seed=2, directed=True),
        "chain": chain, "cycles": cycles,
        "undirected": nx.disjoint_union(nx.gnp_random_graph(60, 0.04, seed=3),
                                        nx.empty_graph(4)),
        "edgeless": nx.empty_graph(6, create_using=nx.DiGraph),
        "scale_free": nx.DiGraph(nx.scale_free_graph(300, seed=4)),
    }


def scipy_labels(graph: Graph) -> np.ndarray:
    """SciPy's strong components, renumbered by smallest member."""
    n = graph.n
    matrix = sp.csr_array((np.ones(graph.indices.shape[0]), graph.indices, graph.indptr),
                          shape=(n, n))
    _, raw = csgraph.connected_components(matrix, directed=True, connection="strong")
    first = {}
    for c in raw.tolist():
        first.setdefault(c, len(first))
    return np.array([first[c] for c in raw.tolist()], dtype=np.int64)


@pytest.mark.parametrize("name", sorted(cases()))
def test_matches_scipy(name: str) -> None:
    graph = to_graph(cases()[name], weighted=name == "random_dense")
    result = scc_cpu(graph, SccParams(), no_progress)
    expected = scipy_labels(graph)
    np.testing.assert_array_equal(result.node_values["component"], expected)
    sizes = np.bincount(expected)
    assert result.summary == {"count": sizes.shape[0], "largest": int(sizes.max()),
                              "singletons": int((sizes == 1).sum())}
    np.testing.assert_array_equal(result.arrays["sizes"], sizes)


def test_brute_force_on_tiny_graphs() -> None:
    """Every digraph on 4 nodes: same component iff each reaches the other."""
    pairs = [(u, v) for u in range(4) for v in range(4) if u != v]
    for mask in range(0, 1 << len(pairs), 7):
        g = nx.DiGraph()
        g.add_nodes_from(range(4))
        g.add_edges_from(p for i, p in enumerate(pairs) if mask >> i & 1)
        component = scc_cpu(to_graph(g), SccParams(), no_progress).node_values["component"]
        reach = {u: nx.descendants(g, u) | {u} for u in range(4)}
        for u, v in itertools.product(range(4), repeat=2):
            assert (component[u] == component[v]) == (v in reach[u] and u in reach[v])


def test_direction_matters() -> None:
    one_way = scc_cpu(to_graph(nx.DiGraph([(0, 1), (1, 2)])), SccParams(), no_progress)
    both = scc_cpu(to_graph(nx.DiGraph([(0, 1), (1, 2), (2, 0)])), SccParams(), no_progress)
    assert one_way.summary["count"] == 3 and both.summary["count"] == 1


def test_registered_native() -> None:
    assert SCC.name == "strongly_connected_components" and SCC.directed == "native"


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("name", sorted(cases()))
def test_gpu_matches_cpu(name: str) -> None:
    graph = to_graph(cases()[name])
    cpu, gpu = (fn(graph, SccParams(), no_progress) for fn in (scc_cpu, scc_gpu))
    assert gpu.summary == cpu.summary
    np.testing.assert_array_equal(gpu.node_values["component"], cpu.node_values["component"])
    np.testing.assert_array_equal(gpu.arrays["sizes"], cpu.arrays["sizes"])


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_larger_graph_matches_scipy() -> None:
    rng = np.random.default_rng(2)
    n = 50_000
    src, dst = rng.integers(0, n, 120_000), rng.integers(0, n, 120_000)
    graph, _ = build_graph(src, dst, directed=True)
    gpu = scc_gpu(graph, SccParams(), no_progress)
    np.testing.assert_array_equal(gpu.node_values["component"], scipy_labels(graph))
