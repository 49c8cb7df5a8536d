"""Exact counts against brute force, closed forms, OEIS and NetworkX; GPU against CPU (-m gpu).

OEIS terms used (all counting the empty set only where noted):
A059525 connected induced subgraphs of the n x n grid, nonempty, all sizes (n = 1..);
A287151 the same for the 2 x n grid; A006506 independent sets of the n x n grid including the
empty set; A027624 independent sets of the hypercube Q_n including the empty set (n = 0..).
"""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError

from graphgpu.kernels.algorithms.common.dag import oriented
from graphgpu.kernels.algorithms.counting import cliques, driver, esu
from graphgpu.kernels.algorithms.counting.cpu import cliques_cpu, connected_cpu, independent_cpu
from graphgpu.kernels.algorithms.counting.estimate import (
    estimate_cliques,
    estimate_connected,
    estimate_independent,
    warm_up_cliques,
)
from graphgpu.kernels.algorithms.counting.gpu import cliques_gpu, connected_gpu, independent_gpu
from graphgpu.kernels.algorithms.counting.params import MAX_K, CountParams, IndependentParams
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput, JobCanceled
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import get_algorithm, no_progress
from tests.support.graphs import from_nx

A059525 = [1, 13, 218, 11506, 2301877, 1732082741]
A287151 = [3, 13, 40, 108, 275, 681, 1664]
A006506 = [1, 2, 7, 63, 1234, 55447, 5598861]
A027624 = [2, 3, 7, 35, 743, 254475]

FUNCTIONS = {"connected": (connected_cpu, connected_gpu, CountParams),
             "cliques": (cliques_cpu, cliques_gpu, CountParams),
             "independent": (independent_cpu, independent_gpu, IndependentParams)}


def count(kind: str, graph: Graph, k: int, backend: str = "cpu", **extra) -> dict:
    cpu_fn, gpu_fn, model = FUNCTIONS[kind]
    fn = cpu_fn if backend == "cpu" else gpu_fn
    return fn(graph, model(k=k, **extra), no_progress).summary


def all_sizes(kind: str, graph: Graph, k: int, backend: str = "cpu", **extra) -> list[int]:
    summary = count(kind, graph, k, backend, k_max=True, **extra)
    assert summary["count"] == summary["counts"][-1]
    return summary["counts"]


def grid(rows: int, cols: int) -> Graph:
    return from_nx(nx.convert_node_labels_to_integers(nx.grid_2d_graph(rows, cols)))


def brute_force(g: nx.Graph, k: int) -> dict[str, int]:
    """Every k-subset tested: connected, clique, independent."""
    out = dict.fromkeys(FUNCTIONS, 0)
    for subset in itertools.combinations(g.nodes, k):
        sub = g.subgraph(subset)
        edges = sub.number_of_edges()
        out["connected"] += nx.is_connected(sub)
        out["cliques"] += edges == k * (k - 1) // 2
        out["independent"] += edges == 0
    return out


def random_graphs() -> list[nx.Graph]:
    graphs = [nx.gnp_random_graph(12, p, seed=s) for s, p in enumerate((0.15, 0.35, 0.6, 0.85))]
    graphs.append(nx.disjoint_union(nx.complete_graph(5), nx.cycle_graph(6)))  # two components
    graphs.append(nx.barabasi_albert_graph(13, 3, seed=7))
    return graphs


