"""critical_nodes: objective against brute force, CND* invariants, CNP instances; GPU = CPU."""

from __future__ import annotations

import csv
import itertools

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.critical_nodes import (
    CndParams,
    critical_nodes_cpu,
    critical_nodes_gpu,
    estimate,
    merge_results,
    objective_of,
    shard_params,
)
from graphgpu.kernels.algorithms.critical_nodes import gpu as cnd_gpu
from graphgpu.kernels.algorithms.critical_nodes import greedy as cnd_cpu
from graphgpu.kernels.algorithms.critical_nodes.memetic import population_starts
from graphgpu.kernels.algorithms.critical_nodes.tuning import STARTS_MIN
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput, JobCanceled
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.io.formats import parse_graph
from graphgpu.kernels.core.registry import get_algorithm, no_progress
from tests.conftest import SHARED

CNP_DIR = SHARED / "data" / "cnp"
needs_gpu = pytest.mark.skipif(not gpu_available(), reason="no GPU")


def original(node: np.ndarray | int) -> np.ndarray | int:
    return 3 * np.asarray(node) + 1


def from_nx(g: nx.Graph) -> Graph:
    edges = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    graph, _ = build_graph(original(edges[:, 0]), original(edges[:, 1]),
                           extra_nodes=original(np.arange(g.number_of_nodes())))
    return graph


