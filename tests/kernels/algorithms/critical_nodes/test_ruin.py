"""critical_nodes: CND*'s growth from any deleted set (``regrow``) and ruin and regrow, the CPU's
rounds and the GPU's chains (valid k-sets, exact objectives, never worse than its start,
determinism, its place in the memetic run, cancel)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from graphgpu.kernels.algorithms.critical_nodes import CndParams, critical_nodes_cpu
from graphgpu.kernels.algorithms.critical_nodes.cpu import CpuImprover
from graphgpu.kernels.algorithms.critical_nodes.greedy import (
    LAZY_DEGREE,
    cnd_star,
    greedy_mis,
    regrow,
    stable_argsort,
)
from graphgpu.kernels.algorithms.critical_nodes.ruin import RuinRegrow, label_kept
from graphgpu.kernels.algorithms.critical_nodes.tuning import RUIN_NODES
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import JobCanceled
from graphgpu.kernels.core.registry import no_progress
from tests.kernels.algorithms.critical_nodes.test_critical_nodes import (
    check,
    from_nx,
    pairs_left,
)


def state_of(graph, deleted: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """comp / sizes as :func:`regrow` takes them, and the pairs left."""
    comp = np.ones(graph.n, np.int64)
    comp[deleted] = 0
    sizes = np.zeros(graph.n + 1, np.int64)
    total = label_kept(graph.indptr, graph.indices, comp, sizes, np.zeros(graph.n, np.int64))
    return comp, sizes, int(total)


def cnd_start(graph, k: int) -> tuple[int, np.ndarray]:
    """CND*'s set of seed 1 and its pairs left."""
    comp = np.zeros(graph.n, np.int64)
    sizes = np.zeros(graph.n + 1, np.int64)
    objective = int(cnd_star(graph.indptr, graph.indices, k, np.uint64(1), comp, sizes))
    return objective, np.flatnonzero(comp == 0)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 64, 1000, 1025])
def test_stable_argsort_is_numpys_stable_argsort(n: int) -> None:
    rng = np.random.default_rng(n)
    for keys in (rng.integers(-3, 3, n), rng.integers(-(1 << 40), 1 << 40, n),
                 rng.integers(0, 1 << 63, n, dtype=np.uint64)):
        assert stable_argsort(keys).tolist() == np.argsort(keys, kind="stable").tolist()


def test_regrow_matches_a_plain_python_greedy_from_any_set() -> None:
    g = nx.disjoint_union_all([nx.barabasi_albert_graph(70, 2, seed=3), nx.path_graph(9),
                               nx.empty_graph(4)])
    graph = from_nx(g)
    rng = np.random.default_rng(2)
    deleted = set(rng.choice(graph.n, 40, replace=False).tolist())
    comp, sizes, total = state_of(graph, np.array(sorted(deleted)))
    assert total == pairs_left(g, deleted)
    k = 12
    left = set(deleted)
    while len(left) > k:  # the cheapest return, the smallest node on ties
        cost = {x: pairs_left(g, left - {x}) for x in sorted(left)}
        left.remove(min(sorted(left), key=lambda x: cost[x]))
    objective = regrow(graph.indptr, graph.indices, k, comp, sizes)
    assert set(np.flatnonzero(comp == 0).tolist()) == left
    assert objective == pairs_left(g, left)
    ids, counts = np.unique(comp[comp != 0], return_counts=True)
    assert np.array_equal(sizes[ids], counts)


def greedy_order(graph, deleted: set[int]) -> list[int]:
    """CND*'s growth by its definition: the deleted nodes in the order of their return, each
    the cheapest (fewest pairs joined, the smallest node on ties), costs from the kept graph's
    components, until one is left."""
    adjacency = sp.csr_matrix((np.ones(graph.indices.shape[0]), graph.indices, graph.indptr),
                              shape=(graph.n, graph.n))
    left, order = set(deleted), []
    while len(left) > 1:
        kept = np.ones(graph.n, bool)
        kept[list(left)] = False
        _, label = connected_components(adjacency[kept][:, kept], directed=False)
        ids = np.full(graph.n, -1)
        ids[kept] = label
        size = np.bincount(label)

        def cost(x: int, ids: np.ndarray = ids, size: np.ndarray = size) -> int:
            near = {int(ids[u]) for u in graph.indices[graph.indptr[x]:graph.indptr[x + 1]]
                    if ids[u] >= 0}
            joined = sum(int(size[c]) for c in near)
            return (joined + 1) * joined // 2 - sum(int(size[c]) * (int(size[c]) - 1) // 2
                                                    for c in near)

        order.append(min(sorted(left), key=cost))
        left.remove(order[-1])
    return order