@pytest.mark.parametrize("index", range(6))
def test_brute_force_every_size(index: int) -> None:
    g = random_graphs()[index]
    graph = from_nx(g)
    n = g.number_of_nodes()
    expected = {kind: [brute_force(g, k)[kind] for k in range(1, 8)] for kind in FUNCTIONS}
    for kind in FUNCTIONS:
        assert all_sizes(kind, graph, 7) == expected[kind], kind
        for k in (1, 2, 4, 7):  # single sizes take the pruned search
            assert count(kind, graph, k)["count"] == expected[kind][k - 1], (kind, k)
    assert all_sizes("independent", graph, 7, method="enumerate") == expected["independent"]
    assert all_sizes("independent", graph, 4, method="local") == expected["independent"][:4]
    assert count("connected", graph, n)["count"] == int(nx.is_connected(g))


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_closed_forms(n: int) -> None:
    complete, path, cycle = from_nx(nx.complete_graph(n)), from_nx(nx.path_graph(n)), None
    star = from_nx(nx.star_graph(n))  # centre 0 and n leaves
    empty = from_nx(nx.empty_graph(n))
    k_top = n + 1
    binom = [math.comb(n, k) for k in range(1, k_top + 1)]
    assert all_sizes("connected", complete, k_top) == binom
    assert all_sizes("cliques", complete, k_top) == binom
    assert all_sizes("independent", complete, k_top, method="enumerate") == [n] + [0] * n
    assert all_sizes("connected", path, k_top) == [max(n - k + 1, 0) for k in range(1, k_top + 1)]
    assert all_sizes("independent", path, k_top, method="enumerate") == [
        math.comb(n - k + 1, k) if k <= n else 0 for k in range(1, k_top + 1)]
    assert all_sizes("cliques", path, 3) == [n, max(n - 1, 0), 0]
    # Star: a connected set is the centre and any leaves; independent sets are leaves only.
    assert all_sizes("connected", star, k_top + 1) == [n + 1] + [
        math.comb(n, k - 1) for k in range(2, k_top + 2)]
    assert all_sizes("independent", star, k_top + 1, method="enumerate") == [n + 1] + [
        math.comb(n, k) for k in range(2, k_top + 2)]
    assert all_sizes("connected", empty, k_top) == [n] + [0] * n
    assert all_sizes("cliques", empty, k_top) == [n] + [0] * n
    assert all_sizes("independent", empty, 4, method="local") == [math.comb(n, k)
                                                                 for k in range(1, 5)]
    if n >= 3:
        cycle = from_nx(nx.cycle_graph(n))
        assert all_sizes("connected", cycle, n) == [n] * (n - 1) + [1]
        assert all_sizes("independent", cycle, n, method="enumerate") == [
            n * math.comb(n - k, k) // (n - k) for k in range(1, n)] + [0]


@pytest.mark.parametrize("n", range(1, 6))
def test_oeis_a059525_connected_subgraphs_of_square_grids(n: int) -> None:
    assert sum(all_sizes("connected", grid(n, n), n * n)) == A059525[n - 1]


def test_oeis_a287151_connected_subgraphs_of_ladders() -> None:
    for n, expected in enumerate(A287151, start=1):
        assert sum(all_sizes("connected", grid(2, n), 2 * n)) == expected


def test_oeis_independent_sets_of_grids_and_hypercubes() -> None:
    for n, expected in enumerate(A006506):
        if n:
            assert 1 + sum(all_sizes("independent", grid(n, n), n * n,
                                     method="enumerate")) == expected
    for dim, expected in enumerate(A027624):
        cube = nx.hypercube_graph(dim) if dim else nx.empty_graph(1)
        g = nx.convert_node_labels_to_integers(cube)
        assert 1 + sum(all_sizes("independent", from_nx(g), 2 ** dim,
                                 method="enumerate")) == expected


def clique_census(g: nx.Graph, kmax: int) -> list[int]:
    sizes = [0] * kmax
    for clique in nx.enumerate_all_cliques(g):
        if len(clique) > kmax:
            break
        sizes[len(clique) - 1] += 1
    return sizes


@pytest.mark.parametrize("seed", [1, 2])
def test_cliques_match_networkx_on_medium_graphs(seed: int) -> None:
    g = nx.powerlaw_cluster_graph(600, 8, 0.6, seed=seed)
    g.add_edges_from(itertools.combinations(range(100, 112), 2))  # a 12-clique among the hubs
    assert all_sizes("cliques", from_nx(g), 12) == clique_census(g, 12)


def test_local_and_enumerated_independent_sets_agree() -> None:
    for seed, p in ((3, 0.02), (4, 0.08), (5, 0.3)):
        graph = from_nx(nx.gnp_random_graph(300 if p < 0.1 else 80, p, seed=seed))
        assert all_sizes("independent", graph, 4, method="local") == all_sizes(
            "independent", graph, 4, method="enumerate")


def test_counts_beyond_64_bits() -> None:
    # Independent 4-sets of a long path: C(n - 3, 4), above 2**64 (local counts, Python ints).
    n = 150_000
    summary = count("independent", from_nx(nx.path_graph(n)), 4)
    assert summary["method"] == "local" and summary["count"] == math.comb(n - 3, 4) > 2**64
    # The CPU accumulators carry past 2**62 exactly.
    lo, hi = np.zeros(3, np.int64), np.zeros(3, np.int64)
    x = (1 << 62) - 5
    for _ in range(1000):
        driver.add_wide(lo, hi, 1, x)
    assert driver.wide_totals(lo, hi)[1] == 1000 * x


def test_regimes_and_parameter_errors() -> None:
    small = from_nx(nx.cycle_graph(8))
    assert count("independent", small, 4)["method"] == "local"
    assert count("independent", small, 5)["method"] == "enumerate"
    with pytest.raises(InvalidInput) as info:
        count("independent", small, 5, method="local")
    assert info.value.field == "k"
    big = from_nx(nx.path_graph(driver.ENUMERATE_MAX_NODES + 1))
    with pytest.raises(InvalidInput) as info:
        count("independent", big, 5)
    assert info.value.field == "k"
    with pytest.raises(InvalidInput) as info:
        estimate_independent(big, IndependentParams(k=2, method="enumerate"), "cpu")
    assert info.value.field == "method"
    for bad in ({"k": 0}, {"k": MAX_K + 1}, {"k": 3, "extra": 1}):
        with pytest.raises(ValidationError):
            CountParams.model_validate(bad)
    with pytest.raises(ValidationError):
        IndependentParams.model_validate({"k": 3, "method": "complement"})
    for name in ("count_connected_subgraphs", "count_cliques", "count_independent_sets"):
        assert get_algorithm(name).estimate is not None


def test_estimates_track_the_work() -> None:
    g = nx.powerlaw_cluster_graph(2000, 6, 0.5, seed=3)
    graph = from_nx(g)
    connected = [estimate_connected(graph, CountParams(k=k), "cpu").seconds
                 for k in (3, 4, 5, 6)]
    assert connected == sorted(connected) and connected[-1] > 50 * connected[0]
    # Knuth's estimator is unbiased: on a search small enough to run, it lands near the truth.
    params = CountParams(k=4, k_max=True)
    estimate = estimate_connected(graph, params, "cpu")
    nodes = float(estimate.detail.split("about ")[1].split(" search")[0].replace(",", ""))
    # Search nodes = sets of sizes 2..k-1 (each set is one node).
    truth = sum(all_sizes("connected", graph, 4)[1:3])
    assert truth / 3 < nodes < truth * 3
    assert estimate_cliques(graph, CountParams(k=30), "gpu").seconds < 1
    assert estimate_independent(graph, IndependentParams(k=4), "cpu").seconds < 1


def test_progress_reports_and_cancellation() -> None:
    graph = from_nx(nx.powerlaw_cluster_graph(300, 4, 0.3, seed=1))
    seen: list[float] = []
    connected_cpu(graph, CountParams(k=4), lambda f, m="": seen.append(f))
    assert seen[-1] == 1.0 and len(seen) > 10 and seen == sorted(seen)

    def cancel(fraction: float, message: str = "") -> None:
        if fraction > 0.3:
            raise JobCanceled("canceled")

    for fn, params in ((connected_cpu, CountParams(k=4)), (cliques_cpu, CountParams(k=4)),
                       (independent_cpu, IndependentParams(k=4))):
        with pytest.raises(JobCanceled):
            fn(graph, params, cancel)


def test_warm_up_cliques_is_registered_and_runs() -> None:
    algorithm = get_algorithm("count_cliques")
    assert algorithm.warm_up is warm_up_cliques
    algorithm.warm_up("cpu")


# ------------------------------------------------------------------------------------------------
# GPU: the same counts as the CPU, exactly
# ------------------------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize(("split", "items"), [(32, 1 << 16), (2, 1), (4, 300)])
def test_gpu_matches_cpu_on_random_graphs(monkeypatch, split: int, items: int) -> None:
    from graphgpu.kernels.algorithms.counting import gpu as counting_gpu

    # Small thresholds split every root and cut the connected search at every depth.
    monkeypatch.setattr(counting_gpu, "CLIQUE_SPLIT", split)
    monkeypatch.setattr(counting_gpu, "TARGET_ITEMS", items)
    for g in random_graphs():
        graph = from_nx(g)
        for kind in FUNCTIONS:
            assert all_sizes(kind, graph, 7, "gpu") == all_sizes(kind, graph, 7), kind
            assert count(kind, graph, 4, "gpu") == count(kind, graph, 4), kind
        assert all_sizes("independent", graph, 4, "gpu", method="local") == all_sizes(
            "independent", graph, 4, method="local")


@pytest.mark.gpu
@needs_gpu
def test_gpu_oeis_and_networkx() -> None:
    for n in range(1, 6):
        assert sum(all_sizes("connected", grid(n, n), n * n, "gpu")) == A059525[n - 1]
    for n, expected in enumerate(A006506[1:], start=1):
        assert 1 + sum(all_sizes("independent", grid(n, n), n * n, "gpu",
                                 method="enumerate")) == expected
    g = nx.convert_node_labels_to_integers(nx.hypercube_graph(5))
    assert 1 + sum(all_sizes("independent", from_nx(g), 32, "gpu",
                             method="enumerate")) == A027624[5]
    g = nx.powerlaw_cluster_graph(3000, 10, 0.7, seed=5)
    g.add_edges_from(itertools.combinations(range(200, 240), 2))  # out-degrees past 32 words
    graph = from_nx(g)
    assert all_sizes("cliques", graph, 8, "gpu") == all_sizes("cliques", graph, 8)
    assert count("cliques", graph, 6, "gpu") == count("cliques", graph, 6)
    assert all_sizes("independent", graph, 4, "gpu") == all_sizes("independent", graph, 4)
    assert all_sizes("connected", graph, 4, "gpu") == all_sizes("connected", graph, 4)


#: Run in a fresh process with an empty CuPy kernel cache: the worker's warm-up of
#: count_cliques, then first calls of every k; prints the kernels those compiled.
FIRST_CALLS = """
import itertools, os, sys
import networkx as nx
from graphgpu.workers.__main__ import warm_up
from graphgpu.kernels.algorithms.counting.gpu import cliques_gpu
from graphgpu.kernels.algorithms.counting.params import CountParams
from graphgpu.kernels.core.registry import no_progress
from tests.support.graphs import from_nx

warm_up("gpu", names=("count_cliques",))
before = set(os.listdir(os.environ["CUPY_CACHE_DIR"]))
g = nx.powerlaw_cluster_graph(3000, 10, 0.7, seed=5)
g.add_edges_from(itertools.combinations(range(200, 240), 2))
graph = from_nx(g)
for k in range(3, 9):
    for k_max in (False, True):
        cliques_gpu(graph, CountParams(k=k, k_max=k_max), no_progress)
print(sorted(set(os.listdir(os.environ["CUPY_CACHE_DIR"])) - before))
"""


@pytest.mark.gpu
@needs_gpu
def test_gpu_first_clique_calls_compile_nothing_after_warm_up(tmp_path) -> None:
    repo = Path(__file__).resolve().parents[4]
    path = os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", FIRST_CALLS], cwd=repo, capture_output=True,
                          text=True, timeout=600, check=True,
                          env={**os.environ, "CUPY_CACHE_DIR": str(tmp_path),
                               "PYTHONPATH": path})
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