def pairs_left(g: nx.Graph, removed: set[int]) -> int:
    """The objective straight from NetworkX (internal ids = nx labels here)."""
    h = g.subgraph(set(g) - removed)
    return sum(len(c) * (len(c) - 1) // 2 for c in nx.connected_components(h))


def brute_force(g: nx.Graph, k: int) -> int:
    return min(pairs_left(g, set(s)) for s in itertools.combinations(g, k))


def small_graphs() -> dict[str, nx.Graph]:
    """Small enough for every k-subset; with components, isolated nodes and cycles."""
    mixed = nx.disjoint_union_all([nx.path_graph(4), nx.cycle_graph(4), nx.empty_graph(2)])
    return {"path9": nx.path_graph(9), "star8": nx.star_graph(7),
            "gnp11": nx.gnp_random_graph(11, 0.3, seed=5), "mixed": mixed,
            "tree12": nx.random_labeled_tree(12, seed=3), "barbell": nx.barbell_graph(4, 2)}


SMALL = small_graphs()


def run(graph: Graph, backend: str = "cpu", **params) -> dict:
    fn = critical_nodes_cpu if backend == "cpu" else critical_nodes_gpu
    return fn(graph, CndParams(**params), no_progress)


def removed_internal(graph: Graph, result) -> np.ndarray:
    return graph.internal_ids(graph.to_original(result.arrays["critical"]))


def check(g: nx.Graph, graph: Graph, result, k: int) -> None:
    """Exactly k distinct nodes, flags agree, and the claimed objective is NetworkX's."""
    critical = result.arrays["critical"]
    assert critical.shape == (k,) and np.unique(critical).shape == (k,)
    assert np.array_equal(np.flatnonzero(result.node_values["removed"]), np.sort(critical))
    assert result.summary["objective"] == pairs_left(g, set(critical.tolist()))
    assert result.summary["objective_before"] == pairs_left(g, set())
    sizes = [s for s, c in result.summary["component_sizes"] for _ in range(c)]
    assert sum(sizes) == g.number_of_nodes() - k
    assert result.summary["components"] == len(sizes)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_objective_function_against_networkx(name: str) -> None:
    g = SMALL[name]
    graph = from_nx(g)
    rng = np.random.default_rng(1)
    for _ in range(20):
        removed = rng.choice(graph.n, rng.integers(0, graph.n), replace=False)
        assert objective_of(graph, removed)[0] == pairs_left(g, set(removed.tolist()))


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_method_gives_k_nodes_and_the_searches_find_the_optimum(name: str) -> None:
    g = SMALL[name]
    graph = from_nx(g)
    for k in range(1, graph.n):
        optimum = brute_force(g, k)
        results = {m: run(graph, method=m, k=k, seed=k, starts=4, time_limit_s=0.05)
                   for m in ("greedy", "multistart", "search")}
        results["memetic"] = run(graph, method="memetic", k=k, seed=k, time_limit_s=30,
                                 generations=10)
        for result in results.values():
            check(g, graph, result, k)
            assert result.summary["objective"] >= optimum
        assert results["multistart"].summary["objective"] <= results["greedy"].summary[
            "objective"]
        assert results["search"].summary["objective"] == optimum, (name, k)
        assert results["memetic"].summary["objective"] == optimum, (name, k)


def test_closed_forms() -> None:
    # A path: the best k cuts leave k + 1 pieces as even as can be.
    for n, k in ((20, 2), (31, 4), (50, 6)):
        q, r = divmod(n - k, k + 1)
        best = r * (q + 1) * q // 2 + (k + 1 - r) * q * (q - 1) // 2
        result = run(from_nx(nx.path_graph(n)), method="search", k=k, time_limit_s=0.1)
        assert result.summary["objective"] == best
    # A star loses everything with its centre; a clique keeps n - k nodes together.
    assert run(from_nx(nx.star_graph(30)), k=1).summary["objective"] == 0
    clique = run(from_nx(nx.complete_graph(12)), method="multistart", k=5)
    assert clique.summary["objective"] == 21


def test_cnd_star_invariants_and_trivial_case() -> None:
    g = nx.disjoint_union_all([nx.gnp_random_graph(40, 0.1, seed=2), nx.empty_graph(5),
                               nx.path_graph(6)])
    graph = from_nx(g)
    comp = np.zeros(graph.n, np.int64)
    sizes = np.zeros(graph.n + 1, np.int64)
    mis = cnd_cpu.greedy_mis(graph.indptr, graph.indices, np.uint64(3))
    assert all(not (mis[u] and mis[v]) for u, v in g.edges())  # independent ...
    assert all(mis[v] or any(mis[u] for u in g[v]) for v in g)  # ... and maximal
    forbidden = graph.n - int(mis.sum())
    for k in (1, forbidden - 1, forbidden, forbidden + 3, graph.n - 1):
        total = cnd_cpu.cnd_star(graph.indptr, graph.indices, k, np.uint64(3), comp, sizes)
        assert np.count_nonzero(comp == 0) == k  # forbidden nodes: no component
        if k >= forbidden:  # the trivial case: the MIS (or what is left of it) is independent
            assert total == 0
            assert set(np.flatnonzero(~mis)) <= set(np.flatnonzero(comp == 0))
        ids, counts = np.unique(comp[comp != 0], return_counts=True)
        assert np.array_equal(sizes[ids], counts)  # sizes[component[x]] counts its nodes
        residual = g.subgraph(np.flatnonzero(comp != 0).tolist())
        for members in nx.connected_components(residual):
            assert len({int(comp[v]) for v in members}) == 1  # one id per component
        assert total == pairs_left(g, set(np.flatnonzero(comp == 0).tolist()))


def test_greedy_matches_a_plain_python_cnd_star() -> None:
    g = nx.barabasi_albert_graph(60, 2, seed=4)
    graph = from_nx(g)
    mis = cnd_cpu.greedy_mis(graph.indptr, graph.indices, np.uint64(9))
    selected = set(np.flatnonzero(mis).tolist())
    k = 8
    while len(g) - len(selected) > k:  # the paper's Fig. 1, straight from its definition
        best = min(sorted(set(g) - selected),
                   key=lambda x: pairs_left(g, set(g) - selected - {x}))
        selected.add(best)
    result = run(graph, k=k, seed=9)
    assert set(result.arrays["critical"].tolist()) == set(g) - selected


def test_determinism_and_multistart_winner() -> None:
    graph = from_nx(nx.barabasi_albert_graph(150, 2, seed=1))
    first = run(graph, method="multistart", k=12, starts=10, seed=5)
    again = run(graph, method="multistart", k=12, starts=10, seed=5)
    assert np.array_equal(first.arrays["critical"], again.arrays["critical"])
    singles = [run(graph, k=12, seed=s).summary["objective"] for s in range(5, 15)]
    assert first.summary["objective"] == min(singles)
    assert first.summary["best_start"] == singles.index(min(singles))
    assert first.summary["best_seed"] == 5 + first.summary["best_start"]
    assert len(set(singles)) > 1  # the seed does change the MIS


def test_search_reports_its_best_over_time_and_can_be_canceled() -> None:
    g = nx.watts_strogatz_graph(300, 4, 0.1, seed=2)
    graph = from_nx(g)
    calls: list[tuple[float, str]] = []
    result = critical_nodes_cpu(graph, CndParams(k=30, method="search", time_limit_s=0.3),
                                lambda fraction, message="": calls.append((fraction, message)))
    check(g, graph, result, 30)
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("search best" in m for _, m in calls)
    timeline = result.summary["timeline"]
    assert [o for _, o in timeline] == sorted((o for _, o in timeline), reverse=True)
    assert timeline[-1][1] == result.summary["objective"]
    assert result.summary["time_to_best_s"] == pytest.approx(timeline[-1][0], abs=1e-5)
    assert result.summary["iterations"] > 0

    def cancel(fraction: float, message: str = "") -> None:
        if "search" in message:
            raise JobCanceled("canceled by request while running")

    with pytest.raises(JobCanceled):
        critical_nodes_cpu(graph, CndParams(k=30, method="search", time_limit_s=30), cancel)


def test_distributed_in_process_is_the_multistart_of_its_seeds() -> None:
    graph = from_nx(nx.barabasi_albert_graph(200, 2, seed=3))
    params = {"k": 15, "starts": 9, "seed": 4}
    whole = run(graph, method="distributed", shards=3, **params)
    assert np.array_equal(whole.arrays["critical"],
                          run(graph, method="multistart", **params).arrays["critical"])
    shards = shard_params(CndParams(method="distributed", shards=3, **params))
    assert [(s["seed"], s["starts"]) for s in shards] == [(4, 3), (7, 3), (10, 3)]
    summaries = [run(graph, **s).summary for s in shards]
    index, merged = merge_results(CndParams(method="distributed", **params),
                                  [summaries[0], None, summaries[2]])
    assert merged["shards_ok"] == 2 and merged["shard"] == index and index != 1
    assert merged["objective"] == min(summaries[0]["objective"], summaries[2]["objective"])
    with pytest.raises(InvalidInput):
        merge_results(CndParams(method="distributed", **params), [None, None, None])
    assert shard_params(CndParams(method="multistart", **params)) is None


def test_k_must_leave_a_node() -> None:
    graph = from_nx(nx.path_graph(5))
    for backend in ("cpu", "gpu"):
        with pytest.raises(InvalidInput) as err:
            estimate(graph, CndParams(k=5), backend)
        assert err.value.field == "k"
    with pytest.raises(InvalidInput):
        run(graph, k=5)
    assert estimate(graph, CndParams(k=4), "cpu").result_bytes > 0
    big = from_nx(nx.barabasi_albert_graph(2000, 2, seed=1))
    costs = {m: estimate(big, CndParams(k=50, method=m, starts=512), "gpu")
             for m in ("greedy", "multistart", "search")}
    assert costs["greedy"].device_bytes < costs["multistart"].device_bytes
    assert costs["multistart"].device_bytes < costs["search"].device_bytes
    assert costs["greedy"].seconds < costs["multistart"].seconds  # two waves of 264 starts
    # The CPU's CND* is near-linear; searches take their time limit.
    small = from_nx(nx.barabasi_albert_graph(200, 2, seed=1))
    ratio = estimate(big, CndParams(k=5), "cpu").seconds / estimate(small, CndParams(k=5),
                                                                     "cpu").seconds
    assert 5 < ratio < 20
    assert estimate(big, CndParams(k=50, method="search", time_limit_s=2.0), "cpu").seconds >= 2
    assert get_algorithm("critical_nodes").estimate is estimate


def test_gpu_backend_runs_few_starts_on_large_graphs_on_the_host() -> None:
    # A GPU start's steps each pass over the nodes: a lone start on a large graph goes to the
    # host's near-linear CND* (estimated the same), a full wave on a small graph stays a wave.
    big = from_nx(nx.barabasi_albert_graph(20000, 2, seed=1))
    assert cnd_gpu.on_host(big, 10, 1, on_gpu=False)
    assert estimate(big, CndParams(k=10), "gpu").seconds == estimate(big, CndParams(k=10),
                                                                    "cpu").seconds
    small = from_nx(nx.barabasi_albert_graph(300, 2, seed=1))
    assert not cnd_gpu.on_host(small, 10, 264, on_gpu=False)
    wave = estimate(small, CndParams(k=10, method="multistart", starts=264), "gpu")
    assert wave.detail.startswith("1 rounds") and wave.seconds < estimate(
        small, CndParams(k=10, method="multistart", starts=264), "cpu").seconds
    assert run(small, "cpu", k=10).summary["starts_on"] == "cpu"
    memetic = run(small, "cpu", k=10, method="memetic", time_limit_s=0.2)
    assert memetic.summary["starts_on"] == "cpu" and memetic.summary["starts_run"] >= 1


def test_gpu_memetic_takes_the_cpus_population_starts_where_a_wave_is_too_slow() -> None:
    # A GPU wave's steps each pass over the nodes: on a large graph its memetic population
    # starts from the host's CND* starts, as many as the CPU backend's (not a lone seed: CND*
    # is bimodal on some graphs), and says so; no device is touched for it.
    big = from_nx(nx.barabasi_albert_graph(20000, 2, seed=1))
    sets, where = cnd_gpu.cnd_starts(big, 10, 3, 5.0, 263)
    host, on = population_starts(big, 10, 3, 5.0)
    assert where == on == "cpu" and len(sets) == len(host) >= STARTS_MIN
    assert all(np.array_equal(a, b) for a, b in zip(sets, host, strict=True))
    assert population_starts(big, 10, 3, 1e-6) == ([], None)  # not even one fits


@pytest.mark.skipif(not CNP_DIR.is_dir(), reason="no CNP instances beside the repository")
def test_reads_the_cnp_instances() -> None:
    with (CNP_DIR / "instances.tsv").open() as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) == 16
    for row in rows:
        parsed = parse_graph((CNP_DIR / row["file"]).read_bytes(), "cnp")
        graph, _ = build_graph(parsed.src, parsed.dst, extra_nodes=parsed.extra_nodes)
        assert (graph.n, graph.m) == (int(row["n"]), int(row["m"])), row["name"]
    row = rows[0]  # BA500: a tree, where the best-known objective is optimal
    parsed = parse_graph((CNP_DIR / row["file"]).read_bytes(), "cnp")
    graph, _ = build_graph(parsed.src, parsed.dst, extra_nodes=parsed.extra_nodes)
    result = run(graph, method="search", k=int(row["k"]), time_limit_s=0.5, starts=2)
    assert result.summary["objective"] >= int(row["best_known_objective"])


