"""pagerank: CPU against NetworkX (tight tol) on directed, undirected, weighted, disconnected and
edgeless graphs; GPU against CPU (``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError

from graphgpu.kernels.algorithms.pagerank import (
    PAGERANK,
    PagerankParams,
    cpu,
    gpu,
    iteration_bound,
)
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import skewed_arcs

TIGHT = {"tol": 1e-12, "max_iter": 10_000}


def original(node: int) -> int:
    return 3 * node + 1


def to_graph(g: nx.Graph) -> Graph:
    """``g`` through build_graph (directed when ``g`` is), ids spread out, weights if any."""
    edges = list(g.edges(data="weight"))
    src = np.array([original(u) for u, _, _ in edges], dtype=np.int64)
    dst = np.array([original(v) for _, v, _ in edges], dtype=np.int64)
    weights = (np.array([w for _, _, w in edges], dtype=np.float64)
               if edges and edges[0][2] is not None else None)
    nodes = np.array([original(v) for v in g.nodes], dtype=np.int64)
    graph, _ = build_graph(src, dst, weights, extra_nodes=nodes, directed=g.is_directed())
    return graph


def cases() -> dict[str, nx.Graph]:
    rng = np.random.default_rng(5)
    directed = nx.gnp_random_graph(80, 0.05, seed=1, directed=True)
    directed.add_nodes_from(range(80, 84))  # isolated: dangling
    weighted = nx.gnp_random_graph(60, 0.08, seed=2, directed=True)
    for u, v in weighted.edges:
        weighted[u][v]["weight"] = float(rng.uniform(0.1, 4.0))
    undirected = nx.disjoint_union(nx.karate_club_graph(), nx.path_graph(7))
    for u, v in undirected.edges:
        undirected[u][v]["weight"] = float(rng.integers(1, 5))
    sinks = nx.DiGraph([(0, 1), (1, 2), (3, 2), (4, 0)])  # 2 is dangling, 4 has no in-arc
    return {"directed": directed, "weighted_directed": weighted,
            "undirected_weighted": undirected,
            "undirected": nx.gnp_random_graph(70, 0.06, seed=3), "sinks": sinks,
            "edgeless": nx.empty_graph(5, create_using=nx.DiGraph)}


def ranks(result: dict, g: nx.Graph) -> dict[int, float]:
    return dict(zip(sorted(g.nodes), result.node_values["pagerank"].tolist(), strict=True))


def assert_close(ours: dict[int, float], theirs: dict[int, float]) -> None:
    assert ours.keys() == theirs.keys()
    a = np.array([ours[k] for k in sorted(ours)])
    b = np.array([theirs[k] for k in sorted(ours)])
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("name", sorted(cases()))
@pytest.mark.parametrize("alpha", [0.85, 0.5])
def test_matches_networkx(name: str, alpha: float) -> None:
    g = cases()[name]
    result = cpu.pagerank(to_graph(g), PagerankParams(alpha=alpha, **TIGHT), no_progress)
    assert result.summary["converged"]
    expected = nx.pagerank(g, alpha=alpha, tol=1e-12, max_iter=10_000)
    assert_close(ranks(result, g), expected)
    assert result.node_values["pagerank"].sum() == pytest.approx(1.0, abs=1e-9)


def test_personalization_and_dangling_like_networkx() -> None:
    g = cases()["weighted_directed"]
    personalization = {0: 1.0, 5: 3.0, 17: 0.5}
    dangling = {2: 1.0, 40: 2.0}
    params = PagerankParams(personalization={original(k): v for k, v in personalization.items()},
                            dangling={original(k): v for k, v in dangling.items()}, **TIGHT)
    result = cpu.pagerank(to_graph(g), params, no_progress)
    expected = nx.pagerank(g, personalization=personalization, dangling=dangling, tol=1e-12,
                           max_iter=10_000)
    assert_close(ranks(result, g), expected)


def test_unweighted_option_ignores_weights() -> None:
    g = cases()["weighted_directed"]
    result = cpu.pagerank(to_graph(g), PagerankParams(weighted=False, **TIGHT), no_progress)
    assert_close(ranks(result, g), nx.pagerank(g, weight=None, tol=1e-12, max_iter=10_000))


def test_directed_cycle_is_uniform_and_direction_matters() -> None:
    cycle = to_graph(nx.DiGraph([(0, 1), (1, 2), (2, 0)]))
    result = cpu.pagerank(cycle, PagerankParams(**TIGHT), no_progress)
    np.testing.assert_allclose(result.node_values["pagerank"], 1 / 3, rtol=1e-12)
    # A star pointing in ranks its centre first; pointing out, its leaves.
    into = cpu.pagerank(to_graph(nx.DiGraph([(1, 0), (2, 0), (3, 0)])), PagerankParams(),
                        no_progress).node_values["pagerank"]
    out = cpu.pagerank(to_graph(nx.DiGraph([(0, 1), (0, 2), (0, 3)])), PagerankParams(),
                       no_progress).node_values["pagerank"]
    assert into.argmax() == 0 and out.argmin() == 0


def test_not_converged_is_reported() -> None:
    g = cases()["directed"]
    result = cpu.pagerank(to_graph(g), PagerankParams(tol=1e-15, max_iter=3), no_progress)
    assert result.summary == {"alpha": 0.85, "iterations": 3, "converged": False,
                              "residual": result.summary["residual"],
                              "dangling_nodes": result.summary["dangling_nodes"]}
    assert result.summary["dangling_nodes"] > 0 and result.summary["residual"] > 1e-15


def test_defaults_converge() -> None:
    """The default stop (L1 change below tol) is within the contraction bound of the fixed point,
    where NetworkX's default rule (below n * tol) is not; n * tol reproduces NetworkX."""
    g = nx.gnp_random_graph(3000, 0.002, seed=4, directed=True)
    graph = to_graph(g)
    default = cpu.pagerank(graph, PagerankParams(), no_progress)
    exact = cpu.pagerank(graph, PagerankParams(**TIGHT), no_progress).node_values["pagerank"]
    summary = default.summary
    assert summary["converged"] and summary["residual"] < 1e-6
    assert 1 < summary["iterations"] <= iteration_bound(PagerankParams())
    # ||x_k - x*|| <= alpha / (1 - alpha) * ||x_k - x_(k-1)||
    bound = 0.85 / 0.15 * summary["residual"] + 1e-12
    assert np.abs(default.node_values["pagerank"] - exact).sum() <= bound
    networkx_rule = cpu.pagerank(graph, PagerankParams(tol=3000 * 1e-6), no_progress)
    assert networkx_rule.summary["iterations"] < summary["iterations"]
    assert np.abs(networkx_rule.node_values["pagerank"] - exact).sum() > bound
    assert_close(ranks(networkx_rule, g), nx.pagerank(g))


