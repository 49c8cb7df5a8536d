"""critical_nodes: every method on degenerate graphs; the memetic search (quality, anytime,
determinism, time limit, cancel) on both backends."""

from __future__ import annotations

import time

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.critical_nodes import (
    CndParams,
    critical_nodes_cpu,
    estimate,
    merge_results,
    shard_params,
)
from graphgpu.kernels.algorithms.critical_nodes.cpu import CpuImprover
from graphgpu.kernels.algorithms.critical_nodes.memetic import Filler, Memetic, sizes_for
from graphgpu.kernels.algorithms.critical_nodes.moves import (
    CTL_BEST_ITER,
    CTL_ITER,
    best_cut,
    cheapest_restore,
    rand_below,
    restore_node,
)
from graphgpu.kernels.algorithms.critical_nodes.search import (
    SearchState,
    block_delete,
    block_restore,
)
from graphgpu.kernels.algorithms.critical_nodes.tuning import BLOCK_NODES, POLISH_MAX_WORK
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import JobCanceled
from graphgpu.kernels.core.registry import no_progress
from tests.kernels.algorithms.critical_nodes.test_critical_nodes import (
    brute_force,
    check,
    from_nx,
    pairs_left,
    run,
)

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="no GPU")
METHODS = ("greedy", "multistart", "distributed", "search", "memetic")


def degenerate() -> dict[str, nx.Graph]:
    """Shapes where ties, empty residual graphs and k close to n are the rule."""
    return {"star": nx.star_graph(12), "path": nx.path_graph(15), "clique": nx.complete_graph(9),
            "isolated": nx.empty_graph(7),
            "disconnected": nx.disjoint_union_all([nx.complete_graph(5), nx.path_graph(6),
                                                   nx.star_graph(4), nx.empty_graph(3)]),
            "gnp": nx.gnp_random_graph(40, 0.08, seed=11)}


def planted(clusters: int = 8, size: int = 15, bridges: int = 7, seed: int = 1
            ) -> tuple[nx.Graph, list[int], int]:
    """Dense clusters joined only through ``bridges`` extra nodes (each tied to two neighbouring
    clusters and one random one): deleting the bridges leaves the clusters, the optimum for
    k = bridges; the graph, the bridges and that objective."""
    rng = np.random.default_rng(seed)
    g = nx.Graph()
    for c in range(clusters):
        part = nx.gnp_random_graph(size, 0.5, seed=seed + c)
        assert nx.is_connected(part)
        g = nx.disjoint_union(g, part)
    first = clusters * size
    for b in range(bridges):
        for c in {b, b + 1, int(rng.integers(clusters))}:
            for v in rng.choice(size, 3, replace=False):
                g.add_edge(first + b, c * size + int(v))
    return g, list(range(first, first + bridges)), clusters * size * (size - 1) // 2


