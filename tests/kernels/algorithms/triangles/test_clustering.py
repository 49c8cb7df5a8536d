"""clustering (directed and weighted): CPU against NetworkX's clustering and average_clustering
(unweighted bit for bit, weighted to rounding), chunking, the estimate's bound; GPU against CPU
(``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.triangles import CLUSTERING, ClusteringParams, driver
from graphgpu.kernels.algorithms.triangles import cpu as host
from graphgpu.kernels.algorithms.triangles import gpu as device
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import skewed_arcs, spread


def weigh(g: nx.Graph, seed: int, low: float = 0.1) -> np.ndarray:
    """Random weights in ``[low, 3)`` set on ``g``'s edges, in ``g.edges()`` order."""
    weights = np.random.default_rng(seed).uniform(low, 3.0, g.number_of_edges())
    for (u, v), w in zip(g.edges(), weights, strict=True):
        g[u][v]["weight"] = float(w)
    return weights


def cases(directed: bool) -> dict[str, nx.Graph]:
    kind = nx.DiGraph if directed else nx.Graph
    k5 = nx.complete_graph(5, create_using=kind)
    k5.remove_edge(1, 2)
    return {
        "random": nx.gnp_random_graph(80, 0.1, seed=1, directed=directed),
        "dense": nx.gnp_random_graph(30, 0.5, seed=2, directed=directed),
        "clustered": nx.DiGraph(nx.powerlaw_cluster_graph(150, 3, 0.6, seed=3)) if directed
        else nx.powerlaw_cluster_graph(150, 3, 0.6, seed=3),
        "k5_less_an_arc": k5,
        "sparse": nx.gnp_random_graph(60, 0.03, seed=4, directed=directed),
        "edgeless": nx.empty_graph(4, create_using=kind),
    }


def run(g: nx.Graph, weights: np.ndarray | None, fn=host.clustering):
    return fn(spread(g, 6, 5, weights), ClusteringParams(weighted=weights is not None),
              no_progress)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("name", sorted(cases(False)))
def test_unweighted_is_networkx_bit_for_bit(directed: bool, name: str) -> None:
    g = cases(directed)[name]
    if directed and name == "clustered":  # keep one direction of some edges
        g.remove_edges_from([(u, v) for u, v in list(g.edges()) if (u + v) % 3 == 0 and u < v])
    result = run(g, None)
    expected = nx.clustering(g)
    np.testing.assert_array_equal(result.node_values["clustering"],
                                  [expected[v] for v in sorted(g)])
    assert result.summary["average_clustering"] == pytest.approx(nx.average_clustering(g),
                                                                 rel=1e-12, abs=1e-15)
    assert result.summary["max_weight"] is None


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("name", ["random", "dense", "clustered", "k5_less_an_arc"])
def test_weighted_is_networkx_to_rounding(directed: bool, name: str) -> None:
    g = cases(directed)[name]
    weights = weigh(g, 5)
    result = run(g, weights)
    expected = nx.clustering(g, weight="weight")
    np.testing.assert_allclose(result.node_values["clustering"],
                               [expected[v] for v in sorted(g)], rtol=1e-12, atol=1e-15)
    assert result.summary["max_weight"] == weights.max()
    assert result.summary["average_clustering"] == pytest.approx(
        nx.average_clustering(g, weight="weight"), rel=1e-12)


@pytest.mark.parametrize("directed", [False, True])
def test_signed_weights_and_a_zero_largest_weight(directed: bool) -> None:
    g = nx.gnp_random_graph(40, 0.3, seed=6, directed=directed)
    weights = weigh(g, 7, low=-2.0)
    result = run(g, weights)
    expected = nx.clustering(g, weight="weight")
    assert (result.node_values["clustering"] < 0).any()
    np.testing.assert_allclose(result.node_values["clustering"],
                               [expected[v] for v in sorted(g)], rtol=1e-12, atol=1e-15)
    nonpositive = -np.abs(weights)
    nonpositive[np.argmax(weights)] = 0.0
    with pytest.raises(InvalidInput, match="largest, which is 0"):
        run(g, nonpositive)


