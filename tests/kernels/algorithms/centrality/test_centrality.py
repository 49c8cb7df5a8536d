"""DACCER and closeness: CPU vs brute force, NetworkX and SciPy; GPU vs CPU (``-m gpu``)."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats

from graphgpu.kernels.algorithms.centrality import ClosenessParams, DaccerParams
from graphgpu.kernels.algorithms.centrality.cpu import CPU_BYTES_PER_NODE, cpu_workers
from graphgpu.kernels.algorithms.centrality.cpu import closeness as closeness_cpu
from graphgpu.kernels.algorithms.centrality.cpu import daccer as daccer_cpu
from graphgpu.kernels.algorithms.centrality.driver import rank_agreement, ranking
from graphgpu.kernels.algorithms.centrality.gpu import closeness as closeness_gpu
from graphgpu.kernels.algorithms.centrality.gpu import daccer as daccer_gpu
from graphgpu.kernels.algorithms.common.bitset_bfs import WORD_BYTES_PER_NODE, batch_words
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import JobCanceled
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import get_algorithm, no_progress
from graphgpu.kernels.generators import generate
from tests.support.graphs import from_nx


def to_nx(graph: Graph) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    rows = np.repeat(np.arange(graph.n), graph.degrees())
    g.add_edges_from(zip(rows.tolist(), graph.indices.tolist(), strict=True))
    return g


def ba_graph(n: int, m: int, seed: int = 1) -> Graph:
    edges = generate("barabasi_albert", {"n": n, "m": m, "seed": seed}, "cpu")
    graph, _ = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    return graph


def brute_volumes(g: nx.Graph, radius: int) -> np.ndarray:
    """Degree sum over each node's distinct r-ball, by one BFS per node."""
    return np.array([sum(g.degree(u) for u in nx.single_source_shortest_path_length(g, v, radius))
                     for v in range(g.number_of_nodes())], dtype=np.int64)


def pieces(seed: int) -> nx.Graph:
    """Random sparse pieces with cycles, plus isolated nodes, on shuffled ids."""
    rng = np.random.default_rng(seed)
    parts = [nx.gnp_random_graph(k, p, seed=seed + i)
             for i, (k, p) in enumerate([(60, 0.06), (30, 0.12), (12, 0.3)])]
    g = nx.disjoint_union_all([*parts, nx.cycle_graph(4), nx.cycle_graph(5), nx.empty_graph(4)])
    return nx.relabel_nodes(g, dict(enumerate(rng.permutation(g.number_of_nodes()).tolist())))


CASES = {
    "pieces_1": pieces(1),
    "pieces_2": pieces(2),
    # Two paths between many pairs: counting walks instead of nodes double counts them.
    "grid": nx.grid_2d_graph(7, 6),
    "cycles": nx.disjoint_union_all([nx.cycle_graph(k) for k in (3, 4, 5, 6, 7)]),
    "complete_bipartite": nx.complete_bipartite_graph(3, 5),
    "dense": nx.gnp_random_graph(40, 0.3, seed=3),
    "star": nx.star_graph(25),
    "path": nx.path_graph(20),
    "single_node": nx.empty_graph(1),
    "isolated_only": nx.empty_graph(5),
}


def relabelled(g: nx.Graph) -> nx.Graph:
    return nx.convert_node_labels_to_integers(g, ordering="sorted")


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("radius", [0, 1, 2, 3, 5])
def test_volumes_match_brute_force(name: str, radius: int) -> None:
    g = relabelled(CASES[name])
    graph = from_nx(g)
    result = daccer_cpu(graph, DaccerParams(radius=radius), no_progress)
    assert result.node_values["volume"].dtype == np.int64
    np.testing.assert_array_equal(result.node_values["volume"], brute_volumes(g, radius))


def test_radius_zero_is_degree_and_cycles_count_nodes_once() -> None:
    graph = from_nx(nx.cycle_graph(4))
    assert daccer_cpu(graph, DaccerParams(radius=0), no_progress).node_values["volume"].tolist() \
        == [2, 2, 2, 2]
    # C4 at radius 2: the opposite node is two walks away but one node: 4 nodes x degree 2.
    assert daccer_cpu(graph, DaccerParams(radius=2), no_progress).node_values["volume"].tolist() \
        == [8, 8, 8, 8]


def test_ba_graph_against_brute_force() -> None:
    graph = ba_graph(1500, 3)
    g = to_nx(graph)
    for radius in (2, 3):
        volume = daccer_cpu(graph, DaccerParams(radius=radius), no_progress).node_values["volume"]
        np.testing.assert_array_equal(volume, brute_volumes(g, radius))