@pytest.mark.gpu
@needs_gpu
def test_gpu_wide_counts_and_dense_neighbourhoods() -> None:
    n = 150_000
    path = from_nx(nx.path_graph(n))
    assert count("independent", path, 4, "gpu")["count"] == math.comb(n - 3, 4)
    # A 1,500-clique: out-degrees up to 1,499 need two words per lane; C(1500, 4) 4-cliques.
    clique = from_nx(nx.complete_graph(1500))
    assert count("cliques", clique, 4, "gpu")["count"] == math.comb(1500, 4)


# ------------------------------------------------------------------------------------------------
# The GPU's work items partition the search exactly: each item's subtree searched the way the
# kernels do (kernels/algorithms/counting/counting.cu), in Python. Clique items are cut on the
# device (-m gpu), connected-set items on the host.
# ------------------------------------------------------------------------------------------------


def search_clique_items(dptr: np.ndarray, dadj: np.ndarray, items: np.ndarray, kmax: int,
                        lo_size: int, cut: dict[int, int]) -> dict[int, int]:
    """Counts of the items' subtrees plus ``cut``, the counts of the nodes above them."""
    found = [0] * (kmax + 2)
    for item in items:
        v, prefix = item[0], [x for x in item[2:] if x >= 0]
        local = dadj[dptr[v]:dptr[v + 1]].tolist()
        out = {u: set(dadj[dptr[u]:dptr[u + 1]].tolist()) for u in local}
        rows = [{b for b in range(a + 1, len(local)) if local[b] in out[local[a]]}
                for a in range(len(local))]

        def visit(t: int, cand: set[int], rows=rows) -> None:
            if t >= 1:
                found[t + 2] += len(cand)
            if t + 3 <= kmax and t + 1 + len(cand) >= lo_size:
                for x in sorted(cand):
                    visit(t + 1, cand & rows[x])

        cand = set(range(len(local)))
        for q in prefix:
            cand &= rows[q]
        assert len(cand) == item[1]  # the weight: the item's candidates
        visit(len(prefix), cand)
    return {s: found[s] + cut[s] for s in range(3, kmax + 1)}


