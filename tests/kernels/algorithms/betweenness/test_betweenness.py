"""Betweenness: CPU vs networkx.betweenness_centrality to 1e-9 (undirected and directed, hops
and weights with ties); GPU vs CPU and NetworkX (``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.betweenness import BetweennessParams, hops
from graphgpu.kernels.algorithms.betweenness.cpu import betweenness as betweenness_cpu
from graphgpu.kernels.algorithms.betweenness.gpu import betweenness as betweenness_gpu
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import from_nx, spread


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


def _assert_backends_agree(graph: Graph, params: BetweennessParams) -> None:
    """The GPU's betweenness is the CPU's: the same summary, values equal to rounding."""
    cpu = betweenness_cpu(graph, params, no_progress)
    gpu = betweenness_gpu(graph, params, no_progress).host()
    assert cpu.summary == gpu.summary
    np.testing.assert_allclose(gpu.node_values["betweenness"], cpu.node_values["betweenness"],
                               rtol=1e-9, atol=1e-15)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("params", [BetweennessParams(), BetweennessParams(endpoints=True),
                                    BetweennessParams(k=50, seed=3, normalized=False)])
def test_gpu_equals_cpu(params: BetweennessParams) -> None:
    g = nx.disjoint_union(nx.barabasi_albert_graph(1500, 3, seed=2), nx.grid_2d_graph(20, 30))
    graph = from_nx(g)
    _assert_backends_agree(graph, params)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_gpu_sources_without_out_arcs_add_nothing(directed: bool, weighted: bool) -> None:
    """Sources that reach no node (isolated; sinks of a digraph) are left out of the batches:
    mixed with others the scores are the CPU's, and alone they are all zero."""
    g = nx.convert_node_labels_to_integers(sample_graph(5))
    if directed:
        g = nx.DiGraph([(u, v) if (u + v) % 3 else (v, u) for u, v in g.edges()])
        g.add_nodes_from(range(len(sample_graph(5))))
    weights = (np.random.default_rng(2).integers(1, 4, g.number_of_edges()).astype(np.float64)
               if weighted else None)
    graph = spread(g, 1, 0, weights)  # original id v: node v
    reach_none = [v for v in g if not (g.out_degree(v) if directed else g.degree(v))]
    assert len(reach_none) >= 3
    others = [v for v in g if v not in reach_none][:40]
    for endpoints in (False, True):
        _assert_backends_agree(graph, BetweennessParams(sources=reach_none + others,
                                                        endpoints=endpoints))
        alone = betweenness_gpu(graph, BetweennessParams(sources=reach_none,
                                                         endpoints=endpoints),
                                no_progress).host()
        assert not np.any(alone.node_values["betweenness"])


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_matches_networkx() -> None:
    g = sample_graph(4)
    result = betweenness_gpu(from_nx(g), BetweennessParams(endpoints=True), no_progress).host()
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


def weighted_graph(seed: int, directed: bool, tenths: bool = False) -> tuple[nx.Graph, np.ndarray]:
    """A random graph (or digraph) with a directed path and isolated nodes beside it, weighted
    1..3 (or 0.1..0.5: float sums whose ties NetworkX detects by exact comparison, as we do), so
    that many paths tie; the weights also as an array in ``g.edges()`` order."""
    g = nx.gnp_random_graph(36, 0.1, seed=seed, directed=directed)
    nx.add_path(g, [36, 37, 38, 39])
    g.add_nodes_from([40, 41])
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 6, g.number_of_edges()) / 10 if tenths else \
        rng.integers(1, 4, g.number_of_edges()).astype(np.float64)
    for (u, v), w in zip(g.edges(), weights, strict=True):
        g[u][v]["weight"] = w
    return g, weights


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize(("normalized", "endpoints"), [(True, False), (False, True),
                                                        (False, False)])
def test_directed_and_weighted_match_networkx(directed: bool, weighted: bool, normalized: bool,
                                              endpoints: bool) -> None:
    g, weights = weighted_graph(5, directed)
    params = BetweennessParams(normalized=normalized, endpoints=endpoints, weighted=weighted)
    result = betweenness_cpu(spread(g, 3, 1, weights), params, no_progress)
    expected = nx.betweenness_centrality(g, normalized=normalized, endpoints=endpoints,
                                         weight="weight" if weighted else None)
    np.testing.assert_allclose(result.node_values["betweenness"], as_list(expected), rtol=1e-9,
                               atol=1e-12)
    assert result.summary["weighted"] is weighted