@pytest.mark.parametrize("name", sorted(degenerate()))
def test_every_method_is_valid_on_degenerate_graphs(name: str) -> None:
    g = degenerate()[name]
    graph = from_nx(g)
    for k in sorted({1, 2, graph.n // 2, graph.n - 2, graph.n - 1} - {0}):
        optimum = brute_force(g, k) if graph.n <= 15 and k <= 3 else None
        for method in METHODS:
            limit = 5.0 if method == "memetic" else 0.05  # memetic: ended by generations
            result = run(graph, method=method, k=k, seed=3, starts=3, time_limit_s=limit,
                         generations=5)
            check(g, graph, result, k)
            if optimum is not None and method in ("search", "memetic"):
                assert result.summary["objective"] == optimum, (method, k)
        if k >= graph.n - 2:  # at most two nodes left
            assert result.summary["objective"] == pairs_left(g, set(
                result.arrays["critical"].tolist())) <= 1


def test_memetic_finds_the_planted_bridges_where_greedy_does_not() -> None:
    g, bridges, optimum = planted()
    graph = from_nx(g)
    k = len(bridges)
    greedy = run(graph, method="greedy", k=k, seed=0)
    memetic = run(graph, method="memetic", k=k, seed=0, time_limit_s=30, generations=30)
    check(g, graph, memetic, k)
    assert greedy.summary["objective"] > optimum
    assert memetic.summary["objective"] == optimum
    assert sorted(memetic.arrays["critical"].tolist()) == bridges


def test_memetic_is_deterministic_per_seed_and_beats_greedy() -> None:
    g = nx.barabasi_albert_graph(300, 2, seed=5)
    graph = from_nx(g)
    params = {"method": "memetic", "k": 25, "time_limit_s": 60, "generations": 15}
    first = run(graph, seed=4, **params)
    again = run(graph, seed=4, **params)
    other = run(graph, seed=5, **params)
    for result in (first, again, other):
        check(g, graph, result, 25)
    assert np.array_equal(first.arrays["critical"], again.arrays["critical"])
    assert first.summary["timeline"][-1][1] == first.summary["objective"]
    assert first.summary["generations"] == 15 and first.summary["backend"] == "cpu"
    greedy = run(graph, method="greedy", k=25, seed=4).summary["objective"]
    assert max(first.summary["objective"], other.summary["objective"]) <= greedy


def test_memetic_is_anytime_and_honours_the_time_limit() -> None:
    # n * k past POLISH_MAX_WORK: the memetic search to the end (no search phase)
    g = nx.watts_strogatz_graph(3000, 6, 0.1, seed=2)
    graph = from_nx(g)
    assert graph.n * 400 > POLISH_MAX_WORK
    run(graph, method="memetic", k=400, time_limit_s=0.2)  # compiled before it is timed
    calls: list[tuple[float, str]] = []
    tick = time.perf_counter()
    result = critical_nodes_cpu(graph, CndParams(k=400, method="memetic", time_limit_s=1.0),
                                lambda fraction, message="": calls.append((fraction, message)))
    assert time.perf_counter() - tick < 1.0 + 5.0  # generous: a shared machine
    check(g, graph, result, 400)
    assert result.summary["polish_gain"] == 0
    timeline = result.summary["timeline"]
    assert timeline[0][0] < 1.0  # a valid set long before the limit
    objectives = [o for _, o in timeline]
    assert objectives == sorted(objectives, reverse=True) and len(set(objectives)) == len(
        objectives)
    assert objectives[-1] == result.summary["objective"]
    messages = [m for _, m in calls if "memetic best" in m]
    assert len(messages) == len(timeline)
    assert messages[-1].startswith(f"critical_nodes: memetic best {int(objectives[-1])} ")
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_a_timed_memetic_run_on_a_small_instance_ends_with_the_search() -> None:
    g = nx.watts_strogatz_graph(250, 10, 0.2, seed=3)
    graph = from_nx(g)
    assert graph.n * 60 <= POLISH_MAX_WORK
    run(graph, method="memetic", k=60, time_limit_s=0.2)  # compiled before it is timed
    calls: list[tuple[float, str]] = []
    tick = time.perf_counter()
    result = critical_nodes_cpu(graph, CndParams(k=60, method="memetic", time_limit_s=1.5),
                                lambda fraction, message="": calls.append((fraction, message)))
    assert time.perf_counter() - tick < 1.5 + 5.0
    check(g, graph, result, 60)
    messages = [m for _, m in calls]
    searched = [i for i, m in enumerate(messages) if m.startswith("critical_nodes: search best")]
    assert searched and min(searched) > max(i for i, m in enumerate(messages) if "memetic" in m)
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    summary = result.summary
    objectives = [o for _, o in summary["timeline"]]
    assert objectives == sorted(objectives, reverse=True) and len(set(objectives)) == len(
        objectives) and objectives[-1] == summary["objective"]
    assert summary["polish_gain"] >= 0 and summary["iterations"] > 0
    # A run of generations is the memetic search alone (deterministic per seed).
    calls.clear()
    critical_nodes_cpu(graph, CndParams(k=60, method="memetic", generations=2, time_limit_s=60),
                       lambda fraction, message="": calls.append((fraction, message)))
    assert not any(m.startswith("critical_nodes: search best") for _, m in calls)


def test_memetic_can_be_canceled() -> None:
    graph = from_nx(nx.watts_strogatz_graph(500, 4, 0.1, seed=3))
    seen: list[str] = []

    def cancel(fraction: float, message: str = "") -> None:
        seen.append(message)
        if len(seen) == 3:
            raise JobCanceled("canceled by request while running")

    tick = time.perf_counter()
    with pytest.raises(JobCanceled):
        critical_nodes_cpu(graph, CndParams(k=50, method="memetic", time_limit_s=60), cancel)
    assert time.perf_counter() - tick < 30  # long before the limit

    def cancel_between_bests(fraction: float, message: str = "") -> None:
        if "memetic generation" in message:  # the heartbeat: no new best came for a while
            raise JobCanceled("canceled by request while running")

    big = from_nx(nx.watts_strogatz_graph(3000, 6, 0.1, seed=4))
    tick = time.perf_counter()
    with pytest.raises(JobCanceled):
        critical_nodes_cpu(big, CndParams(k=300, method="memetic", time_limit_s=60),
                           cancel_between_bests)
    assert time.perf_counter() - tick < 30


def test_memetic_sizes_and_estimate() -> None:
    small, large = sizes_for(500, 50), sizes_for(100_000, 10_000)
    assert small[0] > large[0] >= 2  # fewer members on large graphs
    assert small[1] < large[1]  # longer improvements where k is large
    graph = from_nx(nx.path_graph(50))
    cpu = estimate(graph, CndParams(k=5, method="memetic", time_limit_s=3), "cpu")
    gpu = estimate(graph, CndParams(k=5, method="memetic", time_limit_s=3), "gpu")
    assert cpu.seconds == gpu.seconds and 3 <= cpu.seconds < 3.1  # the limit, and the check
    assert gpu.device_bytes > cpu.device_bytes


def test_swap_moves_keep_the_components_exact() -> None:
    # Moves delete non-cut nodes in place and merge restored nodes small-to-large: the labels
    # must still be the residual graph's components after every batch.
    for seed, g in enumerate((nx.gnp_random_graph(120, 0.03, seed=1),
                              nx.barabasi_albert_graph(150, 1, seed=2),
                              nx.watts_strogatz_graph(100, 4, 0.2, seed=3))):
        graph = from_nx(g)
        chain = SearchState(graph.indptr, graph.indices, np.arange(0, 30, 2), seed)
        for _ in range(20):
            chain.run(7, 25)
            gone = set(np.flatnonzero(chain.deleted).tolist())
            assert len(gone) == 15
            assert int(chain.ctl[0]) == pairs_left(g, gone)  # CTL_OBJ
            for members in nx.connected_components(g.subgraph(set(g) - gone)):
                labels = {int(chain.label[v]) for v in members}
                assert len(labels) == 1 and chain.size[labels.pop()] == len(members)
            assert (chain.label[list(gone)] == -1).all()
        # Greedy completion: exact (cached walks, pieces relabelled) and, with a tiny time
        # limit, in batches of several nodes per walk.
        for filler in (Filler(graph, 20, seed), Filler(graph, 20, seed, limit=1e-6)):
            check_completion(g, filler)


def test_block_moves_on_a_giant_component_keep_the_state_exact() -> None:
    # A component of BLOCK_NODES * b nodes or more loses b nodes per articulation walk, then b
    # cheapest ones return: labels, sizes, objective and best set must stay exact, with and
    # without the memetic improvement's random picks, and the chain deterministic per seed.
    g = nx.barabasi_albert_graph(4 * BLOCK_NODES + 500, 2, seed=4)
    graph = from_nx(g)
    start = np.arange(0, 120, 3)
    for patience in (60, -10**6):
        chains = [SearchState(graph.indptr, graph.indices, start, 5) for _ in range(2)]
        assert chains[0].size.max() >= 4 * BLOCK_NODES  # the block path is taken
        for _ in range(4):
            for chain in chains:
                chain.run(15, patience)
            assert chains[0].best_objective == chains[1].best_objective
            assert np.array_equal(chains[0].best, chains[1].best)
            chain = chains[0]
            gone = set(np.flatnonzero(chain.deleted).tolist())
            assert len(gone) == 40 and (chain.label[list(gone)] == -1).all()
            assert int(chain.ctl[0]) == pairs_left(g, gone)  # CTL_OBJ
            for members in nx.connected_components(g.subgraph(set(g) - gone)):
                labels = {int(chain.label[v]) for v in members}
                assert len(labels) == 1 and chain.size[labels.pop()] == len(members)
            assert len(set(chain.best.tolist())) == 40
            assert chain.best_objective == pairs_left(g, set(chain.best.tolist()))
        assert chains[0].best_objective < pairs_left(g, set(start.tolist()))


def test_block_moves_pick_what_a_scan_per_node_picks() -> None:
    # block_delete ranks the members once and block_restore reads each deleted node's
    # neighbours once per block: both must choose exactly what a full scan per deleted or
    # returned node chooses (the same random draws among ties), from many chain states.
    g = nx.barabasi_albert_graph(4 * BLOCK_NODES + 500, 2, seed=6)
    graph = from_nx(g)
    ip, ix = graph.indptr, graph.indices
    k, block = 60, 4
    chain = SearchState(ip, ix, np.arange(0, 2 * k, 2), 7)
    for _ in range(12):
        chain.run(5, -10**6)
        it = int(chain.ctl[CTL_ITER])  # the move a chain would make next
        c = int(chain.label[np.argmax(chain.size[chain.label.clip(0)])])
        root = int(np.flatnonzero(chain.label == c)[0])
        best_cut(ip, ix, chain.deleted, chain.label, chain.size, chain.tabu, chain.ctl, root,
                 chain.queue, *chain.scratch, *chain.cut)
        ours, theirs = chain, copy_of(chain)
        # The scan per deletion (the component's members are in ``queue``, their pairs
        # left in ``cut_pairs``): the best non-tabu, ties to the higher degree, then the first.
        members = theirs.queue[:int(theirs.size[c])].copy()
        rank = sorted((m for m in members if not theirs.deleted[m] and theirs.tabu[m] <= it),
                      key=lambda m: (theirs.cut[0][m], -(ip[m + 1] - ip[m])))
        shake = rand_below(theirs.ctl, 2) == 0  # with and without random picks
        rand_below(ours.ctl, 2)
        picks = []
        for _b in range(block):
            left = [m for m in rank if m not in picks]
            if not left:
                break
            pick = left[0]
            if shake and rand_below(theirs.ctl, 4) == 0:
                w = int(members[rand_below(theirs.ctl, len(members))])
                if w not in picks and not theirs.deleted[w] and theirs.tabu[w] <= it:
                    pick = w
            picks.append(pick)
            theirs.tabu[pick] = it + 1 + rand_below(theirs.ctl, 3)
        nd = block_delete(ip, ix, k, block, ours.ctl, ours.deleted, ours.label, ours.size,
                          ours.free, ours.dlist, ours.dpos, ours.tabu, ours.seen, ours.queue,
                          ours.cut[0], c, it, shake, ours.block[0], ours.block[2], ours.block[6])
        assert ours.dlist[k:nd].tolist() == picks
        assert np.array_equal(ours.tabu, theirs.tabu)
        assert np.array_equal(ours.ctl[3], theirs.ctl[3])  # CTL_RNG: the same draws
        # From the same state after the deletions: a full scan per returned node.
        theirs = copy_of(ours)
        block_restore(ip, ix, k, nd, it, ours.ctl, ours.deleted, ours.label, ours.size,
                      ours.free, ours.dlist, ours.dpos, ours.tabu, ours.seen, ours.mark,
                      ours.queue, *ours.block[1:])
        while nd > k:
            u = cheapest_restore(ip, ix, theirs.deleted, theirs.label, theirs.size, theirs.dlist,
                                 nd, theirs.tabu, theirs.ctl, theirs.mark)
            nd = restore_node(ip, ix, theirs.deleted, theirs.label, theirs.size, theirs.free,
                              theirs.dlist, theirs.dpos, theirs.ctl, theirs.seen, theirs.queue,
                              u, nd)
            theirs.tabu[u] = it + 1 + rand_below(theirs.ctl, 3 + k // 10)
        for a, b in ((ours.dlist[:k], theirs.dlist[:k]), (ours.label, theirs.label),
                     (ours.size, theirs.size), (ours.tabu, theirs.tabu),
                     (ours.ctl[:4], theirs.ctl[:4])):  # objective, free labels, moves, draws
            assert np.array_equal(a, b)
        assert int(ours.ctl[0]) == pairs_left(g, set(ours.dlist[:k].tolist()))


def test_block_moves_use_up_patience_by_their_exchanges() -> None:
    # The memetic improvement ends a chain after ``patience`` exchanges without a new best: a
    # block move on a giant component counts its b exchanges, so the chain ends after fewer
    # moves than exchanges (on ca-CondMat the wait had been ~9,000 moves of ~8 exchanges).
    g = nx.barabasi_albert_graph(4 * BLOCK_NODES + 500, 2, seed=4)
    graph = from_nx(g)
    chain = SearchState(graph.indptr, graph.indices, np.arange(0, 120, 3), 5)
    patience = 200
    chain.run(10**6, -patience)
    idle = chain.iterations - int(chain.ctl[CTL_BEST_ITER])
    assert chain.stalled >= patience and 0 < idle < patience
    assert chain.best_objective == pairs_left(g, set(chain.best.tolist()))


def copy_of(chain: SearchState) -> SearchState:
    """A chain with copies of ``chain``'s arrays."""
    twin = SearchState(chain.indptr, chain.indices, chain.best.copy(), 0)
    for name in ("ctl", "deleted", "label", "size", "free", "dlist", "dpos", "tabu", "best",
                 "seen", "mark", "queue"):
        setattr(twin, name, getattr(chain, name).copy())
    twin.scratch = [a.copy() for a in chain.scratch]
    twin.cut = tuple(a.copy() for a in chain.cut)
    return twin


def check_completion(g: nx.Graph, filler: Filler) -> None:
    if filler.limit > 0:
        assert filler.batch(20) > 1
    for partial in (np.zeros(0, np.int32), np.arange(0, 20, 3, dtype=np.int32)):
        nodes = filler.complete(partial, time.perf_counter() + 60)
        assert len(set(nodes.tolist())) == 20 and set(partial.tolist()) <= set(nodes.tolist())
        state = filler.state
        assert int(state.ctl[0]) == pairs_left(g, set(nodes.tolist()))
        for members in nx.connected_components(g.subgraph(set(g) - set(nodes.tolist()))):
            labels = {int(state.label[v]) for v in members}
            assert len(labels) == 1 and state.size[labels.pop()] == len(members)


def test_distributed_memetic_islands() -> None:
    g = nx.barabasi_albert_graph(200, 2, seed=8)
    graph = from_nx(g)
    params = CndParams(k=15, method="distributed", shard_method="memetic", shards=3, seed=2,
                       time_limit_s=30, generations=4)
    shards = shard_params(params)
    assert [s["method"] for s in shards] == ["memetic"] * 3
    assert len({s["seed"] for s in shards}) == 3 and shards[0]["seed"] == 2
    summaries = [run(graph, **s).summary for s in shards]
    index, merged = merge_results(params, [summaries[0], None, summaries[2]])
    assert merged["objective"] == min(summaries[0]["objective"], summaries[2]["objective"])
    assert merged["best_start"] == index == merged["shard"] and merged["shards_ok"] == 2
    whole = critical_nodes_cpu(graph, params, no_progress)  # in-process: the first island
    check(g, graph, whole, 15)
    assert whole.summary["method"] == "distributed"
    assert whole.summary["objective"] == summaries[0]["objective"]
    assert 30 <= estimate(graph, params, "cpu").seconds < 30.1


def test_island_arrivals_are_checked_and_join_the_population() -> None:
    g = nx.barabasi_albert_graph(300, 2, seed=5)
    graph, k = from_nx(g), 10
    hubs = np.argsort(-np.diff(graph.indptr), kind="stable")[:k].astype(np.int64)
    poor = np.arange(k, dtype=np.int64)  # low-degree early nodes: a poor set
    sent: list[tuple[int, list[int]]] = []

    def exchange(objective: int, nodes: np.ndarray) -> list[tuple[int, np.ndarray]]:
        sent.append((objective, sorted(nodes.tolist())))
        return [(0, hubs[:-1]),                                  # too few nodes
                (0, np.concatenate([hubs[:-1], hubs[:1]])),      # a node twice
                (0, np.concatenate([hubs[:-1], [graph.n]])),     # not a node
                (0, hubs)]                                       # valid; its claim is a lie

    started = time.perf_counter()
    island = Memetic(graph, k, 0, CpuImprover(graph, k, 0), 1, started, started + 60,
                     no_progress, exchange=exchange)
    island.offer(pairs_left(g, set(poor.tolist())), poor)
    island.members = [island.best, (island.best[0] + 1, np.arange(1, k + 1))]
    island.next_migration = 0.0
    island.migrate()
    truth = pairs_left(g, set(hubs.tolist()))
    assert sent == [(pairs_left(g, set(poor.tolist())), poor.tolist())]
    assert island.best[0] == truth < sent[0][0]  # recomputed, not the claimed 0
    assert island.out.migrants == 1
    assert any(o == truth and m.tolist() == sorted(hubs.tolist()) for o, m in island.members)
    island.migrate()  # not due again until MIGRATION_SHARE of the limit has passed
    assert len(sent) == 1


# ------------------------------------------------------------------------------------------------
# GPU (run with -m gpu on a CUDA machine)
# ------------------------------------------------------------------------------------------------


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", sorted(degenerate()))
def test_gpu_every_method_is_valid_on_degenerate_graphs(name: str) -> None:
    g = degenerate()[name]
    graph = from_nx(g)
    for k in sorted({1, 2, graph.n // 2, graph.n - 1}):
        for method in METHODS:
            limit = 5.0 if method == "memetic" else 0.05
            result = run(graph, "gpu", method=method, k=k, seed=3, starts=3,
                         time_limit_s=limit, generations=3)
            check(g, graph, result, k)
            assert result.summary["backend"] == "gpu"


@pytest.mark.gpu
@needs_gpu
def test_gpu_memetic_finds_the_bridges_and_is_deterministic() -> None:
    g, bridges, optimum = planted()
    graph = from_nx(g)
    params = {"method": "memetic", "k": len(bridges), "seed": 2, "time_limit_s": 60,
              "generations": 10}
    first = run(graph, "gpu", **params)
    again = run(graph, "gpu", **params)
    check(g, graph, first, len(bridges))
    assert first.summary["objective"] == optimum
    assert np.array_equal(first.arrays["critical"], again.arrays["critical"])
    ba = from_nx(nx.barabasi_albert_graph(400, 2, seed=6))
    a = run(ba, "gpu", method="memetic", k=30, seed=1, time_limit_s=60, generations=5)
    b = run(ba, "gpu", method="memetic", k=30, seed=1, time_limit_s=60, generations=5)
    assert np.array_equal(a.arrays["critical"], b.arrays["critical"])
    tick = time.perf_counter()
    timed = run(ba, "gpu", method="memetic", k=30, time_limit_s=0.5)
    assert time.perf_counter() - tick < 0.5 + 5.0
    assert timed.summary["iterations"] > 0


def medium() -> dict[str, nx.Graph]:
    """Graph families where CND* and articulation gains each win somewhere."""
    return {"ba": nx.barabasi_albert_graph(400, 2, seed=3),
            "ws": nx.watts_strogatz_graph(300, 4, 0.1, seed=4),
            "tree": nx.random_labeled_tree(300, seed=5),
            "er": nx.gnp_random_graph(300, 0.012, seed=6)}


def never_worse(backend: str) -> None:
    for g in medium().values():
        graph = from_nx(g)
        k = g.number_of_nodes() // 10
        greedy = run(graph, backend, k=k).summary["objective"]
        for method in ("search", "memetic"):
            result = run(graph, backend, k=k, method=method, time_limit_s=0.5)
            check(g, graph, result, k)  # valid, objective recomputed by NetworkX
            assert result.summary["objective"] <= greedy, method


def test_search_and_memetic_are_never_worse_than_greedy() -> None:
    never_worse("cpu")


def test_search_starts_fit_in_a_share_of_its_time_limit() -> None:
    graph = from_nx(nx.barabasi_albert_graph(3000, 2, seed=1))
    result = run(graph, k=30, method="search", starts=1 << 16, time_limit_s=0.3)
    assert 1 <= result.summary["starts_run"] < 1 << 16


@pytest.mark.gpu
@needs_gpu
def test_gpu_search_and_memetic_are_never_worse_than_greedy() -> None:
    never_worse("gpu")


@pytest.mark.gpu
@needs_gpu
def test_gpu_swap_chains_keep_their_objectives_exact() -> None:
    # The chains' moves relabel only the smaller side of a split or merge (the largest piece
    # keeps its label): every chain's best set must still have the objective it claims, on
    # trees (every inner node a cut), a giant component with hubs, and many small pieces.
    from graphgpu.kernels.algorithms.critical_nodes.gpu import GpuImprover
    from graphgpu.kernels.algorithms.critical_nodes.result import objective_of

    cases = {"tree": nx.random_labeled_tree(1500, seed=2),
             "ba": nx.barabasi_albert_graph(1200, 2, seed=3),
             "pieces": nx.disjoint_union_all([nx.gnp_random_graph(400, 0.006, seed=4),
                                              nx.star_graph(30), nx.path_graph(50),
                                              nx.empty_graph(5)])}
    rng = np.random.default_rng(0)
    for name, g in cases.items():
        graph = from_nx(g)
        for k in (5, 40):
            improve = GpuImprover(graph, k, seed=1)
            sets = [rng.choice(graph.n, k, replace=False) for _ in range(6)]
            for objective, nodes in improve(sets, 400, time.perf_counter() + 60):
                assert np.unique(nodes).shape == (k,), name
                assert objective == objective_of(graph, nodes)[0], (name, k)
            # The plain search (no random moves): its claimed objective is checked against
            # SciPy's in the result.
            check(g, graph, run(graph, "gpu", method="search", k=k, starts=4,
                                time_limit_s=0.3), k)