def search_connected_items(graph: Graph, kmax: int, depth: int) -> dict[int, int]:
    lo, hi = np.zeros(kmax + 2, np.int64), np.zeros(kmax + 2, np.int64)
    items = esu.connected_items(graph.indptr, graph.indices, kmax, depth, lo, hi)
    adj = [set(graph.indices[graph.indptr[v]:graph.indptr[v + 1]].tolist())
           for v in range(graph.n)]
    found = [0] * (kmax + 2)
    for path in items.tolist():
        r = path[0]
        members, ext = [r], [u for u in sorted(adj[r]) if u > r]

        def visit(start: int, members=members, ext=ext, r=r) -> None:
            # Node of size len(members): extend by the last member, count, recurse.
            size, mark = len(members), len(ext)
            ext += [u for u in sorted(adj[members[-1]]) if u > r and not any(
                u == x or u in adj[x] for x in members[:-1])]
            if size + 1 <= kmax:
                found[size + 1] += len(ext) - start
            if size + 2 <= kmax:
                for j in range(start, len(ext)):
                    members.append(ext[j])
                    visit(j + 1)
                    members.pop()
            del ext[mark:]

        for q in range(1, depth + 1):
            if q > 1:  # replay: the node of size q extends its list before its pick
                ext += [u for u in sorted(adj[members[-1]]) if u > r and not any(
                    u == x or u in adj[x] for x in members[:-1])]
            members.append(ext[path[q]])
        visit(path[depth] + 1)
    host = driver.wide_totals(lo, hi)
    return {s: found[s] + host[s] for s in range(3, kmax + 1)}


