"""apsp: CPU against SciPy's csgraph, pruning on/off, Phase III; GPU equal to CPU (-m gpu)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from graphgpu.kernels.algorithms.apsp import ApspParams, estimate, plan
from graphgpu.kernels.algorithms.apsp import gpu as apsp_gpu_module
from graphgpu.kernels.algorithms.apsp.cpu import apsp as apsp_cpu
from graphgpu.kernels.algorithms.apsp.gpu import apsp as apsp_gpu
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import from_nx as to_graph
from tests.support.graphs import original


def pendant_chains(seed: int) -> nx.Graph:
    """A random core with a chain of 6 (peeled over several rounds) and a tree on a tree."""
    g = nx.gnp_random_graph(40, 0.1, seed=seed)
    nx.add_path(g, [0, 40, 41, 42, 43, 44, 45])
    nx.add_path(g, [1, 46, 47])
    g.add_edges_from([(47, 48), (47, 49), (49, 50), (49, 51), (51, 52), (46, 53)])
    return g


def shapes() -> dict[str, nx.Graph]:
    return {
        "chains": pendant_chains(1),
        "disconnected": nx.disjoint_union_all([pendant_chains(2), nx.star_graph(5),
                                               nx.path_graph(2), nx.empty_graph(3),
                                               nx.random_labeled_tree(12, seed=4)]),
        "tree": nx.random_labeled_tree(50, seed=2),
        "star": nx.star_graph(20),
        "path": nx.path_graph(30),
        "cycle_of_trees": nx.disjoint_union(nx.cycle_graph(5), nx.balanced_tree(2, 4)),
        "single_node": nx.empty_graph(1),
        "dense": nx.gnp_random_graph(70, 0.5, seed=5),  # two Floyd-Warshall blocks, one partial
    }


SHAPES = shapes()


def weight_sets(m: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(m)
    return {"uniform": rng.uniform(0.1, 10.0, m),
            "small_ints": rng.integers(0, 4, m).astype(float),  # zeros and many ties
            "equal": np.full(m, 2.5)}


def scipy_distances(graph: Graph, weighted: bool) -> np.ndarray:
    # SciPy reads explicit zeros as missing edges: a tiny weight instead (tolerance absorbs it).
    data = np.ones(graph.indices.shape[0]) if not weighted else np.where(
        graph.weights == 0, 1e-300, graph.weights)
    matrix = sp.csr_matrix((data, graph.indices, graph.indptr), shape=(graph.n, graph.n))
    return csgraph.shortest_path(matrix, directed=True, unweighted=not weighted)


def run(graph: Graph, backend: str = "cpu", **params) -> tuple[np.ndarray, dict]:
    fn = apsp_cpu if backend == "cpu" else apsp_gpu
    result = fn(graph, ApspParams(**params), no_progress)
    assert set(result.arrays) == {"distance"} and not result.node_values
    dist = result.arrays["distance"]
    assert dist.shape == (graph.n, graph.n)
    return dist, result.summary


def check_summary(dist: np.ndarray, summary: dict) -> None:
    finite = dist >= 0 if dist.dtype == np.int32 else np.isfinite(dist)
    assert summary["reachable_pairs"] == np.count_nonzero(finite) - dist.shape[0]
    assert summary["diameter"] == float(dist[finite].max())
    assert summary["dtype"] == dist.dtype.name


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("prune", ["off", "on"])
def test_hop_counts_equal_scipy(name: str, prune: str) -> None:
    graph = to_graph(SHAPES[name])
    dist, summary = run(graph, prune=prune)
    assert dist.dtype == np.int32 and summary["method"] == "bfs"
    expected = scipy_distances(graph, weighted=False)
    np.testing.assert_array_equal(np.where(np.isinf(expected), -1, expected), dist)
    check_summary(dist, summary)


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("method", ["floyd_warshall", "sssp"])
def test_weighted_equal_scipy(name: str, method: str) -> None:
    g = SHAPES[name]
    for label, weights in weight_sets(g.number_of_edges()).items():
        graph = to_graph(g, weights)
        expected = scipy_distances(graph, weighted=True)
        for dtype, rtol in (("float64", 1e-12), ("float32", 1e-5)):
            results = {prune: run(graph, method=method, dtype=dtype, prune=prune)
                       for prune in ("off", "on")}
            for prune, (dist, summary) in results.items():
                assert dist.dtype == np.dtype(dtype) and summary["method"] == method
                np.testing.assert_allclose(dist, expected, rtol=rtol, atol=1e-200,
                                           err_msg=f"{label} {dtype} prune={prune}")
                check_summary(dist, summary)
            if label != "uniform":  # sums of small integers and halves are exact: identical
                np.testing.assert_array_equal(results["off"][0], results["on"][0])


def test_methods_agree_exactly_on_exact_sums() -> None:
    g = SHAPES["disconnected"]
    graph = to_graph(g, np.random.default_rng(7).integers(0, 100, g.number_of_edges()) * 1.0)
    fw, _ = run(graph, method="floyd_warshall", prune="off")
    np.testing.assert_array_equal(fw, run(graph, method="sssp", prune="on")[0])
    hops, _ = run(graph, weighted=False)
    np.testing.assert_array_equal(hops, run(to_graph(g), prune="off")[0])


def test_phase_three_over_several_rounds() -> None:
    graph = to_graph(SHAPES["chains"])
    dist, summary = run(graph, prune="on")
    assert summary["pruned"] >= 14 and summary["prune_rounds"] >= 6
    by_id = {int(node): i for i, node in enumerate(graph.node_ids)}
    i = [by_id[original(k)] for k in (45, 44, 0, 52, 53)]
    assert dist[i[0], i[1]] == 1 and dist[i[0], i[2]] == 6  # along the chain
    assert dist[i[0], i[3]] == dist[i[0], i[2]] + dist[i[2], i[3]]  # chain -> core -> tree
    assert dist[i[3], i[4]] == 5 == dist[i[4], i[3]]  # in the tree on a tree: 52-51-49-47-46-53
    assert (np.diag(dist) == 0).all()


def test_auto_choices() -> None:
    dense = to_graph(SHAPES["dense"], np.ones(SHAPES["dense"].number_of_edges()))
    sparse = to_graph(nx.path_graph(1000), np.ones(999))
    assert plan(dense, ApspParams()).method == "floyd_warshall"
    assert plan(sparse, ApspParams()).method == "sssp"
    assert plan(sparse, ApspParams(weighted=False)).method == "bfs"
    assert plan(to_graph(nx.path_graph(5)), ApspParams()).method == "bfs"  # no weights
    assert run(sparse)[1]["pruned"] == 0  # auto: 0.2% degree-1, not worth it
    assert run(to_graph(nx.star_graph(30)))[1]["pruned"] == 30  # 97% degree-1
    chains = SHAPES["chains"]  # 11% degree-1: worth it for Floyd-Warshall only
    weighted = to_graph(chains, np.ones(chains.number_of_edges()))
    assert run(to_graph(chains))[1]["pruned"] == 0
    assert run(weighted, method="sssp")[1]["pruned"] == 0
    assert run(weighted)[1]["method"] == "floyd_warshall" and run(weighted)[1]["pruned"] >= 14
    assert "pruned" not in run(dense, prune="off")[1]


def test_negative_weights_refused() -> None:
    graph = to_graph(nx.path_graph(4), np.array([1.0, -2.0, 1.0]))
    with pytest.raises(InvalidInput) as info:
        apsp_cpu(graph, ApspParams(), no_progress)
    assert info.value.field == "weights"
    with pytest.raises(InvalidInput):
        estimate(graph, ApspParams(), "cpu")
    run(graph, weighted=False)  # hop counts ignore the weights


def test_estimate_is_the_matrix_size() -> None:
    g = nx.gnp_random_graph(300, 0.02, seed=3)
    graph = to_graph(g, np.ones(g.number_of_edges()))
    for params, item in ((ApspParams(weighted=False), 4), (ApspParams(dtype="float32"), 4),
                         (ApspParams(), 8)):
        for backend in ("cpu", "gpu"):
            cost = estimate(graph, params, backend)
            assert cost.result_bytes == 300 * 300 * item + 8 * 300
            assert cost.seconds > 0 and (cost.device_bytes is None) == (backend == "cpu")


# ------------------------------------------------------------------------------------------------
# GPU (run with -m gpu on a CUDA machine)
# ------------------------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("small_batches", [False, True])
def test_gpu_equals_cpu(monkeypatch: pytest.MonkeyPatch, small_batches: bool) -> None:
    if small_batches:  # one 64-source word per BFS batch, 32 sources per Bellman-Ford batch
        monkeypatch.setattr(apsp_gpu_module, "BATCH_BYTES", 1)
    for name, g in SHAPES.items():
        cases = [(None, {"weighted": False})]
        for weights in weight_sets(g.number_of_edges()).values():
            for method in ("floyd_warshall", "sssp"):
                for dtype in ("float32", "float64"):
                    cases.append((weights, {"method": method, "dtype": dtype}))
        for weights, params in cases:
            graph = to_graph(g, weights)
            for prune in ("off", "on"):
                cpu, cpu_summary = run(graph, "cpu", prune=prune, **params)
                gpu, gpu_summary = run(graph, "gpu", prune=prune, **params)
                assert cpu_summary == gpu_summary, (name, params, prune)
                np.testing.assert_array_equal(cpu, gpu, err_msg=f"{name} {params} {prune}")


@pytest.mark.gpu
@needs_gpu
def test_gpu_floyd_warshall_many_blocks() -> None:
    g = nx.gnp_random_graph(300, 0.05, seed=9)  # 5 blocks, the last one partial
    weights = np.random.default_rng(1).uniform(0.0, 1.0, g.number_of_edges())
    graph = to_graph(g, weights)
    for dtype in ("float32", "float64"):
        cpu, _ = run(graph, "cpu", method="floyd_warshall", dtype=dtype, prune="off")
        gpu, _ = run(graph, "gpu", method="floyd_warshall", dtype=dtype, prune="off")
        np.testing.assert_array_equal(cpu, gpu)


@pytest.mark.gpu
@needs_gpu
def test_gpu_sweep_without_matrix() -> None:
    from graphgpu.kernels.core.device import on_device

    graph = to_graph(SHAPES["disconnected"])
    dist, _ = run(graph, "cpu", prune="off")
    total, ecc = apsp_gpu_module.bfs_sweep_device(on_device(graph), None, no_progress)
    np.testing.assert_array_equal(total.get(), np.where(dist > 0, dist, 0).sum(axis=1))
    np.testing.assert_array_equal(ecc.get(), dist.max(axis=1))


@pytest.mark.gpu
@needs_gpu
def test_gpu_integer_kinds() -> None:
    """Integer weights run on uint16 pairs or int32 (phase 3 on DPX) where every distance
    provably fits and is exact in the dtype, else on floats; each kind equals the CPU."""
    from graphgpu.kernels.core.device import on_device

    dense = nx.gnp_random_graph(400, 0.05, seed=11)  # 7 blocks, the last partial; connected
    m = dense.number_of_edges()
    rng = np.random.default_rng(3)
    path = nx.path_graph(300)
    split = nx.disjoint_union(dense, nx.gnp_random_graph(90, 0.2, seed=2))
    cases = [
        (dense, rng.integers(0, 50, m), "float32", "uint16"),  # 49 * 399 < 0x7FFF
        (dense, rng.integers(1, 100, m), "float32", "uint16"),  # by node 0's eccentricity
        (split, rng.integers(1, 100, split.number_of_edges()), "float32", "int32"),  # no path
        (path, np.full(299, 1000), "float32", "int32"),  # distances up to 299,000
        (path, np.full(299, 100_000), "float32", None),  # up to 2.99e7: inexact in float32
        (path, np.full(299, 100_000), "float64", "int32"),
        (dense, rng.uniform(0.0, 1.0, m), "float64", None),  # not integers
    ]
    for g, weights, dtype, expected in cases:
        graph = to_graph(g, weights.astype(float))
        params = {"method": "floyd_warshall", "dtype": dtype}
        p = plan(graph, ApspParams(**params))
        dg = on_device(graph)
        kind = apsp_gpu_module.integer_kind(dg.indptr, dg.indices, dg.weights.astype(p.dtype),
                                            graph.n, p)
        assert kind == expected, (graph.n, dtype)
        for prune in ("off", "on"):
            cpu, cpu_summary = run(graph, "cpu", prune=prune, **params)
            gpu, gpu_summary = run(graph, "gpu", prune=prune, **params)
            assert cpu_summary == gpu_summary
            np.testing.assert_array_equal(cpu, gpu, err_msg=f"{kind} {dtype} prune={prune}")


@pytest.mark.gpu
@needs_gpu
def test_gpu_int32_equals_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    # uint16 refused everywhere ("no path" = 0), so every integer case runs on int32.
    monkeypatch.setitem(apsp_gpu_module.INTEGER_KINDS, "uint16", (2, 0))
    for name, g in SHAPES.items():
        graph = to_graph(g, weight_sets(g.number_of_edges())["small_ints"])
        for dtype in ("float32", "float64"):
            for prune in ("off", "on"):
                params = {"method": "floyd_warshall", "dtype": dtype, "prune": prune}
                cpu, _ = run(graph, "cpu", **params)
                gpu, _ = run(graph, "gpu", **params)
                np.testing.assert_array_equal(cpu, gpu, err_msg=f"{name} {params}")
