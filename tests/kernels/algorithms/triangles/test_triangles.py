"""triangles: CPU against NetworkX (triangles, clustering, transitivity) and brute force; GPU
against CPU bit for bit (``-m gpu``)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.common import dag
from graphgpu.kernels.algorithms.triangles import TRIANGLES, TrianglesParams, driver
from graphgpu.kernels.algorithms.triangles import cpu as host
from graphgpu.kernels.algorithms.triangles import gpu as device
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import skewed_arcs, spread
from tests.support.results import assert_backends_agree, assert_same


def to_graph(g: nx.Graph, weighted: bool = False) -> Graph:
    return spread(g, 6, 5, np.linspace(0.5, 3.0, g.number_of_edges()) if weighted else None)


def cases() -> dict[str, nx.Graph]:
    return {
        "random": nx.gnp_random_graph(150, 0.06, seed=1),
        "dense": nx.gnp_random_graph(50, 0.5, seed=2),
        "clustered": nx.powerlaw_cluster_graph(300, 4, 0.6, seed=3),
        "disconnected": nx.disjoint_union_all([nx.complete_graph(6), nx.cycle_graph(5),
                                               nx.wheel_graph(7), nx.empty_graph(3)]),
        "tree": nx.random_labeled_tree(40, seed=4),
        "edgeless": nx.empty_graph(4),
    }


@pytest.mark.parametrize("name", sorted(cases()))
def test_matches_networkx(name: str) -> None:
    g = cases()[name]
    result = host.triangles(to_graph(g, weighted=name == "dense"), TrianglesParams(), no_progress)
    nodes = sorted(g.nodes)
    tri, clus = nx.triangles(g), nx.clustering(g)
    np.testing.assert_array_equal(result.node_values["triangles"], [tri[v] for v in nodes])
    # Both are one correctly rounded division of the same integers.
    np.testing.assert_array_equal(result.node_values["clustering"], [clus[v] for v in nodes])
    assert result.summary["triangles"] == sum(tri.values()) // 3
    assert result.summary["transitivity"] == nx.transitivity(g)
    assert result.summary["average_clustering"] == pytest.approx(nx.average_clustering(g),
                                                                 rel=1e-12, abs=1e-15)


def test_brute_force_on_tiny_graphs() -> None:
    pairs = list(itertools.combinations(range(6), 2))
    rng = np.random.default_rng(0)
    for _ in range(60):
        g = nx.Graph([p for p in pairs if rng.random() < 0.5])
        g.add_nodes_from(range(6))
        counts = host.triangles(to_graph(g), TrianglesParams(), no_progress).node_values[
            "triangles"]
        for v in range(6):
            expected = sum(1 for a, b in itertools.combinations(set(g[v]), 2) if g.has_edge(a, b))
            assert counts[v] == expected


def test_directed_is_symmetrised() -> None:
    assert TRIANGLES.directed == "symmetrise"
    cyclic = to_graph(nx.DiGraph([(0, 1), (1, 2), (2, 0), (0, 2)])).undirected()
    result = host.triangles(cyclic, TrianglesParams(), no_progress)
    np.testing.assert_array_equal(result.node_values["triangles"], [1, 1, 1])
    assert result.summary["transitivity"] == 1.0


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("name", sorted(cases()))
def test_gpu_matches_cpu(name: str) -> None:
    assert_backends_agree(to_graph(cases()[name]), TrianglesParams(), host.triangles,
                          device.triangles, ("triangles", "clustering"))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_larger_graph_matches_cpu() -> None:
    _, src, dst = skewed_arcs(6, 20_000, 400_000, 1.0, 4)
    graph, _ = build_graph(src, dst)
    cpu, gpu = (fn(graph, TrianglesParams(), no_progress) for fn in (host.triangles,
                                                                     device.triangles))
    assert cpu.summary["triangles"] > 0
    assert_same(gpu, cpu)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_pieces_and_long_rows_match_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny tables, classes and rows: out-lists hashed in pieces, rows filtered by several
    warps, every pivot class, and rounds of 3 entries a lane, with the same counts."""
    _, src, dst = skewed_arcs(7, 3_000, 40_000, 1.0, 4)
    graph, _ = build_graph(src, dst)
    for name, value in (("UNROLL", 3), ("WARP_OUT", 4), ("WARP_ROW", 16), ("WARP_SLOTS", 32),
                        ("SMALL_OUT", 8), ("SMALL_SLOTS", 32), ("LARGE_SLOTS", 64)):
        monkeypatch.setattr(device, name, value)
    monkeypatch.setattr(dag, "LONG_ROW", 40)
    cpu, gpu = (fn(graph, TrianglesParams(), no_progress) for fn in (host.triangles,
                                                                     device.triangles))
    assert cpu.summary["triangles"] > 0
    assert_same(gpu, cpu)


def test_average_clustering_is_the_exact_mean() -> None:
    """The summary's mean is the correctly rounded mean of the clustering values (exact limb
    sums), whatever the order of the additions."""
    rng = np.random.default_rng(5)
    d = rng.integers(2, 10**6, 5_000)
    values = np.where(rng.random(5_000) < 0.3, 0.0,
                      2.0 * rng.integers(1, 10**3, 5_000) / (d * (d - 1.0)))
    values[:3] = (1.0, 2.0 / (2**31 * (2**31 - 1.0)), 1.0 / 3)
    exact = driver.exact_mean([int(s) for s in driver.mean_limbs(np, values)], values.size)
    expected = sum(Fraction(float(v)) for v in values) / values.size
    assert exact == float(expected)
    assert exact == driver.exact_mean([int(s) for s in driver.mean_limbs(np, values[::-1])],
                                      values.size)
    assert driver.exact_mean([0] * driver.LIMBS, 0) == 0.0


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_summary_pass_gives_the_drivers_values() -> None:
    """The one-pass clustering and sums equal the driver's NumPy steps, extremes of the limbs
    included (clustering 1, a third, and the smallest nonzero value, at degree 2^31)."""
    import cupy as cp

    rng = np.random.default_rng(6)
    d = rng.integers(0, 10**6, 20_000)
    t = np.where(d > 1, rng.integers(0, 10**3, 20_000), 0)
    d[:4], t[:4] = (2, 3, 2**31, 1), (1, 1, 1, 0)
    local, sums = device.device_summary(cp.asarray(t), cp.asarray(d))
    expected = driver.clustering(np, t, d)
    np.testing.assert_array_equal(local.get(), expected)
    assert expected[:3].tolist() == [1.0, 1 / 3, 2.0 / (2**31 * (2**31 - 1.0))]
    assert [int(s) for s in sums.get()] == [int(t.sum()), int((d * (d - 1)).sum()),
                                             *(int(s) for s in driver.mean_limbs(np, expected))]