def test_bad_input() -> None:
    graph = to_graph(cases()["directed"])
    with pytest.raises(InvalidInput) as unknown:
        cpu.pagerank(graph, PagerankParams(personalization={10**6: 1.0}), no_progress)
    assert unknown.value.field == "personalization"
    with pytest.raises(InvalidInput):
        cpu.pagerank(graph, PagerankParams(dangling={original(0): 0.0}), no_progress)
    negative, _ = build_graph([0, 1], [1, 2], [1.0, -1.0], directed=True)
    with pytest.raises(InvalidInput) as weights:
        cpu.pagerank(negative, PagerankParams(), no_progress)
    assert weights.value.field == "weights"
    with pytest.raises(ValidationError):
        PagerankParams(alpha=1.5)


def test_registered_native() -> None:
    algorithm = PAGERANK
    assert algorithm.directed == "native" and algorithm.cpu is cpu.pagerank


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("name", sorted(cases()))
def test_gpu_matches_cpu(name: str) -> None:
    g = cases()[name]
    graph = to_graph(g)
    for params in (PagerankParams(**TIGHT), PagerankParams(alpha=0.6, weighted=False, **TIGHT),
                   PagerankParams(personalization={original(0): 1.0, original(3): 2.0},
                                  **TIGHT)):
        on_cpu = cpu.pagerank(graph, params, no_progress)
        on_gpu = gpu.pagerank(graph, params, no_progress).host()
        assert on_gpu.summary["converged"] and on_gpu.summary["dangling_nodes"] == \
            on_cpu.summary["dangling_nodes"]
        np.testing.assert_allclose(on_gpu.node_values["pagerank"], on_cpu.node_values["pagerank"],
                                   rtol=1e-9, atol=1e-15)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_larger_graph_matches_cpu() -> None:
    """Rows of every group width (4..32 lanes) and heavy rows: a skewed random digraph, and a hub
    of 6,000 in-arcs (summed by a block of its own)."""
    rng, src, dst = skewed_arcs(9, 20_000, 400_000, 1.2, 10)
    src = np.concatenate([src, np.arange(1, 6001)])
    dst = np.concatenate([dst, np.zeros(6000, dtype=dst.dtype)])
    for directed in (True, False):
        graph, _ = build_graph(src, dst, rng.uniform(0.5, 2.0, src.shape[0]), directed=directed)
        params = PagerankParams(**TIGHT)
        on_gpu = gpu.pagerank(graph, params, no_progress).host()  # ranks left on the device
        np.testing.assert_allclose(on_gpu.node_values["pagerank"],
                                   cpu.pagerank(graph, params, no_progress).node_values["pagerank"],
                                   rtol=1e-9, atol=1e-15)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_hub_segments_match_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many heavy rows cut into many short segments (each row finished by its last segment):
    the same ranks and iterations as the CPU."""
    monkeypatch.setattr(gpu, "HEAVY_ROW", 40)
    monkeypatch.setattr(gpu, "SEGMENT", 24)
    rng, src, dst = skewed_arcs(11, 5_000, 120_000, 1.0, 3)
    graph, _ = build_graph(dst, src, rng.uniform(0.5, 2.0, src.shape[0]), directed=True)
    for weighted in (True, False):
        params = PagerankParams(weighted=weighted, **TIGHT)
        on_cpu = cpu.pagerank(graph, params, no_progress)
        on_gpu = gpu.pagerank(graph, params, no_progress).host()
        assert on_gpu.summary["iterations"] == on_cpu.summary["iterations"]
        np.testing.assert_allclose(on_gpu.node_values["pagerank"], on_cpu.node_values["pagerank"],
                                   rtol=1e-9, atol=1e-15)
