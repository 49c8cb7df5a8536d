"""Jaccard: CPU vs networkx.jaccard_coefficient; GPU vs CPU (``-m gpu``)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.similarity import JaccardParams
from graphgpu.kernels.algorithms.similarity.cpu import jaccard as jaccard_cpu
from graphgpu.kernels.algorithms.similarity.gpu import jaccard as jaccard_gpu
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import build_graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import from_nx, original, skewed_arcs


def sample_graph(seed: int) -> nx.Graph:
    g = nx.disjoint_union(nx.gnp_random_graph(40, 0.15, seed=seed), nx.star_graph(6))
    g.add_nodes_from(range(g.number_of_nodes(), g.number_of_nodes() + 3))  # isolated
    return g


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pairs_match_networkx(seed: int) -> None:
    g = sample_graph(seed)
    rng = np.random.default_rng(seed)
    pairs = [tuple(int(x) for x in rng.integers(0, g.number_of_nodes(), 2)) for _ in range(200)]
    pairs += [(0, 0), (g.number_of_nodes() - 1, g.number_of_nodes() - 2)]  # self, isolated
    params = JaccardParams(pairs=[[original(u), original(v)] for u, v in pairs])
    result = jaccard_cpu(from_nx(g), params, no_progress)
    expected = [p for _, _, p in nx.jaccard_coefficient(g, pairs)]
    assert result.arrays["jaccard"].tolist() == pytest.approx(expected, abs=0, rel=1e-15)
    assert result.arrays["u"].tolist() == [u for u, _ in pairs]
    assert result.arrays["v"].tolist() == [v for _, v in pairs]
    assert result.summary["mode"] == "pairs" and result.summary["pairs"] == len(pairs)


def test_every_edge_matches_networkx() -> None:
    g = sample_graph(5)
    result = jaccard_cpu(from_nx(g), JaccardParams(), no_progress)
    us, vs = result.arrays["u"], result.arrays["v"]
    assert (us < vs).all() and us.size == g.number_of_edges()
    pairs = list(zip(us.tolist(), vs.tolist(), strict=True))
    expected = {(u, v): p for u, v, p in nx.jaccard_coefficient(g, pairs)}
    got = dict(zip(pairs, result.arrays["jaccard"].tolist(), strict=True))
    assert got == expected
    assert result.summary["maximum"] == max(expected.values())


def test_unknown_node_is_refused() -> None:
    with pytest.raises(InvalidInput):
        jaccard_cpu(from_nx(sample_graph(1)), JaccardParams(pairs=[[original(0), 10**9]]),
                    no_progress)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("pairs", [None, "random"])
def test_gpu_equals_cpu(pairs: str | None) -> None:
    g = nx.barabasi_albert_graph(2000, 4, seed=3)
    graph = from_nx(g)
    if pairs:
        rng = np.random.default_rng(0)
        chosen = rng.integers(0, g.number_of_nodes(), (5000, 2))
        params = JaccardParams(pairs=[[original(int(u)), original(int(v))] for u, v in chosen])
    else:
        params = JaccardParams()
    cpu = jaccard_cpu(graph, params, no_progress)
    gpu = jaccard_gpu(graph, params, no_progress)
    assert cpu.summary == gpu.summary
    for name in ("u", "v", "jaccard"):
        assert np.array_equal(cpu.arrays[name], gpu.arrays[name]), name


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("mode", ["edges", "hub pairs"])
def test_gpu_equals_cpu_on_hubs(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hub rows (Pareto sources) and a dense core: pairs and DAG arcs of two long lists take
    the warp paths (merge windows and binary searches), the others a thread's; with LIMIT 2
    also lists of a few entries go to a warp."""
    from graphgpu.kernels.algorithms.similarity import gpu as device

    rng, src, dst = skewed_arcs(11, 3_000, 60_000, 1.0, 4)
    core = rng.integers(0, 60, (4_000, 2))  # a dense core among the first nodes
    graph, _ = build_graph(np.concatenate([src, core[:, 0]]), np.concatenate([dst, core[:, 1]]))
    if mode == "edges":
        params = JaccardParams()
    else:
        hubs = np.argsort(graph.degrees())[-200:]
        chosen = np.concatenate([rng.choice(hubs, (3_000, 2)),
                                 rng.integers(0, graph.n, (3_000, 2))])
        params = JaccardParams(pairs=[[int(graph.node_ids[u]), int(graph.node_ids[v])]
                                      for u, v in chosen])
    cpu = jaccard_cpu(graph, params, no_progress)
    assert cpu.summary["maximum"] > 0
    for limit in (16, 2):
        monkeypatch.setattr(device, "LIMIT", limit)
        gpu = jaccard_gpu(graph, params, no_progress)
        assert cpu.summary == gpu.summary
        for name in ("u", "v", "jaccard"):
            assert np.array_equal(cpu.arrays[name], gpu.arrays[name]), (name, limit)