@pytest.mark.parametrize("index", range(6))
def test_connected_work_items_partition_the_search(index: int) -> None:
    graph = from_nx(random_graphs()[index])
    for kmax in (3, 4, 6):
        connected = all_sizes("connected", graph, kmax)
        for depth in range(1, kmax - 1):
            assert search_connected_items(graph, kmax, depth) == {
                s: connected[s - 1] for s in range(3, kmax + 1)}, (kmax, depth)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("index", range(6))
def test_gpu_clique_items_partition_the_search(index: int) -> None:
    from graphgpu.kernels.algorithms.counting import gpu as counting_gpu
    from graphgpu.kernels.core.device import cupy

    cp = cupy()
    graph = from_nx(random_graphs()[index])
    for dag in (counting_gpu.clique_dag(graph), oriented(graph)[3:]):
        dptr, dadj = (cp.asarray(x) for x in dag)
        for kmax in (3, 4, 6):
            full = all_sizes("cliques", graph, kmax)
            for split, depth in ((1, 3), (2, 1), (4, 2), (100, 3), (1, 0)):
                for lo_size in (3, kmax):
                    acc = cp.zeros(2 * (kmax + 2), dtype=cp.uint64)
                    items = counting_gpu.clique_items(dptr, dadj, kmax, lo_size, split, depth,
                                                      acc)
                    found = search_clique_items(
                        dptr.get(), dadj.get(), items.get(), kmax, lo_size,
                        counting_gpu.device_totals(acc, range(kmax + 1)))
                    assert found[kmax] == full[-1], (kmax, split, depth, lo_size)
                    if lo_size == 3:
                        assert found == {s: full[s - 1] for s in range(3, kmax + 1)}


