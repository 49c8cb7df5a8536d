"""Maximal independent sets: validity, reductions proven safe by brute force, determinism, time
limits, the job API and SDK; GPU against CPU (``-m gpu``, device only)."""

from __future__ import annotations

import dataclasses
import time
from functools import cache

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError

from graphgpu.kernels.algorithms.mis import MisParams, mis_cpu, mis_gpu
from graphgpu.kernels.algorithms.mis.cpu import CpuEngine
from graphgpu.kernels.algorithms.mis.driver import FIRST_ROUND
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import JobCanceled
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import AlgorithmResult, no_progress

METHODS = ("luby", "degree", "iterated")
REDUCE = ("none", "once", "exhaustive")


def original(node: np.ndarray | int) -> np.ndarray | int:
    """Original id of NetworkX node ``node``: non-contiguous, so id translation is exercised."""
    return 7 * node + 3


def from_nx(g: nx.Graph) -> Graph:
    """Our graph of a NetworkX graph on nodes 0..n-1; internal id i is NetworkX node i."""
    edges = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    graph, _ = build_graph(original(edges[:, 0]), original(edges[:, 1]),
                           extra_nodes=original(np.arange(g.number_of_nodes())))
    return graph


def hubs(seed: int, n: int = 3000) -> nx.Graph:
    """Sparse random graph plus hubs, so that rows longer than a warp are visited too."""
    g = nx.gnm_random_graph(n, 2 * n, seed=seed)
    rng = np.random.default_rng(seed)
    for hub, degree in enumerate([n // 6, n // 20, 120, 40]):
        g.add_edges_from((hub, int(v)) for v in rng.choice(np.arange(10, n), degree, replace=False))
    return g


CASES = {
    "gnp": nx.gnp_random_graph(80, 0.06, seed=1),
    "gnp_dense": nx.gnp_random_graph(40, 0.4, seed=2),
    "power_law": nx.barabasi_albert_graph(300, 3, seed=3),
    "hubs": hubs(4),
    "star": nx.star_graph(30),
    "clique": nx.complete_graph(12),
    "path": nx.path_graph(41),
    "cycle": nx.cycle_graph(17),
    "tree": nx.random_labeled_tree(60, seed=5),
    "grid": nx.grid_2d_graph(7, 9),
    "bipartite": nx.complete_bipartite_graph(5, 9),
    "single_node": nx.empty_graph(1),
    "isolated_only": nx.empty_graph(8),
    "disconnected": nx.disjoint_union_all([nx.complete_graph(5), nx.cycle_graph(9),
                                           nx.path_graph(4), nx.empty_graph(3)]),
}


def params(method: str, reduce: str = "none", **extra) -> MisParams:
    limit = {"time_limit_s": 0.05} if method == "iterated" else {}
    return MisParams(method=method, reduce=reduce, **limit, **extra)


def check_set(graph: Graph, result: AlgorithmResult, maximal: bool = True) -> np.ndarray:
    """The set is independent (and maximal), and every view of it agrees."""
    result = result.host()  # the GPU backend's arrays stay on the device
    in_set = result.node_values["in_set"]
    members = result.arrays["members"]
    assert in_set.dtype == np.int8 and set(np.unique(in_set)) <= {0, 1}
    np.testing.assert_array_equal(members, np.flatnonzero(in_set))
    assert result.node_id_fields == ("members",)
    rows = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    assert not (in_set[rows] & in_set[graph.indices]).any(), "two members are adjacent"
    covered = in_set.astype(bool).copy()
    covered[graph.indices[in_set[rows] == 1]] = True
    if maximal:
        assert covered.all(), "a vertex could join the set"
    summary = result.summary
    assert summary["size"] == members.size and summary["verified"] is True
    assert summary["maximal"] is bool(covered.all())
    return in_set


@cache
def exact_mis(n: int, edges: tuple[tuple[int, int], ...]) -> int:
    """Maximum independent set size by branching on bitmasks (fine for n <= ~20)."""
    nbr = [0] * n
    for u, v in edges:
        nbr[u] |= 1 << v
        nbr[v] |= 1 << u

    @cache
    def best(mask: int) -> int:
        if not mask:
            return 0
        v = (mask & -mask).bit_length() - 1
        if not nbr[v] & mask:  # isolated here: always take it
            return 1 + best(mask & ~(1 << v))
        return max(best(mask & ~(1 << v)), 1 + best(mask & ~(1 << v) & ~nbr[v]))

    return best((1 << n) - 1)


def tree_mis(tree: nx.Graph) -> int:
    """Maximum independent set size of a tree (dynamic programme over a DFS order)."""
    take, skip = {}, {}
    for v in reversed(list(nx.dfs_preorder_nodes(tree, 0))):
        children = [c for c in tree.neighbors(v) if c in take]
        take[v] = 1 + sum(skip[c] for c in children)
        skip[v] = sum(max(take[c], skip[c]) for c in children)
    return max(take[0], skip[0])


def small_graphs(count: int, seed: int) -> list[nx.Graph]:
    """Random graphs of up to 16 nodes over a spread of densities, plus structured ones."""
    rng = np.random.default_rng(seed)
    graphs = [nx.gnp_random_graph(int(rng.integers(2, 17)), float(rng.uniform(0.05, 0.7)),
                                  seed=int(rng.integers(1 << 30))) for _ in range(count)]
    graphs += [nx.path_graph(9), nx.cycle_graph(11), nx.star_graph(8), nx.complete_graph(6),
               nx.random_labeled_tree(15, seed=seed), nx.petersen_graph(),
               nx.disjoint_union(nx.complete_graph(4), nx.cycle_graph(5))]
    return graphs


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_method_gives_a_maximal_independent_set(name: str) -> None:
    graph = from_nx(CASES[name])
    for method in METHODS:
        for reduce in REDUCE:
            result = mis_cpu(graph, params(method, reduce), no_progress)
            check_set(graph, result)
            summary = result.summary
            assert summary["method"] == method and summary["time_limited"] is (method == "iterated")
            assert len(summary["vertices_left"]) <= summary["rounds"]
            if reduce == "none":
                assert summary["reduced_vertices"] == summary["reduction_rounds"] == 0


def test_special_cases_have_the_known_answer() -> None:
    for method in METHODS:
        assert mis_cpu(from_nx(CASES["star"]), params(method), no_progress).summary["size"] in \
            ((1, 30) if method == "luby" else (30,))
        assert mis_cpu(from_nx(CASES["clique"]), params(method), no_progress).summary["size"] == 1
        assert mis_cpu(from_nx(CASES["isolated_only"]), params(method),
                       no_progress).summary["size"] == 8
    for method in ("degree", "iterated"):  # the larger side has the lower degrees
        assert mis_cpu(from_nx(CASES["bipartite"]), params(method), no_progress).summary[
            "size"] == 9


def test_reductions_are_safe_by_brute_force() -> None:
    """Reduced exact optimum plus the vertices the reductions put in = exact optimum."""
    for i, g in enumerate(small_graphs(300, seed=7)):
        n, edges = g.number_of_nodes(), tuple(sorted(g.edges()))
        graph = from_nx(g)
        for once in (False, True):
            engine = CpuEngine(graph)
            engine.start(FIRST_ROUND)
            r = FIRST_ROUND
            while engine.reduce_round(r) and not once:
                r += 1
            engine.freeze()
            tag = engine.tag
            fixed_in = int(np.count_nonzero(tag & 1))
            live = np.flatnonzero(tag == 0)
            relabel = {int(v): k for k, v in enumerate(live)}
            rest = tuple((relabel[u], relabel[v]) for u, v in edges
                         if u in relabel and v in relabel)
            assert fixed_in + exact_mis(len(live), rest) == exact_mis(n, edges), (i, once, edges)
            # The solver maps the reduced solution back: exact whenever nothing is left to guess.
            result = mis_cpu(graph, MisParams(reduce="once" if once else "exhaustive"),
                             no_progress)
            check_set(graph, result)
            if result.summary["rounds"] == 0:
                assert result.summary["size"] == exact_mis(n, edges)


def test_reductions_report_what_they_did() -> None:
    graph = from_nx(CASES["tree"])  # trees reduce away completely (pendant rule)
    summary = mis_cpu(graph, MisParams(reduce="exhaustive"), no_progress).summary
    assert summary["reduced_vertices"] == graph.n and summary["rounds"] == 0
    assert summary["reduction_rounds"] >= 2
    assert summary["size"] == tree_mis(CASES["tree"])
    once = mis_cpu(graph, MisParams(reduce="once"), no_progress).summary
    assert once["reduction_rounds"] == 1 and 0 < once["reduced_vertices"] < graph.n


def test_same_seed_same_set_other_seed_other_set() -> None:
    graph = from_nx(CASES["power_law"])
    for method in ("luby", "degree"):
        for reduce in REDUCE:
            first = mis_cpu(graph, params(method, reduce, seed=3), no_progress)
            again = mis_cpu(graph, params(method, reduce, seed=3), no_progress)
            np.testing.assert_array_equal(first.node_values["in_set"], again.node_values["in_set"])
            assert first.summary == again.summary
    sets = {mis_cpu(graph, MisParams(method="luby", seed=s), no_progress).node_values["in_set"]
            .tobytes() for s in range(4)}
    assert len(sets) > 1


def test_degree_priority_and_updates_help() -> None:
    graph = from_nx(nx.barabasi_albert_graph(3000, 4, seed=8))
    size = {f: mis_cpu(graph, MisParams(update_frequency=f), no_progress).summary["size"]
            for f in (0, 1, 2)}
    luby = mis_cpu(graph, MisParams(method="luby"), no_progress).summary["size"]
    assert luby < min(size.values()) and size[1] >= size[0]
    iterated = mis_cpu(graph, MisParams(method="iterated", time_limit_s=0.2), no_progress).summary
    assert iterated["size"] >= size[1] and iterated["iterations"] > 0
    times, sizes = zip(*iterated["best_over_time"], strict=True)
    assert list(times) == sorted(times) and list(sizes) == sorted(sizes)
    assert sizes[-1] == iterated["size"]


def test_time_limit_is_respected() -> None:
    graph = from_nx(nx.barabasi_albert_graph(20_000, 5, seed=9))
    mis_cpu(graph, MisParams(method="iterated", time_limit_s=0.01), no_progress)  # compile
    start = time.perf_counter()
    summary = mis_cpu(graph, MisParams(method="iterated", time_limit_s=0.3), no_progress).summary
    assert time.perf_counter() - start < 3.0
    assert summary["time_limited"] and summary["maximal"] and summary["iterations"] >= 1


def test_cut_short_first_solution_is_independent_not_maximal(monkeypatch) -> None:
    monkeypatch.setattr(CpuEngine, "batch", 1)  # the deadline is checked after every round
    graph = from_nx(CASES["hubs"])
    result = mis_cpu(graph, MisParams(method="iterated", time_limit_s=1e-9), no_progress)
    check_set(graph, result, maximal=False)
    summary = result.summary
    assert summary["time_limited"] and not summary["maximal"] and summary["iterations"] == 0
    assert summary["rounds"] == 1 and summary["best_over_time"] == []


def test_progress_reported_and_can_cancel() -> None:
    graph = from_nx(CASES["power_law"])
    seen: list[float] = []
    for method in METHODS:
        mis_cpu(graph, params(method), lambda f, m="": seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and len(seen) > 10

    def cancel(fraction: float, message: str = "") -> None:
        if fraction > 0.0:
            raise JobCanceled("canceled")

    with pytest.raises(JobCanceled):
        mis_cpu(graph, params("iterated"), cancel)


def test_params_are_validated() -> None:
    for bad in ({"method": "ecl"}, {"update_frequency": -1}, {"time_limit_s": 0},
                {"time_limit_s": 3601}, {"reduce": "twice"}, {"seed": -1}, {"depth": 2}):
        with pytest.raises(ValidationError):
            MisParams.model_validate(bad)
    assert MisParams().model_dump() == {"method": "degree", "update_frequency": 2,
                                        "reduce": "none", "time_limit_s": 1.0, "seed": 0}


def test_job_api_and_sdk_every_method(stack) -> None:
    from graphgpu.client import Client

    g = nx.gnm_random_graph(200, 500, seed=10)
    text = "".join(f"{original(u)} {original(v)}\n" for u, v in g.edges())
    graph = stack.upload(text, name="mis")
    ids = {original(v) for v in g.nodes() if g.degree(v)}
    edges = [(original(u), original(v)) for u, v in g.edges()]

    def check(members: list[int]) -> None:
        chosen = set(members)
        assert chosen <= ids and not any(u in chosen and v in chosen for u, v in edges)
        assert all(v in chosen or any((v, w) in edges or (w, v) in edges for w in chosen)
                   for v in ids)

    for method in METHODS:
        job = stack.wait_job(stack.submit(graph["id"], "mis", {"method": method,
                                                               "time_limit_s": 0.2}).json()["id"])
        assert job["status"] == "succeeded", job
        result = stack.http.get(job["result_url"]).json()
        check(result["arrays"]["members"])
        assert result["summary"]["size"] == len(result["arrays"]["members"])
        in_set = {int(k): v for k, v in result["node_values"]["in_set"].items()}
        assert {k for k, v in in_set.items() if v} == set(result["arrays"]["members"])
    with Client(stack.base_url, timeout=30) as client:
        for method in METHODS:
            job = client.run(graph["id"], "mis", method=method, reduce="exhaustive",
                             time_limit_s=0.2).wait(timeout=60)
            assert job.status == "succeeded"
            check(job.result().arrays["members"])


# ------------------------------------------------------------------------------------------------
# GPU (device machine only: python3 -m pytest -m gpu)
# ------------------------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


def gpu_cases() -> dict[str, Graph]:
    from graphgpu.kernels.generators import generate

    edges = generate("rmat", {"scale": 15, "edge_factor": 16, "seed": 2}, "cpu")
    rmat, _ = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    return {**{name: from_nx(g) for name, g in CASES.items()}, "rmat15": rmat,
            "big_hubs": from_nx(hubs(11, n=60_000))}


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("persistent", [True, False])
def test_gpu_matches_cpu_set_for_set(persistent: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """luby and degree: the same set as the CPU, with and without reductions, every seed, with
    the rounds of a phase in one persistent launch (these graphs' default) or a launch each.

    The graphs get ids, so one engine's device buffers serve all the runs on a graph.
    """
    from graphgpu.kernels.algorithms.mis import gpu as mis_gpu_module

    if not persistent:
        monkeypatch.setattr(mis_gpu_module, "round_vertices", lambda kernel: 0)
    for name, graph in gpu_cases().items():
        graph = dataclasses.replace(graph, graph_id=f"test-mis-{name}-{persistent}")
        assert mis_gpu_module.engine_for(graph).persistent == persistent
        for method in ("luby", "degree"):
            for reduce in REDUCE:
                for seed in (0, 1):
                    p = MisParams(method=method, reduce=reduce, seed=seed)
                    gpu = mis_gpu(graph, p, no_progress)
                    check_set(graph, gpu)
                    cpu = mis_cpu(graph, p, no_progress)
                    assert gpu.summary == cpu.summary, (name, method, reduce, seed)
                    in_set = gpu.host().node_values["in_set"]
                    np.testing.assert_array_equal(in_set, cpu.node_values["in_set"])
                    # The second run records its launch as a CUDA graph, the third replays it.
                    for _ in range(2):
                        again = mis_gpu(graph, p, no_progress).host()
                        np.testing.assert_array_equal(in_set, again.node_values["in_set"])
                        assert again.summary == cpu.summary, (name, method, reduce, seed)
        if persistent:  # the repeated runs were recorded, not launched directly
            assert mis_gpu_module.engine_for(graph).replays.graphs, name


@pytest.mark.gpu
@needs_gpu
def test_gpu_iterated_is_valid_and_close_to_cpu() -> None:
    for name, graph in gpu_cases().items():
        for reduce in ("none", "exhaustive"):
            p = MisParams(method="iterated", reduce=reduce, time_limit_s=0.2)
            gpu = mis_gpu(graph, p, no_progress)
            check_set(graph, gpu)
            cpu = mis_cpu(graph, p, no_progress)
            assert gpu.summary["iterations"] > 0
            # The CPU adds local search; without it a tiny graph may end one vertex short.
            assert gpu.summary["size"] >= 0.98 * cpu.summary["size"] - 1, (name, reduce)
