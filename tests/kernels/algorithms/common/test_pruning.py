"""Pendant pruning: the record's rules, and BFS / components identical with pruning on and off.

CPU tests compare with NetworkX and with the unpruned answer; ``-m gpu`` tests compare the GPU's
record and answers with the CPU's, exactly.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError

from graphgpu.kernels.algorithms.common import pruning
from graphgpu.kernels.algorithms.traversal import BfsParams, ComponentsParams
from graphgpu.kernels.algorithms.traversal.cpu import bfs as bfs_cpu
from graphgpu.kernels.algorithms.traversal.cpu import connected_components as components_cpu
from graphgpu.kernels.algorithms.traversal.gpu import bfs as bfs_gpu
from graphgpu.kernels.algorithms.traversal.gpu import connected_components as components_gpu
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import from_nx, original
from tests.support.results import assert_same


def shuffled(g: nx.Graph, seed: int) -> nx.Graph:
    perm = np.random.default_rng(seed).permutation(g.number_of_nodes())
    return nx.relabel_nodes(g, dict(enumerate(perm.tolist())))


def with_pendants(seed: int, core: int = 40, chains: int = 12) -> nx.Graph:
    """A random core with pendant chains and trees hanging off it, loose trees, isolated nodes."""
    rng = np.random.default_rng(seed)
    g = nx.gnp_random_graph(core, 0.1, seed=seed)
    nxt = core
    for _ in range(chains):  # chains of 1-6 vertices, removed over several rounds
        prev = int(rng.integers(core))
        for _ in range(int(rng.integers(1, 7))):
            g.add_edge(prev, nxt)
            prev, nxt = nxt, nxt + 1
    tree = nx.random_labeled_tree(15, seed=seed)  # a whole tree component
    g = nx.disjoint_union_all([g, tree, nx.path_graph(2), nx.star_graph(5), nx.empty_graph(3)])
    return shuffled(g, seed)


CASES = {
    "pendants_1": with_pendants(1),
    "pendants_2": with_pendants(2),
    "pendants_3": with_pendants(3, core=10, chains=20),
    "path": shuffled(nx.path_graph(30), 4),
    "star": nx.star_graph(20),
    "tree": nx.random_labeled_tree(60, seed=5),
    "edge": nx.path_graph(2),
    "single_node": nx.empty_graph(1),
    "cycle_with_tails": shuffled(nx.lollipop_graph(5, 7), 6),
}


def test_record_rules_on_a_chain() -> None:
    # 0 - 1 - 2 - 3 - 4 - 5: the two ends go each round; of the last edge only the larger end.
    graph = from_nx(nx.path_graph(6))
    record = pruning.prune_pendants(graph)
    assert record.rounds == 3 and record.pruned == 5
    assert record.vertex.tolist() == [0, 5, 1, 4, 3]
    assert record.round.tolist() == [1, 1, 2, 2, 3]
    assert record.neighbour.tolist() == [1, 4, 2, 3, 2]
    assert record.round_bounds().tolist() == [0, 2, 4, 5]
    pinned = pruning.prune_pendants(graph, pinned=np.array([0]))
    assert 0 not in pinned.vertex.tolist() and pinned.pruned == 5  # 5, 4, 3, 2, 1 towards 0
    assert pruning.prune_pendants(graph, max_rounds=1).pruned == 2


def test_record_keeps_a_vertex_of_every_component_and_no_isolated() -> None:
    for name, g in CASES.items():
        graph = from_nx(g)
        record = pruning.prune_pendants(graph)
        removed = set(record.vertex.tolist())
        assert len(removed) == record.pruned, name
        for members in nx.connected_components(g):
            assert set(members) - removed, name
        assert not removed & {v for v in g if g.degree(v) == 0}, name
        # The neighbour outlives the vertex: removed later, or never.
        when = dict(zip(record.vertex.tolist(), record.round.tolist(), strict=True))
        for v, r, w in zip(record.vertex, record.round, record.neighbour, strict=True):
            assert g.has_edge(int(v), int(w)) and when.get(int(w), 10**9) > r, name


def test_decide() -> None:
    star = from_nx(nx.star_graph(10))
    cycle = from_nx(nx.cycle_graph(10))
    assert pruning.decide(star, "auto") and not pruning.decide(cycle, "auto")
    assert pruning.decide(cycle, "on") and not pruning.decide(star, "off")


def check_bfs_against_networkx(g: nx.Graph, sources: list[int], result) -> None:
    dist = nx.multi_source_dijkstra_path_length(g, set(sources), weight=None)
    expected = np.full(g.number_of_nodes(), -1, dtype=np.int32)
    expected[list(dist)] = list(dist.values())
    np.testing.assert_array_equal(result.node_values["level"], expected)
    parent = result.node_values["parent"]
    for v in range(g.number_of_nodes()):
        if v in sources:
            assert parent[v] == v
        elif expected[v] < 0:
            assert parent[v] == -1
        else:
            assert parent[v] == min(u for u in g[v] if expected[u] == expected[v] - 1)


PRUNE_KEYS = ("pruned", "prune_rounds")


@pytest.mark.parametrize("name", sorted(CASES))
def test_bfs_pruned_equals_unpruned_and_networkx(name: str) -> None:
    g = CASES[name]
    graph = from_nx(g)
    rng = np.random.default_rng(0)
    n = g.number_of_nodes()
    leaves = [v for v in g if g.degree(v) == 1]
    singles = [[0], [n - 1], [int(rng.integers(n))], leaves[:1]]
    multi = [sorted({int(x) for x in rng.integers(n, size=3)}), leaves[:3]]
    for sources in [s for s in singles + multi if s]:
        if len(sources) == 1 and sources in singles:
            base = {"source": original(sources[0])}
        else:
            base = {"sources": [original(s) for s in sources]}
        off = bfs_cpu(graph, BfsParams(**base), no_progress)
        on = bfs_cpu(graph, BfsParams(**base, prune="on"), no_progress)
        check_bfs_against_networkx(g, sources, on)
        assert_same(off, on, ignore=PRUNE_KEYS)
        assert on.summary["pruned"] == pruning.prune_pendants(
            graph, np.array(sources)).pruned


@pytest.mark.parametrize("name", sorted(CASES))
def test_components_pruned_equal_unpruned(name: str) -> None:
    graph = from_nx(CASES[name])
    off = components_cpu(graph, ComponentsParams(), no_progress)
    on = components_cpu(graph, ComponentsParams(prune="on"), no_progress)
    assert_same(off, on, ignore=PRUNE_KEYS)
    record = pruning.prune_pendants(graph)
    assert on.summary["pruned"] == record.pruned
    assert on.summary["prune_rounds"] == record.rounds
    auto = components_cpu(graph, ComponentsParams(prune="auto"), no_progress)
    assert_same(off, auto, ignore=PRUNE_KEYS)


def test_bfs_params() -> None:
    with pytest.raises(ValidationError):
        BfsParams.model_validate({"source": 1, "sources": [2]})
    with pytest.raises(ValidationError):
        BfsParams.model_validate({"sources": []})
    with pytest.raises(ValidationError):
        BfsParams.model_validate({"source": 1, "prune": "maybe"})
    with pytest.raises(ValidationError):
        BfsParams.model_validate({"sources": 4})  # a list, not a scalar
    graph = from_nx(nx.path_graph(4))
    with pytest.raises(InvalidInput) as info:
        bfs_cpu(graph, BfsParams(sources=[original(0), 999]), no_progress)
    assert info.value.field == "sources"
    twice = bfs_cpu(graph, BfsParams(sources=[original(1), original(1)]), no_progress)
    assert twice.summary["sources"] == 1 and twice.summary["source"] is None


# ------------------------------------------------------------------------------------------------
# GPU (device machine only)
# ------------------------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


def big_pendant_graph(seed: int) -> Graph:
    """A sparse random graph (many degree-1 and degree-0 nodes) plus long chains and hubs."""
    rng = np.random.default_rng(seed)
    n = 200_000
    src, dst = [rng.integers(0, n, 150_000)], [rng.integers(0, n, 150_000)]
    chain = np.arange(n, n + 5_000)
    src.append(chain[:-1])
    dst.append(chain[1:])
    src.append(np.zeros(20_000, np.int64))
    dst.append(rng.choice(n, 20_000, replace=False))
    graph, _ = build_graph(np.concatenate(src), np.concatenate(dst),
                           extra_nodes=np.arange(n + 5_000))
    return graph


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", [*sorted(CASES), "big"])
def test_gpu_pruning_matches_cpu(name: str) -> None:
    graph = big_pendant_graph(3) if name == "big" else from_nx(CASES[name])
    cpu, gpu = pruning.prune_pendants(graph), pruning.prune_pendants_gpu(graph)
    assert cpu.rounds == gpu.rounds
    for key in ("vertex", "round", "neighbour"):
        np.testing.assert_array_equal(getattr(cpu, key), getattr(gpu, key), err_msg=key)
    rng = np.random.default_rng(1)
    picks = rng.integers(graph.n, size=3).tolist()
    params = [BfsParams(source=int(graph.node_ids[picks[0]]), prune=mode)
              for mode in ("on", "off")]
    params.append(BfsParams(sources=[int(graph.node_ids[p]) for p in picks], prune="on"))
    for p in params:
        assert_same(bfs_cpu(graph, p, no_progress), bfs_gpu(graph, p, no_progress))
    for mode in ("on", "off", "auto"):
        p = ComponentsParams(prune=mode)
        assert_same(components_cpu(graph, p, no_progress), components_gpu(graph, p, no_progress))
