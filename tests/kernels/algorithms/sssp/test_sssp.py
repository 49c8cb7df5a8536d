"""sssp: CPU against SciPy's Dijkstra and the parent rule; GPU against CPU exactly (``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from pydantic import ValidationError
from scipy.sparse import csgraph

from graphgpu.kernels.algorithms.sssp import SsspParams
from graphgpu.kernels.algorithms.sssp.cpu import sssp as sssp_cpu
from graphgpu.kernels.algorithms.sssp.gpu import sssp as sssp_gpu
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import get_algorithm, no_progress
from tests.support.graphs import from_nx as weighted
from tests.support.graphs import original


def with_tails(seed: int) -> nx.Graph:
    g = nx.gnp_random_graph(50, 0.08, seed=seed)
    g.add_edges_from([(0, 50), (50, 51), (51, 52)])  # a pendant chain
    return nx.disjoint_union_all([g, nx.star_graph(6), nx.empty_graph(3)])


def cases() -> dict[str, tuple[nx.Graph, np.ndarray | None]]:
    rng = np.random.default_rng(3)
    out: dict[str, tuple[nx.Graph, np.ndarray | None]] = {}
    for name, g in {"tails": with_tails(1), "tree": nx.random_labeled_tree(60, seed=2),
                    "dense": nx.gnp_random_graph(40, 0.3, seed=4),
                    "path": nx.path_graph(25)}.items():
        m = g.number_of_edges()
        out[f"{name}_uniform"] = (g, rng.uniform(0.1, 10.0, m))
        out[f"{name}_small_ints"] = (g, rng.integers(0, 4, m).astype(float))  # zeros, many ties
        out[f"{name}_equal"] = (g, np.full(m, 2.5))
    out["unweighted"] = (with_tails(5), None)
    out["single_node"] = (nx.empty_graph(1), None)
    return out


CASES = cases()


def check(graph: Graph, source: int, dtype: str, result) -> None:
    dist, parent = result.node_values["distance"], result.node_values["parent"]
    assert dist.dtype == np.dtype(dtype) and parent.dtype == np.int64
    weights = np.ones(graph.indices.shape[0]) if graph.weights is None else graph.weights
    # SciPy treats explicit zeros as missing edges: shift to a tiny epsilon-free check instead.
    matrix = sp.csr_matrix((np.where(weights == 0, 1e-300, weights), graph.indices,
                            graph.indptr), shape=(graph.n, graph.n))
    expected = csgraph.dijkstra(matrix, directed=True, indices=source)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(dist, expected, rtol=tol, atol=1e-200)
    w = weights.astype(dtype)
    hops = np.full(graph.n, -1)
    hops[source] = 0
    order = np.argsort(dist, kind="stable")
    assert parent[source] == source
    for v in range(graph.n):
        if not np.isfinite(dist[v]):
            assert parent[v] == -1
    # The parents form a tree of tight arcs: walking up from any node reaches the source.
    for v in order:
        if v == source or not np.isfinite(dist[v]):
            continue
        u = parent[v]
        row = slice(graph.indptr[v], graph.indptr[v + 1])
        j = np.flatnonzero(graph.indices[row] == u)
        assert j.size == 1 and dist[u] + w[row][j[0]] == dist[v], v
    for v in range(graph.n):
        seen, x = 0, v
        while np.isfinite(dist[v]) and x != source:
            x, seen = parent[x], seen + 1
            assert seen <= graph.n, f"parent cycle through {v}"


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cpu_matches_scipy(name: str, dtype: str) -> None:
    g, weights = CASES[name]
    graph = weighted(g, weights)
    for source in {0, g.number_of_nodes() - 1}:
        result = sssp_cpu(graph, SsspParams(source=original(source), dtype=dtype), no_progress)
        check(graph, source, dtype, result)
        finite = np.isfinite(result.node_values["distance"])
        assert result.summary["reached"] == int(finite.sum())


def test_parent_rule_on_a_zero_weight_plateau() -> None:
    # Source 2; 0 and 1 both at distance 1, joined by a zero edge: 0's parent must be 2 (one
    # hop), not 1, although 1 < 2 and 1 -> 0 is tight.
    g = nx.Graph([(2, 0), (2, 1), (0, 1)])
    graph = weighted(g, np.array([1.0, 1.0, 0.0]))
    result = sssp_cpu(graph, SsspParams(source=original(2)), no_progress)
    assert result.node_values["parent"].tolist() == [2, 2, 2]
    # Without the hop rule the smallest tight predecessor (1 for 0, 0 for 1) would be a cycle.


def test_errors_and_registration() -> None:
    assert get_algorithm("sssp").node_params == ("source",)
    graph = weighted(nx.path_graph(3), np.array([1.0, -2.0]))
    with pytest.raises(InvalidInput) as info:
        sssp_cpu(graph, SsspParams(source=original(0)), no_progress)
    assert info.value.field == "weights"
    with pytest.raises(ValidationError):
        SsspParams.model_validate({"source": 0, "dtype": "float16"})


needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


def rmat_weighted(scale: int, seed: int) -> Graph:
    from graphgpu.kernels.generators import generate

    edges = generate("rmat", {"scale": scale, "edge_factor": 16, "seed": seed})
    rng = np.random.default_rng(seed)
    graph, _ = build_graph(edges.src, edges.dst, rng.uniform(0.0, 1.0, edges.src.shape[0]),
                           extra_nodes=np.arange(edges.num_nodes))
    return graph


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gpu_matches_cpu(dtype: str) -> None:
    graphs = {name: weighted(*case) for name, case in CASES.items()}
    graphs["rmat16"] = rmat_weighted(16, 1)
    rng = np.random.default_rng(9)
    ints = rmat_weighted(14, 2)
    graphs["rmat14_int_weights"] = Graph(ints.indptr, ints.indices, ints.node_ids,
                                         np.floor(ints.weights * 3))  # zeros and ties
    for name, graph in graphs.items():
        for source in {0, graph.n - 1, int(rng.integers(graph.n))}:
            params = SsspParams(source=int(graph.node_ids[source]), dtype=dtype)
            cpu, gpu = sssp_cpu(graph, params, no_progress), sssp_gpu(graph, params, no_progress)
            assert cpu.summary == gpu.summary, name
            for key in ("distance", "parent"):
                np.testing.assert_array_equal(cpu.node_values[key], gpu.node_values[key],
                                              err_msg=f"{name} {key}")