def test_degree_dag_orients_every_edge_once_upwards(monkeypatch) -> None:
    from graphgpu.kernels.algorithms.counting import gpu as counting_gpu

    for g in [*random_graphs(), nx.powerlaw_cluster_graph(3000, 10, 0.7, seed=5),
              nx.empty_graph(4)]:
        graph = from_nx(g)
        dptr, dadj = counting_gpu.clique_dag(graph, np)
        deg = np.diff(graph.indptr)
        order = np.lexsort((np.arange(graph.n), deg))  # rank -> vertex
        edges = {tuple(sorted((int(order[r]), int(order[x]))))
                 for r in range(graph.n) for x in dadj[dptr[r]:dptr[r + 1]]}
        assert len(edges) == dptr[-1] == graph.m and edges == {tuple(sorted(e)) for e in g.edges}
        for r in range(graph.n):
            row = dadj[dptr[r]:dptr[r + 1]]
            assert (np.diff(row) > 0).all() and (row > r).all()
            assert row.shape[0] ** 2 <= 2 * graph.m
        # The CPU search on this DAG counts what it counts on its own (degeneracy) DAG.
        lo, hi = np.zeros(9, np.int64), np.zeros(9, np.int64)
        cliques.clique_roots(dptr, dadj, np.arange(graph.n), 7, 3, lo, hi)
        assert driver.wide_totals(lo, hi)[3:8] == all_sizes("cliques", graph, 7)[2:]
    # Past the kernels' out-degree limit the GPU takes the degeneracy DAG.
    graph = from_nx(nx.complete_graph(6))
    monkeypatch.setattr(counting_gpu, "MAX_OUT_DEGREE", 4)
    assert all(np.array_equal(a, b) for a, b in zip(
        counting_gpu.clique_dag(graph, np), oriented(graph)[3:], strict=True))


def test_clique_warm_up_parts_split_it_by_clique_size(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphgpu.kernels.algorithms.counting import estimate

    sizes: list[tuple[int, bool]] = []
    monkeypatch.setattr(estimate.cpu, "cliques_cpu",
                        lambda graph, params, progress: sizes.append((params.k, params.k_max)))
    estimate.warm_up_cliques("cpu", "k3-4")
    assert sizes == [(3, False), (3, True), (4, False), (4, True)]
    parts = []
    for part in estimate.WARM_UP_PARTS:
        sizes.clear()
        estimate.warm_up_cliques("cpu", part)
        parts.append(sorted({k for k, _ in sizes}))
    sizes.clear()
    estimate.warm_up_cliques("cpu")
    assert sorted({k for k, _ in sizes}) == sorted(k for each in parts for k in each) == list(
        estimate.WARM_UP_SIZES)
