"""Louvain and Leiden: modularity checked with NetworkX, valid and connected partitions, planted
partitions recovered; GPU partitions equal to the CPU's (``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError

from graphgpu.kernels.algorithms.communities import CommunityParams, driver
from graphgpu.kernels.algorithms.communities import cpu as host
from graphgpu.kernels.algorithms.communities import gpu as device
from graphgpu.kernels.algorithms.communities.driver import modularity
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import original

CPU = {"louvain": host.louvain, "leiden": host.leiden}
GPU = {"louvain": device.louvain, "leiden": device.leiden}


def to_graph(g: nx.Graph, weight: str | None = None) -> Graph:
    """Our graph of a NetworkX graph on nodes 0..n-1 (internal id i is node i)."""
    edges = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    weights = None if weight is None else np.array([d[weight] for _, _, d in g.edges(data=True)])
    graph, _ = build_graph(original(edges[:, 0]), original(edges[:, 1]), weights,
                           extra_nodes=original(np.arange(g.number_of_nodes())))
    return graph


def sets_of(community: np.ndarray) -> list[set[int]]:
    return [set(np.flatnonzero(community == c).tolist()) for c in range(community.max() + 1)]


def sample_graphs() -> list[tuple[str, nx.Graph, str | None]]:
    rng = np.random.default_rng(4)
    lfr = nx.LFR_benchmark_graph(250, 3, 1.5, 0.2, average_degree=6, min_community=20, seed=10)
    lfr = nx.convert_node_labels_to_integers(nx.Graph(lfr))
    lfr.remove_edges_from(nx.selfloop_edges(lfr))
    weighted = nx.gnm_random_graph(120, 400, seed=3)
    for u, v in weighted.edges():
        weighted[u][v]["weight"] = float(rng.uniform(0.1, 3.0))
    pieces = nx.disjoint_union_all([nx.karate_club_graph(), nx.path_graph(7), nx.empty_graph(3),
                                    nx.les_miserables_graph()])
    pieces = nx.Graph(nx.convert_node_labels_to_integers(pieces).edges())
    pieces.add_nodes_from(range(34 + 7 + 3 + 77))
    return [("lfr", lfr, None), ("weighted", weighted, "weight"), ("pieces", pieces, None)]


@pytest.mark.parametrize("algorithm", ["louvain", "leiden"])
@pytest.mark.parametrize("resolution", [1.0, 0.5, 2.0])
@pytest.mark.parametrize("case", range(3))
def test_modularity_and_validity(algorithm: str, resolution: float, case: int) -> None:
    _, g, weight = sample_graphs()[case]
    graph = to_graph(g, weight)
    result = CPU[algorithm](graph, CommunityParams(resolution=resolution), no_progress)
    community = result.node_values["community"]
    assert community.shape == (g.number_of_nodes(),)
    # numbered 0..k-1 in order of each community's smallest member
    firsts = [int(np.flatnonzero(community == c)[0]) for c in range(community.max() + 1)]
    assert firsts == sorted(firsts) and result.summary["communities"] == len(firsts)
    expected = nx.community.modularity(g, sets_of(community), weight=weight or "weight",
                                       resolution=resolution)
    assert result.summary["modularity"] == pytest.approx(expected, abs=1e-12)
    assert result.summary["modularity"] == modularity(graph, community, resolution)


@pytest.mark.parametrize("case", range(3))
def test_leiden_communities_are_connected(case: int) -> None:
    _, g, weight = sample_graphs()[case]
    for seed in range(3):
        result = host.leiden(to_graph(g, weight), CommunityParams(seed=seed), no_progress)
        for members in sets_of(result.node_values["community"]):
            assert nx.is_connected(g.subgraph(members))


@pytest.mark.parametrize("algorithm", ["louvain", "leiden"])
@pytest.mark.parametrize("seed", [1, 2])
def test_planted_partition_is_recovered(algorithm: str, seed: int) -> None:
    g = nx.planted_partition_graph(5, 30, 0.5, 0.01, seed=seed)
    result = CPU[algorithm](to_graph(g), CommunityParams(seed=seed), no_progress)
    planted = [set(range(30 * b, 30 * (b + 1))) for b in range(5)]
    found = sets_of(result.node_values["community"])
    assert sorted(map(sorted, found)) == sorted(map(sorted, planted))
    assert result.summary["levels"] >= 1


@pytest.mark.parametrize("algorithm", ["louvain", "leiden"])
def test_quality_at_least_networkx_on_karate_and_lfr(algorithm: str) -> None:
    for _, g, weight in sample_graphs()[:2]:
        ours = CPU[algorithm](to_graph(g, weight), CommunityParams(), no_progress)
        theirs = nx.community.modularity(
            g, nx.community.louvain_communities(g, weight=weight or "weight", seed=0),
            weight=weight or "weight")
        assert ours.summary["modularity"] >= theirs - 0.01


def test_resolution_changes_granularity_and_seed_is_deterministic() -> None:
    _, g, _ = sample_graphs()[0]
    graph = to_graph(g)
    coarse = host.louvain(graph, CommunityParams(resolution=0.2), no_progress)
    fine = host.louvain(graph, CommunityParams(resolution=5.0), no_progress)
    assert coarse.summary["communities"] < fine.summary["communities"]
    again = host.louvain(graph, CommunityParams(resolution=0.2), no_progress)
    assert np.array_equal(coarse.node_values["community"], again.node_values["community"])


def test_edge_cases() -> None:
    graph, _ = build_graph(np.zeros(0, np.int64), np.zeros(0, np.int64),
                           extra_nodes=np.arange(4))
    result = host.louvain(graph, CommunityParams(), no_progress)
    assert result.summary["communities"] == 4 and result.summary["modularity"] == 0.0
    negative, _ = build_graph(np.array([0, 1]), np.array([1, 2]), np.array([1.0, -1.0]))
    with pytest.raises(InvalidInput):
        host.leiden(negative, CommunityParams(), no_progress)
    with pytest.raises(ValidationError):
        CommunityParams(resolution=0)


def test_dense_labels_and_community_totals_as_by_sorting() -> None:
    """The driver's renumbering and community totals (no sorts) give what the sorts gave."""
    rng = np.random.default_rng(3)
    for n, spread in ((1, 1), (50, 5), (1000, 1000), (1000, 37)):
        labels = rng.integers(0, spread, n).astype(np.int32)
        dense, count = driver._dense(np, labels)
        distinct, inverse = np.unique(labels, return_inverse=True)
        np.testing.assert_array_equal(dense, inverse)
        assert dense.dtype == np.int32 and count == distinct.shape[0]
        k = rng.integers(0, 2 ** 52 // n, n).astype(np.int64)
        totals = np.zeros(n, dtype=np.int64)
        np.add.at(totals, labels, k)
        np.testing.assert_array_equal(driver._community_totals(np, labels, k, n), totals)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("algorithm", ["louvain", "leiden"])
@pytest.mark.parametrize("resolution", [1.0, 0.5])
def test_gpu_partition_equals_cpu(algorithm: str, resolution: float) -> None:
    hubs = nx.barabasi_albert_graph(4000, 3, seed=3)  # hubs decide in a block, not a warp
    rng = np.random.default_rng(3)
    for hub, degree in ((0, 2500), (1, 1500), (7, 1100)):
        hubs.add_edges_from((hub, int(v)) for v in rng.choice(4000, degree, replace=False)
                            if v != hub)
    cases = [*sample_graphs(), ("ba", nx.barabasi_albert_graph(3000, 4, seed=1), None),
             ("hubs", hubs, None)]
    for _, g, weight in cases:
        graph = to_graph(g, weight)
        params = CommunityParams(resolution=resolution, seed=2)
        cpu = CPU[algorithm](graph, params, no_progress)
        gpu = GPU[algorithm](graph, params, no_progress)
        assert cpu.summary == gpu.summary
        assert np.array_equal(cpu.node_values["community"], gpu.node_values["community"])


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_components_and_aggregate_equal_cpu() -> None:
    """Union-find labels and the hash-table aggregation against the CPU's SciPy labels and
    sorted aggregation, on a graph with hubs and communities of many pieces."""
    import cupy as cp

    g = nx.barabasi_albert_graph(3000, 3, seed=5)
    g.add_edges_from((0, v) for v in range(5, 3000, 2))
    rng = np.random.default_rng(5)
    ends = rng.integers(0, 200_000, (2, 400_000))  # deep union-find trees, many threads at once
    large, _ = build_graph(original(ends[0]), original(ends[1]))
    for graph, count in ((to_graph(g), 1), (to_graph(g), 7), (to_graph(g), 400), (large, 3)):
        comm = rng.integers(0, count, graph.n).astype(np.int32)
        indptr, indices = cp.asarray(graph.indptr), cp.asarray(graph.indices)
        labels = device.components(indptr, indices, cp.asarray(comm))
        assert np.array_equal(labels.get(), host.components(graph.indptr, graph.indices, comm))
        w = rng.integers(1, 9, graph.indices.shape[0]).astype(np.int64)
        ours = device.aggregate(indptr, indices, cp.asarray(w), cp.asarray(comm), count)
        want = host.aggregate(graph.indptr, graph.indices, w, comm, count)
        assert np.array_equal(ours[0].get(), want[0])
        heads, weights = ours[1].get(), ours[2].get()
        for row in range(count):  # the same arcs and weights, in any order within a row
            lo, hi = int(want[0][row]), int(want[0][row + 1])
            got = sorted(zip(heads[lo:hi].tolist(), weights[lo:hi].tolist(), strict=True))
            assert got == list(zip(want[1][lo:hi].tolist(), want[2][lo:hi].tolist(), strict=True))