def hub_graph(seed: int) -> nx.Graph:
    """Six hubs (nodes 0-5) of 80-105 neighbours (past LAZY_DEGREE): with an even seed, random
    neighbours in a sparse random graph (hubs far costlier than the rest); with an odd seed,
    neighbours in one or two of eight sparse communities (hubs as cheap as other nodes)."""
    rng = np.random.default_rng(seed)
    g = nx.gnm_random_graph(400, 500, seed=seed)
    for hub in range(6):
        if seed % 2:
            pool = np.concatenate([np.arange(6 + 49 * c, 55 + 49 * c)
                                   for c in rng.choice(8, 1 + hub % 2, replace=False)])
            size = min(len(pool), 70 + 5 * hub)
        else:
            pool, size = np.arange(6, 400), 80 + 5 * hub
        g.add_edges_from((hub, int(v)) for v in rng.choice(pool, size, replace=False))
    if seed % 2:  # the communities: 49 nodes each, few edges between them
        g.remove_edges_from([(u, v) for u, v in g.edges() if u >= 6 and v >= 6
                             and (u - 6) // 49 != (v - 6) // 49 and rng.random() < 0.9])
    return g


@pytest.mark.parametrize("seed", range(6))
def test_regrow_with_hubs_returns_nodes_in_the_order_of_its_definition(seed: int) -> None:
    # Hubs past LAZY_DEGREE are queued with bounds after merges, the candidates next to the
    # largest component by the slopes of their costs: every step's return as by definition
    # (the set left at every k, not only the last).
    g = hub_graph(seed)
    graph = from_nx(g)
    assert int(np.diff(graph.indptr).max()) > LAZY_DEGREE
    rng = np.random.default_rng(seed)
    deleted = {*range(6), *rng.choice(graph.n, 150, replace=False).tolist()}
    order = greedy_order(graph, deleted)
    for k in range(len(deleted) - 1, 0, -1):
        comp, sizes, _ = state_of(graph, np.array(sorted(deleted)))
        objective = regrow(graph.indptr, graph.indices, k, comp, sizes)
        left = deleted - set(order[:len(deleted) - k])
        assert set(np.flatnonzero(comp == 0).tolist()) == left, k
        assert objective == pairs_left(g, left)
        ids, counts = np.unique(comp[comp != 0], return_counts=True)
        assert np.array_equal(sizes[ids], counts)


@pytest.mark.parametrize(("scale", "seed"), [(9, 3), (10, 1)])
def test_cnd_star_on_an_rmat_graph_returns_nodes_in_the_order_of_its_definition(
        scale: int, seed: int) -> None:
    # A hub-heavy graph from the MIS on: CND*'s own start, its hubs restored late.
    from graphgpu.kernels.generators import generate

    edges = generate("rmat", {"scale": scale, "edge_factor": 4, "seed": seed}, "cpu")
    g = nx.Graph()
    g.add_nodes_from(range(edges.num_nodes))
    g.add_edges_from((int(u), int(v)) for u, v in zip(edges.src, edges.dst, strict=True)
                     if u != v)
    graph = from_nx(g)
    assert int(np.diff(graph.indptr).max()) > LAZY_DEGREE
    deleted = set(np.flatnonzero(~greedy_mis(graph.indptr, graph.indices, np.uint64(5))).tolist())
    order = greedy_order(graph, deleted)
    comp = np.zeros(graph.n, np.int64)
    sizes = np.zeros(graph.n + 1, np.int64)
    for k in range(len(deleted) - 1, 0, -1):
        objective = int(cnd_star(graph.indptr, graph.indices, k, np.uint64(5), comp, sizes))
        left = deleted - set(order[:len(deleted) - k])
        assert set(np.flatnonzero(comp == 0).tolist()) == left, k
        assert objective == pairs_left(g, left)


def test_ruin_regrow_gives_valid_better_sets_deterministically() -> None:
    g = nx.barabasi_albert_graph(400, 2, seed=5)
    graph = from_nx(g)
    k = 40
    start_objective, start = cnd_start(graph, k)
    outcomes = []
    for _ in range(2):
        ruin = RuinRegrow(graph, k, 7)
        objective, nodes = ruin(start, 60, math.inf)  # ends by its stall count, not the clock
        assert nodes.shape == (k,) and np.unique(nodes).shape == (k,)
        assert objective == pairs_left(g, set(nodes.tolist()))
        assert objective <= start_objective
        assert ruin.rounds >= 60
        outcomes.append((objective, nodes))
    assert outcomes[0][0] == outcomes[1][0]
    assert np.array_equal(outcomes[0][1], outcomes[1][1])


def test_descend_only_where_the_largest_component_is_large() -> None:
    pieces = nx.disjoint_union_all([nx.path_graph(RUIN_NODES - 1) for _ in range(3)])
    nodes = np.arange(3)
    assert CpuImprover(from_nx(pieces), 3, 0).descend(nodes, math.inf) is nodes
    g = nx.random_regular_graph(3, 4 * RUIN_NODES, seed=2)  # an expander: a giant is left
    graph = from_nx(g)
    first = np.arange(4 * RUIN_NODES // 20)
    k = first.shape[0]
    assert RuinRegrow(graph, k, 0).largest(first) >= RUIN_NODES
    out = CpuImprover(graph, k, 0).descend(first, math.inf)
    assert out.shape == (k,) and np.unique(out).shape == (k,)
    assert pairs_left(g, set(out.tolist())) < pairs_left(g, set(first.tolist()))


def memetic_on_a_large_giant(solve: Callable[..., Any]) -> dict[str, Any]:
    """A 2 s memetic run of the backend ``solve`` on an expander whose start leaves a giant:
    checked valid and exact, and never worse than greedy; its summary."""
    g = nx.random_regular_graph(3, 4 * RUIN_NODES, seed=4)
    graph = from_nx(g)
    k = 4 * RUIN_NODES // 20
    greedy = critical_nodes_cpu(graph, CndParams(k=k, method="greedy", seed=0), no_progress)
    result = solve(graph, CndParams(k=k, method="memetic", time_limit_s=2, seed=0), no_progress)
    check(g, graph, result, k)
    assert result.summary["objective"] <= greedy.summary["objective"]
    return result.summary


def test_memetic_with_a_large_giant_stays_valid_and_beats_greedy() -> None:
    summary = memetic_on_a_large_giant(critical_nodes_cpu)
    assert summary["descent_on"] == "cpu"  # the giant took the descent


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_memetic_descends_on_the_gpu_on_a_large_giant() -> None:
    """The GPU backend's memetic runs its first descent in chains on the GPU (and says so),
    then its chains: valid, exact, never worse than greedy; none on small pieces."""
    from graphgpu.kernels.algorithms.critical_nodes import critical_nodes_gpu

    summary = memetic_on_a_large_giant(critical_nodes_gpu)
    assert summary["descent_on"] == "gpu" and summary["backend"] == "gpu"
    pieces = nx.disjoint_union_all([nx.path_graph(RUIN_NODES - 1) for _ in range(3)])
    small = critical_nodes_gpu(from_nx(pieces), CndParams(k=3, method="memetic",
                                                          time_limit_s=1, seed=0), no_progress)
    assert small.summary["descent_on"] is None


def descent_outcomes(state: str, monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """Two GPU descents (seed 3) from a CND* set, the chains' state in ``shared`` or
    ``global`` memory (forced, with 64 chains either way): every set reported is a k-set whose
    pairs, counted by NetworkX, are what was reported, each better than the last; the result no
    worse than the start. Their results."""
    from graphgpu.kernels.algorithms.critical_nodes import gpu_ruin

    monkeypatch.setattr(gpu_ruin, "descent_chains", lambda *args, **kwargs: 64)
    if state == "global":
        monkeypatch.setattr(gpu_ruin, "in_shared", lambda *args, **kwargs: False)
    g = nx.disjoint_union_all([nx.barabasi_albert_graph(500, 2, seed=5),
                               nx.random_regular_graph(3, 300, seed=1), nx.star_graph(40)])
    graph = from_nx(g)
    k = 60
    start_objective, start = cnd_start(graph, k)
    outcomes = []
    for _ in range(2):
        reports: list[tuple[int, np.ndarray]] = []
        descent = gpu_ruin.GpuDescent(graph, k, 3, least=1)
        nodes = descent(start, math.inf, lambda: None,
                        lambda o, s, out=reports: out.append((o, s)))
        assert descent.ran_on == "gpu" and descent.rounds > 0
        assert nodes.shape == (k,) and np.unique(nodes).shape == (k,)
        assert pairs_left(g, set(nodes.tolist())) <= start_objective
        last = start_objective
        for objective, found in reports:
            assert objective == pairs_left(g, set(found.tolist())) < last
            last = objective
        outcomes.append(nodes)
    return outcomes


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_descent_gives_valid_better_sets_with_exact_objectives(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Chains of GPU rounds in shared memory: valid sets, exact objectives; the same seed gives
    the same sets (the launches end by their stall count)."""
    first, second = descent_outcomes("shared", monkeypatch)
    assert np.array_equal(first, second)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_gpu_descent_in_global_memory_takes_the_same_steps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The chains' state in global memory (graphs past shared memory), blocks of
    ``GLOBAL_THREADS``: valid sets, exact objectives, and the sets of the same chains in shared
    memory (a round's outcome does not depend on where its state lives or on the block's size)."""
    in_global = descent_outcomes("global", monkeypatch)
    monkeypatch.undo()
    in_shared = descent_outcomes("shared", monkeypatch)
    assert np.array_equal(in_global[0], in_global[1])
    assert np.array_equal(in_global[0], in_shared[0])


def canceled_in_descent(solve: Callable[..., Any], descent: type, endless: Callable[[], Any]
                        ) -> None:
    """A memetic run of ``solve`` whose first descent (class ``descent``, made endless by
    ``endless``) is canceled from its heartbeat: the job ends long before its share."""
    g = nx.random_regular_graph(3, 4 * RUIN_NODES, seed=4)
    graph = from_nx(g)
    k = 4 * RUIN_NODES // 20
    called = []
    real = descent.__call__

    def descend(self, *args):
        called.append(True)
        return real(self, *args)

    def cancel(fraction: float, message: str = "") -> None:
        if called and "memetic generation" in message:  # the heartbeat inside the descent
            raise JobCanceled("canceled by request while running")

    endless()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(descent, "__call__", descend)
        tick = time.perf_counter()
        with pytest.raises(JobCanceled):
            solve(graph, CndParams(k=k, method="memetic", time_limit_s=600), cancel)
    assert called and time.perf_counter() - tick < 60  # long before its share (540 s)


def test_cancel_reaches_the_descent(monkeypatch: pytest.MonkeyPatch) -> None:
    real = RuinRegrow.__call__

    def endless() -> None:  # a stall count that never ends it
        monkeypatch.setattr(RuinRegrow, "__call__",
                            lambda self, nodes, stall, deadline: real(self, nodes, 10**9,
                                                                      deadline))

    canceled_in_descent(critical_nodes_cpu, RuinRegrow, endless)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_cancel_reaches_the_gpu_descent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU's chains check for cancel between launches."""
    from graphgpu.kernels.algorithms.critical_nodes import critical_nodes_gpu, gpu_ruin

    canceled_in_descent(critical_nodes_gpu, gpu_ruin.GpuDescent, lambda: monkeypatch.setattr(
        gpu_ruin, "DESCENT_STALL_LAUNCHES", 10**9))


def test_descent_reports_its_better_sets_as_they_come() -> None:
    g = nx.random_regular_graph(3, 4 * RUIN_NODES, seed=6)
    graph = from_nx(g)
    k = 4 * RUIN_NODES // 20
    seen = []
    improver = CpuImprover(graph, k, 1)
    improver.report = lambda objective, nodes: seen.append((objective, nodes))
    out = improver.descend(np.arange(k), math.inf)
    assert seen and [o for o, _ in seen] == sorted({o for o, _ in seen}, reverse=True)
    for objective, nodes in seen:
        assert objective == pairs_left(g, set(nodes.tolist()))
    assert seen[-1][0] == pairs_left(g, set(out.tolist()))


def test_gpu_descent_past_shared_memory_keeps_its_chains_in_global_memory() -> None:
    """Where two chains' state passes a multiprocessor's shared memory (H100 figures, no device
    needed), the GPU still descends while a round is short: a chain a multiprocessor, each in
    its slice of a global scratch, which the memetic's memory estimate counts; a graph whose
    round would be long descends on the host, and its estimate counts no chains."""
    from graphgpu.kernels.algorithms.critical_nodes import gpu_ruin
    from graphgpu.kernels.algorithms.critical_nodes.gpu import memetic_device_bytes

    ring = from_nx(nx.cycle_graph(30_000))
    k = 3_000
    assert not gpu_ruin.in_shared(ring.n, k, on_gpu=False)
    # One chain a multiprocessor in shared memory: global memory's wider blocks instead.
    assert gpu_ruin.shared_bytes(20_000, 2_000) <= gpu_ruin.SHARED_BYTES
    assert not gpu_ruin.in_shared(20_000, 2_000, on_gpu=False)
    assert gpu_ruin.in_shared(5_000, 500, on_gpu=False)
    assert gpu_ruin.on_gpu_chains(ring, k, on_gpu=False)
    chains = gpu_ruin.descent_chains(ring.n, k, 132, on_gpu=False)
    assert chains == 132 * gpu_ruin.GLOBAL_CHAINS_PER_SM
    state = gpu_ruin.state_bytes(ring.n, k)
    assert state >= 8 * ring.n and state % 256 == 0
    assert gpu_ruin.descent_bytes(ring.n, k, on_gpu=False) == 4 * k + 8 + state
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gpu_ruin, "ROUND_SECONDS_MAX", 0.0)
        without = memetic_device_bytes(ring, k)
        assert not gpu_ruin.on_gpu_chains(ring, k, on_gpu=False)
    assert memetic_device_bytes(ring, k) - without >= chains * state