def test_ranking_ties_by_id_and_top() -> None:
    # Two disjoint triangles and a pendant pair: ties everywhere.
    g = nx.disjoint_union_all([nx.cycle_graph(3), nx.path_graph(2), nx.cycle_graph(3)])
    graph = from_nx(g)
    result = daccer_cpu(graph, DaccerParams(radius=1, top=4), no_progress)
    volume = result.node_values["volume"]
    assert volume.tolist() == [6, 6, 6, 2, 2, 6, 6, 6]
    assert result.arrays["ranking"].tolist() == [0, 1, 2, 5, 6, 7, 3, 4]
    assert result.arrays["top"].tolist() == [0, 1, 2, 5]
    assert set(result.node_id_fields) == {"ranking", "top"}
    assert graph.to_original(result.arrays["top"]).tolist() == [3, 10, 17, 38]
    assert result.summary == {"radius": 1, "top_volume": 6}
    assert ranking(np.array([1.0, 3.0, 3.0, 2.0])).tolist() == [1, 2, 3, 0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_closeness_matches_networkx(name: str) -> None:
    g = relabelled(CASES[name])
    graph = from_nx(g)
    n = g.number_of_nodes()
    wf = closeness_cpu(graph, ClosenessParams(), no_progress)
    expected = nx.closeness_centrality(g)
    # Same integer sums, same float operations as NetworkX: equal, not just close.
    np.testing.assert_array_equal(wf.node_values["closeness"], [expected[i] for i in range(n)])
    assert wf.summary["max"] == max(expected.values())
    harmonic = closeness_cpu(graph, ClosenessParams(harmonic=True), no_progress)
    expected = nx.harmonic_centrality(g)
    np.testing.assert_allclose(harmonic.node_values["closeness"], [expected[i] for i in range(n)],
                               rtol=1e-12, atol=0)
    assert harmonic.summary["harmonic"] is True


def test_closeness_over_several_batches() -> None:
    # 1,100 sources: three CPU batches of 512, the last one partial.
    graph = ba_graph(1100, 2, seed=5)
    g = to_nx(graph)
    values = closeness_cpu(graph, ClosenessParams(), no_progress).node_values["closeness"]
    expected = nx.closeness_centrality(g)
    np.testing.assert_array_equal(values, [expected[i] for i in range(graph.n)])


def test_rank_agreement_matches_scipy() -> None:
    rng = np.random.default_rng(7)
    volume = rng.integers(0, 30, 400)  # many ties
    closeness = volume + rng.normal(0, 8, 400)
    closeness[::7] = closeness[0]
    got = rank_agreement(volume, closeness)
    assert got["spearman"] == pytest.approx(stats.spearmanr(volume, closeness).statistic,
                                            rel=1e-12)
    assert got["kendall"] == pytest.approx(stats.kendalltau(volume, closeness).statistic,
                                           rel=1e-12)
    for key, share in (("top1pct_overlap", 0.01), ("top10pct_overlap", 0.1)):
        k = math.ceil(share * 400)
        by_volume = sorted(range(400), key=lambda i: (-volume[i], i))[:k]
        by_closeness = sorted(range(400), key=lambda i: (-closeness[i], i))[:k]
        assert got[key] == len(set(by_volume) & set(by_closeness)) / k
    constant = rank_agreement(np.ones(5, np.int64), np.arange(5.0))
    assert constant["spearman"] is None and constant["kendall"] is None


def test_compare_closeness_summary() -> None:
    g = relabelled(CASES["pieces_1"])
    graph = from_nx(g)
    result = daccer_cpu(graph, DaccerParams(radius=2, compare_closeness=True), no_progress)
    closeness = nx.closeness_centrality(g)
    expected = rank_agreement(result.node_values["volume"],
                              np.array([closeness[i] for i in range(graph.n)]))
    assert result.summary == {"radius": 2, "top_volume": int(result.node_values["volume"].max()),
                              **expected}
    get_algorithm("daccer").result_model.model_validate(result.summary)
    ring = from_nx(nx.cycle_graph(64))  # the worker's warm-up graph: everything ties
    summary = daccer_cpu(ring, DaccerParams(compare_closeness=True), no_progress).summary
    assert summary["spearman"] is None and summary["top1pct_overlap"] == 1.0


def test_memory_bound_on_hub_heavy_graphs() -> None:
    for n in (1000, 30_000, 10**6):
        for budget in (1 << 20, 5 << 20, 1 << 30):
            assert batch_words(n, budget) * WORD_BYTES_PER_NODE * n <= max(
                budget, WORD_BYTES_PER_NODE * n)
            assert cpu_workers(n, budget) * CPU_BYTES_PER_NODE * n <= max(
                budget, CPU_BYTES_PER_NODE * n)
    # A 1 MiB bound leaves one daccer thread on 70,000 nodes, and one 64-source word per
    # closeness batch on a star of 30,000; the answers do not change.
    graph = ba_graph(70_000, 2)
    assert cpu_workers(graph.n, 1 << 20) == 1
    small = daccer_cpu(graph, DaccerParams(radius=2, max_batch_bytes=1 << 20), no_progress)
    full = daccer_cpu(graph, DaccerParams(radius=2), no_progress)
    np.testing.assert_array_equal(small.node_values["volume"], full.node_values["volume"])
    n = 30_000
    assert batch_words(n, 1 << 20) == 1
    star = from_nx(nx.star_graph(n - 1))
    values = closeness_cpu(star, ClosenessParams(max_batch_bytes=1 << 20),
                           no_progress).node_values["closeness"]
    assert values[0] == 1.0
    assert np.allclose(values[1:], (n - 1) / (1 + 2 * (n - 2)), rtol=1e-15)


def test_params() -> None:
    assert DaccerParams().model_dump() == {"radius": 2, "top": 100, "compare_closeness": False,
                                           "max_batch_bytes": 1 << 30}
    for bad in ({"radius": 11}, {"radius": -1}, {"top": -1}, {"max_batch_bytes": 1000},
                {"sources": [1]}):
        with pytest.raises(ValidationError):
            DaccerParams.model_validate(bad)
    with pytest.raises(ValidationError):
        ClosenessParams.model_validate({"radius": 2})
    assert get_algorithm("daccer").params_model is DaccerParams
    assert get_algorithm("closeness").params_model is ClosenessParams


def test_progress_can_cancel() -> None:
    def cancel(fraction: float, message: str = "") -> None:
        raise JobCanceled("canceled")

    graph = from_nx(nx.path_graph(10))
    with pytest.raises(JobCanceled):
        daccer_cpu(graph, DaccerParams(radius=2), cancel)
    with pytest.raises(JobCanceled):
        closeness_cpu(graph, ClosenessParams(), cancel)


# ------------------------------------------------------------------------------------------------
# GPU (device machine only)
# ------------------------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


def gpu_graphs() -> dict[str, Graph]:
    return {
        "pieces": from_nx(relabelled(CASES["pieces_2"])),
        "grid": from_nx(relabelled(CASES["grid"])),
        "gnp": from_nx(nx.gnp_random_graph(3000, 0.002, seed=9)),
        "ba_1": ba_graph(5000, 1),
        "ba_4": ba_graph(40_000, 4),  # every ball tier and hub batches at radius 2 and 3
        "star": from_nx(nx.star_graph(20_000)),  # leaves' balls exceed the largest tier
    }


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("radius", [0, 1, 2, 3])
@pytest.mark.parametrize("budget", [1 << 30, 1 << 20])
def test_gpu_volumes_equal_cpu(radius: int, budget: int) -> None:
    for name, graph in gpu_graphs().items():
        params = DaccerParams(radius=radius, max_batch_bytes=budget)
        cpu = daccer_cpu(graph, params, no_progress)
        gpu = daccer_gpu(graph, params, no_progress)
        np.testing.assert_array_equal(gpu.node_values["volume"], cpu.node_values["volume"],
                                      err_msg=f"{name} r={radius}")
        np.testing.assert_array_equal(gpu.arrays["ranking"], cpu.arrays["ranking"])
        assert gpu.summary == cpu.summary


@pytest.mark.gpu
@needs_gpu
def test_gpu_closeness_equal_cpu() -> None:
    for name, graph in gpu_graphs().items():
        if name == "ba_4":
            continue  # 40,000 CPU sources: slow in CI terms, covered by the bench
        for budget in (1 << 30, 1 << 20):
            for harmonic in (False, True):
                params = ClosenessParams(harmonic=harmonic, max_batch_bytes=budget)
                cpu = closeness_cpu(graph, params, no_progress).node_values["closeness"]
                gpu = closeness_gpu(graph, params, no_progress).node_values["closeness"]
                if harmonic:
                    np.testing.assert_allclose(gpu, cpu, rtol=1e-12, atol=0, err_msg=name)
                else:
                    np.testing.assert_array_equal(gpu, cpu, err_msg=name)


@pytest.mark.gpu
@needs_gpu
def test_gpu_compare_closeness_summary() -> None:
    graph = ba_graph(2000, 3)
    params = DaccerParams(radius=2, compare_closeness=True)
    assert daccer_gpu(graph, params, no_progress).summary == \
        daccer_cpu(graph, params, no_progress).summary