# ------------------------------------------------------------------------------------------------
# GPU (run with -m gpu on a CUDA machine)
# ------------------------------------------------------------------------------------------------


def gpu_cases() -> dict[str, nx.Graph]:
    return {**SMALL, "ba": nx.barabasi_albert_graph(400, 1, seed=2),
            "ws": nx.watts_strogatz_graph(300, 4, 0.1, seed=3),
            "hubs": nx.barabasi_albert_graph(300, 3, seed=4),
            "mixed_big": nx.disjoint_union_all([nx.gnp_random_graph(200, 0.02, seed=6),
                                                nx.empty_graph(30), nx.star_graph(60)]),
            # long enough for a giant component to form and change hands (the GPU keeps the
            # costs next to the big component as alpha * its size + beta)
            "ba2000": nx.barabasi_albert_graph(2000, 2, seed=7),
            "gnp1500": nx.disjoint_union_all([nx.gnp_random_graph(1000, 0.003, seed=8),
                                              nx.gnp_random_graph(500, 0.006, seed=9)])}


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", sorted(gpu_cases()))
def test_gpu_greedy_and_multistart_equal_cpu(name: str) -> None:
    g = gpu_cases()[name]
    graph = from_nx(g)
    for k in sorted({1, graph.n // 10 + 1, graph.n // 2, graph.n - 1}):
        for params in ({"method": "greedy", "seed": 3}, {"method": "multistart", "starts": 300}):
            cpu = run(graph, "cpu", k=k, **params)
            gpu = run(graph, "gpu", k=k, **params)
            check(g, graph, gpu, k)
            assert np.array_equal(cpu.arrays["critical"], gpu.arrays["critical"]), (k, params)
            assert cpu.summary["best_start"] == gpu.summary["best_start"]


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", ["ba2000", "gnp1500", "hubs"])
def test_gpu_kernel_and_host_starts_equal_cpu(name: str) -> None:
    # The GPU backend's greedy and few-start multistart may run on the host (on_host): both
    # paths must give the CPU's sets, the GPU kernel's lone start included.
    graph = from_nx(gpu_cases()[name])
    comp, sizes = np.zeros(graph.n, np.int64), np.zeros(graph.n + 1, np.int64)
    for k in (1, graph.n // 10 + 1):
        cnd_cpu.cnd_star(graph.indptr, graph.indices, k, np.uint64(4), comp, sizes)
        kernel = cnd_gpu.multistart(graph, k, range(4, 5), no_progress)
        assert np.array_equal(kernel.removed, comp == 0), k
        cpu = run(graph, "cpu", k=k, method="multistart", starts=6, seed=4)
        host = cnd_gpu.host_starts(graph, k, range(4, 10), no_progress)
        assert host.objective == cpu.summary["objective"] and host.run == 6
        assert host.start == cpu.summary["best_start"]
        assert np.array_equal(np.flatnonzero(host.removed),
                              removed_internal(graph, cpu)), k



@pytest.mark.gpu
@needs_gpu
def test_gpu_backend_records_where_its_starts_ran() -> None:
    # The host's starts are part of the GPU backend's greedy (on_host): the summary says so.
    big = from_nx(nx.barabasi_albert_graph(20000, 2, seed=1))
    on_host = run(big, "gpu", k=10)
    assert on_host.summary["starts_on"] == "cpu"
    assert on_host.summary["objective"] == run(big, "cpu", k=10).summary["objective"]
    small = from_nx(nx.barabasi_albert_graph(300, 2, seed=1))
    assert run(small, "gpu", k=10, method="multistart", starts=264).summary["starts_on"] == "gpu"
    memetic = run(small, "gpu", k=10, method="memetic", time_limit_s=0.5).summary
    assert memetic["starts_on"] == "gpu" and memetic["starts_run"] >= 1  # one wave


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", sorted(SMALL))
def test_gpu_search_finds_the_optimum(name: str) -> None:
    g = SMALL[name]
    graph = from_nx(g)
    for k in range(1, graph.n, 3):
        result = run(graph, "gpu", method="search", k=k, starts=8, time_limit_s=0.2)
        check(g, graph, result, k)
        assert result.summary["objective"] == brute_force(g, k)