def test_chunks_of_rows_give_the_same_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    g = nx.gnp_random_graph(120, 0.08, seed=8, directed=True)
    weights = weigh(g, 9)
    whole = run(g, weights)
    monkeypatch.setattr(host, "CLUSTERING_WEDGES_PER_CHUNK", 40)
    chunked = run(g, weights)
    np.testing.assert_allclose(chunked.node_values["clustering"],
                               whole.node_values["clustering"], rtol=1e-13, atol=1e-16)
    np.testing.assert_array_equal(run(g, None).node_values["clustering"],
                                  [nx.clustering(g)[v] for v in sorted(g)])


def test_row_chunks_cover_the_rows_within_the_budget() -> None:
    wedges = np.array([3, 0, 5, 50, 1, 1, 1, 2, 0, 9], dtype=np.float64)
    chunks = driver.row_chunks(wedges, 6)
    assert chunks[0][0] == 0 and chunks[-1][1] == wedges.size
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:], strict=False))
    for start, end in chunks:
        assert end - start == 1 or wedges[start:end].sum() <= 6
    assert driver.row_chunks(np.zeros(0), 6) == []


def test_estimate_bounds_the_products() -> None:
    """The estimate's wedges bound the entries of ``S @ S`` (what the chunks compute)."""
    import scipy.sparse

    g = nx.gnp_random_graph(100, 0.1, seed=10, directed=True)
    graph = spread(g, 1, 0)
    s = scipy.sparse.csr_matrix(nx.to_scipy_sparse_array(g, nodelist=sorted(g)))
    s = s + s.T
    estimate = CLUSTERING.estimate(graph, ClusteringParams(), "cpu")
    wedges = float(estimate.detail.split()[1].replace(",", ""))
    assert (s @ s).nnz <= wedges
    assert estimate.seconds > 0 and estimate.host_bytes > graph.nbytes()
    assert CLUSTERING.directed == "native"


def skewed(directed: bool) -> Graph:
    rng, src, dst = skewed_arcs(11, 4_000, 60_000, 1.0, 4)
    graph, _ = build_graph(src, dst, rng.uniform(0.1, 2.0, src.size), directed=directed)
    return graph


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("name", ["random", "clustered", "k5_less_an_arc", "edgeless"])
def test_gpu_matches_cpu(directed: bool, name: str) -> None:
    g = cases(directed)[name]
    cpu, gpu = (run(g, None, fn) for fn in (host.clustering, device.clustering))
    assert gpu.summary == cpu.summary
    for field in ("triangles", "clustering"):
        np.testing.assert_array_equal(gpu.node_values[field], cpu.node_values[field])
    weights = weigh(g, 12)
    cpu, gpu = (run(g, weights, fn) for fn in (host.clustering, device.clustering))
    for field in ("triangles", "clustering"):
        np.testing.assert_allclose(gpu.node_values[field], cpu.node_values[field], rtol=1e-12,
                                   atol=1e-15)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_skewed_graph_in_chunks_matches_cpu(directed: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Hub rows and many chunks (a small budget): the same counts as the CPU's."""
    graph = skewed(directed)
    monkeypatch.setattr(device, "CLUSTERING_WEDGES_PER_CHUNK", 1 << 16)
    for weighted in (False, True):
        params = ClusteringParams(weighted=weighted)
        cpu, gpu = (fn(graph, params, no_progress) for fn in (host.clustering,
                                                              device.clustering))
        assert cpu.node_values["triangles"].sum() > 0
        if weighted:
            np.testing.assert_allclose(gpu.node_values["clustering"],
                                       cpu.node_values["clustering"], rtol=1e-11, atol=1e-15)
        else:
            assert gpu.summary == cpu.summary
            np.testing.assert_array_equal(gpu.node_values["triangles"],
                                          cpu.node_values["triangles"])
            np.testing.assert_array_equal(gpu.node_values["clustering"],
                                          cpu.node_values["clustering"])