@pytest.mark.parametrize("directed", [True, False])
def test_float_weight_ties_match_networkx(directed: bool) -> None:
    """0.1 + 0.2 != 0.3 in float64: the same exact comparison on both sides."""
    g, weights = weighted_graph(6, directed, tenths=True)
    result = betweenness_cpu(spread(g, 1, 0, weights), BetweennessParams(), no_progress)
    expected = nx.betweenness_centrality(g, weight="weight")
    np.testing.assert_allclose(result.node_values["betweenness"], as_list(expected), rtol=1e-9,
                               atol=1e-12)


@pytest.mark.parametrize("endpoints", [False, True])
@pytest.mark.parametrize("normalized", [True, False])
def test_directed_weighted_sample_matches_networkx(endpoints: bool, normalized: bool) -> None:
    g, weights = weighted_graph(7, True)
    params = BetweennessParams(k=10, seed=11, endpoints=endpoints, normalized=normalized)
    result = betweenness_cpu(spread(g, 1, 0, weights), params, no_progress)
    expected = nx.betweenness_centrality(g, k=10, seed=11, endpoints=endpoints,
                                         normalized=normalized, weight="weight")
    np.testing.assert_allclose(result.node_values["betweenness"], as_list(expected), rtol=1e-9,
                               atol=1e-12, equal_nan=True)


def test_brute_force_directed_weighted() -> None:
    """Ordered pairs, fractions of the weighted shortest paths (listed) through each node."""
    g = nx.DiGraph()
    g.add_weighted_edges_from([(0, 1, 1), (1, 2, 2), (0, 3, 2), (3, 2, 1), (2, 4, 1), (0, 4, 4),
                               (4, 5, 1), (5, 0, 3), (1, 5, 5), (3, 1, 1)])
    n = g.number_of_nodes()
    brute = np.zeros(n)
    for s in range(n):
        for t in range(n):
            if s == t or not nx.has_path(g, s, t):
                continue
            paths = list(nx.all_shortest_paths(g, s, t, weight="weight"))
            for v in range(n):
                if v not in (s, t):
                    brute[v] += sum(v in p for p in paths) / len(paths)
    weights = np.array([d["weight"] for _, _, d in g.edges(data=True)], dtype=np.float64)
    graph = spread(g, 1, 0, weights)
    result = betweenness_cpu(graph, BetweennessParams(normalized=False), no_progress)
    np.testing.assert_allclose(result.node_values["betweenness"], brute, rtol=1e-12)


def test_zero_weights_are_refused_and_hops_stay_available() -> None:
    g = nx.path_graph(4)
    graph = from_nx(g, np.array([1.0, 0.0, 2.0]))
    with pytest.raises(InvalidInput) as info:
        betweenness_cpu(graph, BetweennessParams(), no_progress)
    assert info.value.field == "weights"
    hops = betweenness_cpu(graph, BetweennessParams(weighted=False), no_progress)
    np.testing.assert_allclose(hops.node_values["betweenness"],
                               as_list(nx.betweenness_centrality(g)))


def gpu_cases() -> list[tuple[nx.Graph, np.ndarray | None]]:
    """A directed and an undirected graph of ~2000 nodes, hops and integer weights (ties)."""
    rng = np.random.default_rng(8)
    cases: list[tuple[nx.Graph, np.ndarray | None]] = []
    for g in (nx.gnp_random_graph(1500, 0.003, seed=3, directed=True),
              nx.disjoint_union(nx.barabasi_albert_graph(1500, 3, seed=2),
                                nx.grid_2d_graph(15, 20))):
        cases += [(g, None), (g, rng.integers(1, 5, g.number_of_edges()).astype(np.float64))]
    return cases


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("case", range(4))
@pytest.mark.parametrize("params", [BetweennessParams(k=300, seed=1),
                                    BetweennessParams(k=40, seed=2, endpoints=True,
                                                      normalized=False)])
def test_gpu_equals_cpu_directed_and_weighted(case: int, params: BetweennessParams) -> None:
    g, weights = gpu_cases()[case]
    graph = spread(nx.convert_node_labels_to_integers(g), 1, 0, weights)
    _assert_backends_agree(graph, params)



@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("case", range(4))
def test_gpu_hub_rows_and_batches_equal_cpu(case: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows over HUB_ROW arcs take the block-per-entry kernels (every step, in- and out-rows,
    hops and weights), in batches of 32 sources and a remainder."""
    from graphgpu.kernels.algorithms.betweenness import gpu as device

    g, weights = gpu_cases()[case]
    graph = spread(nx.convert_node_labels_to_integers(g), 1, 0, weights)
    monkeypatch.setattr(device, "HUB_ROW", 3)
    monkeypatch.setattr(hops, "HUB_ROW", 3)
    monkeypatch.setattr(device, "BATCH_BYTES", 40 * device.BYTES_PER_CELL * graph.n)
    assert device.batch_size(graph.n, 70) == 32
    _assert_backends_agree(graph, BetweennessParams(k=70, seed=4, endpoints=True))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("case", [0, 2])
@pytest.mark.parametrize("per_lane", [1, 2, 4])
def test_gpu_hops_hub_items_and_batches_equal_cpu(case: int, per_lane: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Hop counts: hub rows cut into several items (blocks), 1, 2 or 4 sources per lane (as
    memory allows), in full batches and a remainder."""
    g, _ = gpu_cases()[case]
    graph = spread(nx.convert_node_labels_to_integers(g), 1, 0, None)
    monkeypatch.setattr(hops, "HUB_ROW", 5)
    monkeypatch.setattr(hops, "CHUNK", 3)
    arcs = int(graph.indices.shape[0])
    monkeypatch.setattr(hops, "BATCH_BYTES", hops.LANES * per_lane * (16 * graph.n + arcs // 8))
    assert hops.per_lane(graph.n, arcs, 70) == per_lane
    for params in (BetweennessParams(k=70, seed=4, endpoints=True),
                   BetweennessParams(k=45, seed=5, normalized=False)):
        _assert_backends_agree(graph, params)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_hops_deep_levels_equal_cpu(directed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search deeper than byte levels hold is run again with 4-byte levels (a path of 300
    nodes with a grid on each end: past 254 levels as they are, past 7 with the limit cut)."""
    g = nx.disjoint_union_all([nx.grid_2d_graph(6, 6), nx.path_graph(300),
                               nx.grid_2d_graph(5, 7)])
    g = nx.convert_node_labels_to_integers(g)
    g.add_edges_from([(35, 36), (335, 336)])
    if directed:
        g = nx.DiGraph(g)
        g.remove_edges_from([(u, v) for u, v in list(g.edges()) if (u * 7 + v) % 5 == 0 and u > v])
    graph = spread(g, 1, 0, None)
    params = BetweennessParams(k=40, seed=6, endpoints=True)
    _assert_backends_agree(graph, params)
    monkeypatch.setattr(hops, "BYTE_LEVELS", 7)
    _assert_backends_agree(graph, params)

@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("tenths", [False, True])
def test_gpu_weighted_matches_networkx(directed: bool, tenths: bool) -> None:
    g, weights = weighted_graph(9, directed, tenths)
    result = betweenness_gpu(spread(g, 3, 1, weights), BetweennessParams(endpoints=True),
                             no_progress).host()
    expected = nx.betweenness_centrality(g, endpoints=True, weight="weight")
    np.testing.assert_allclose(result.node_values["betweenness"], as_list(expected), rtol=1e-9,
                               atol=1e-12)


def test_gpu_estimate_counts_the_batch_state() -> None:
    # A job's device memory is admitted from its estimate: the hop batches' state grows with
    # the sources per lane (k up to 128 sources in one batch), past the graph's own bytes.
    from graphgpu.kernels.algorithms.betweenness import estimate_betweenness

    graph = from_nx(nx.barabasi_albert_graph(2000, 3, seed=1))
    few = estimate_betweenness(graph, BetweennessParams(k=32, seed=1), "gpu").device_bytes
    many = estimate_betweenness(graph, BetweennessParams(k=128, seed=1), "gpu").device_bytes
    assert graph.nbytes() + 32 * 16 * graph.n < few < many
    assert many - graph.nbytes() >= 128 * 16 * graph.n
    assert estimate_betweenness(graph, BetweennessParams(k=32), "cpu").device_bytes is None
