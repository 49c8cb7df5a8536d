"""Cost estimates of the counting family, and the warm-up of ``count_cliques``.

Estimates take the heaviest and some random roots (edge items for connected sets), size each
one's search tree with Knuth's random-path estimator (unbiased, heavy-tailed) and extrapolate,
plus the orientation and bitmap work, at rates measured on the H100 machine.

The estimator's heavy tail misses a large clique: its search tree is all subsets of the clique,
and a random path finds its big branches with vanishing probability (a planted 60-clique in a
sparse graph of 2,000 nodes was estimated at 4e9 search nodes for k = 20, against more than
1e15). So the sampled count is held between two bounds that grow with what is counted: at least
the search nodes of a clique found greedily (w nodes: C(w - 1, k - 1) of its (k - 1)-subsets
are expanded), at most the subsets of every root's out-neighbours (sum over roots v of
C(outdeg v, t) for t < k - 1). A job whose search cannot finish within the job limit is then
refused before it is queued.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.special import comb

from graphgpu.kernels.algorithms.common import dag
from graphgpu.kernels.algorithms.counting import cpu, driver, gpu
from graphgpu.kernels.algorithms.counting.cliques import (
    clique_scratch,
    clique_walks,
    greedy_clique,
)
from graphgpu.kernels.algorithms.counting.esu import connected_walks, esu_scratch
from graphgpu.kernels.algorithms.counting.params import CountParams, IndependentParams
from graphgpu.kernels.core.graph import Graph, simple_graph
from graphgpu.kernels.core.registry import Backend, Estimate, no_progress

#: Search nodes per second (estimates), measured on the H100 machine (bench/results/counting.md).
NODES_PER_SECOND = {"cpu": {"clique": 4e7, "connected": 1e7},
                    "gpu": {"clique": 7e8, "connected": 7e6}}
#: Host seconds per edge for the degeneracy ordering and orientation (the CPU's cliques, the
#: local counts) or for reading the graph.
SECONDS_PER_EDGE = 3e-7
#: Seconds per edge orienting the graph for the clique search (the GPU's: CuPy passes).
ORIENT_SECONDS_PER_EDGE = {"cpu": SECONDS_PER_EDGE, "gpu": 5e-10}
#: Seconds per adjacency read building the roots' bitmaps (sum over DAG arcs v -> u of the
#: out-degree of u).
SECONDS_PER_BITMAP_READ = {"cpu": 4.5e-9, "gpu": 1.5e-11}
#: Seconds per adjacency read of the local counts (independent sets, k <= 4).
SECONDS_PER_LOCAL_READ = 1.5e-8
#: Roots an estimate always walks (the heaviest) and samples at random (the others).
HEAVY_SAMPLES, RANDOM_SAMPLES = 32, 64
#: Random walks per estimate (Knuth's estimator), spread over the sampled roots, 16 each at least:
#: its error is heavy-tailed on skewed trees, and a walk costs microseconds.
WALKS = 32_768
#: Roots (the heaviest) the greedy clique of the lower bound may start from, and the adjacency
#: and bitmap words it may read (milliseconds; the first root's search always completes).
GREEDY_ROOTS, GREEDY_WORDS = 256, 4_000_000


def sampled_nodes(weights: np.ndarray, search: Callable[[int, int, int], float]
                  ) -> tuple[float, str]:
    """Search nodes of all roots: the heaviest :data:`HEAVY_SAMPLES` roots plus
    :data:`RANDOM_SAMPLES` random others scaled up; ``search(root, walks, seed)`` estimates one
    root's search nodes (Knuth's random-path estimator,
    :func:`graphgpu.kernels.algorithms.counting.cliques.clique_walks`)."""
    total = weights.shape[0]
    order = np.argsort(-weights, kind="stable")
    heavy, rest = order[:HEAVY_SAMPLES], order[HEAVY_SAMPLES:]
    picked = np.random.default_rng(0).choice(rest, size=min(RANDOM_SAMPLES, rest.shape[0]),
                                             replace=False)
    walks = max(16, WALKS // max(1, heavy.shape[0] + picked.shape[0]))
    nodes = float(sum(search(int(r), walks, i) for i, r in enumerate(heavy)))
    sample = sum(search(int(r), walks, HEAVY_SAMPLES + i) for i, r in enumerate(picked))
    if picked.shape[0]:
        nodes += sample * rest.shape[0] / picked.shape[0]
    return nodes, (f"{walks} random search paths from each of the {heavy.shape[0]} heaviest and "
                   f"{picked.shape[0]} random of {total:,} roots: about {nodes:,.0f} search nodes")


def clique_found(dptr: np.ndarray, dadj: np.ndarray, scratch: tuple | None = None) -> int:
    """Size of a clique of the DAG ``(dptr, dadj)``, found greedily
    (:func:`graphgpu.kernels.algorithms.counting.cliques.greedy_clique`) from its
    :data:`GREEDY_ROOTS` heaviest roots within :data:`GREEDY_WORDS`; ``scratch``:
    :func:`clique_scratch`'s arrays, made here when not given."""
    pos, rows, cand = clique_scratch(dptr, 1) if scratch is None else scratch
    order = np.argsort(-np.diff(dptr), kind="stable")[:GREEDY_ROOTS]
    return int(greedy_clique(dptr, dadj, order, GREEDY_WORDS, pos, rows, cand))


def subsets_bound(outdeg: np.ndarray, kmax: int) -> float:
    """Upper bound on the clique search's nodes: per root, the subsets of its out-neighbours of
    the sizes it expands (0 to ``kmax - 2``); inf past float range."""
    sizes, roots = np.unique(outdeg, return_counts=True)
    picks = np.arange(kmax - 1)
    with np.errstate(over="ignore"):
        return float((comb(sizes[:, None].astype(np.float64), picks[None, :]).sum(axis=1)
                      * roots).sum())


def _dag_seconds(graph: Graph, dptr: np.ndarray, dadj: np.ndarray, params: CountParams,
                 backend: Backend) -> tuple[float, str]:
    """Seconds of a clique search on the DAG ``(dptr, dadj)``: sampled search nodes held between
    the bounds of the module notes, bitmaps and the orientation."""
    pos, rows, cand = clique_scratch(dptr, params.k)
    lo_size = 3 if params.k_max else params.k
    outdeg = np.diff(dptr)
    sampled, detail = sampled_nodes(outdeg, lambda v, walks, seed: clique_walks(
        dptr, dadj, v, params.k, lo_size, walks, seed, pos, rows, cand))
    found = clique_found(dptr, dadj, (pos, rows, cand))
    floor = float(math.comb(found - 1, params.k - 1)) if found else 0.0
    ceiling = subsets_bound(outdeg, params.k)
    nodes = min(max(sampled, floor), ceiling)
    bitmap_reads = float(outdeg[dadj].sum())
    seconds = (nodes / NODES_PER_SECOND[backend]["clique"]
               + graph.m * ORIENT_SECONDS_PER_EDGE[backend]
               + bitmap_reads * SECONDS_PER_BITMAP_READ[backend])
    return seconds, (f"{detail}; a {found}-clique found: at least {floor:,.0f}, at most "
                     f"{ceiling:,.3g}, taken as {nodes:,.0f}; {bitmap_reads:,.0f} bitmap reads")


def estimate_cliques(graph: Graph, params: CountParams, backend: Backend) -> Estimate:
    """Cost of ``count_cliques``: sampled roots of the oriented graph (module notes)."""
    if params.k < 3 or graph.m == 0:
        return Estimate(seconds=graph.m * SECONDS_PER_EDGE, detail="closed form")
    dptr, dadj = gpu.clique_dag(graph, np) if backend == "gpu" else cpu.clique_dag(graph)
    seconds, detail = _dag_seconds(graph, dptr, dadj, params, backend)
    return Estimate(seconds=seconds, detail=detail)


def estimate_connected(graph: Graph, params: CountParams, backend: Backend) -> Estimate:
    """Cost of ``count_connected_subgraphs``: sampled edge items (root, first pick), at least
    the connected sets of a clique found greedily (module notes)."""
    if params.k < 3 or graph.m == 0:
        return Estimate(seconds=graph.m * SECONDS_PER_EDGE, detail="closed form")
    deg = np.diff(graph.indptr)
    src = np.repeat(np.arange(graph.n), deg)
    arcs = np.flatnonzero(graph.indices > src)
    roots = src[arcs]
    above = np.bincount(roots, minlength=graph.n)
    first = arcs - (graph.indptr[roots + 1] - above[roots])
    mark, ext = esu_scratch(graph.indptr, params.k)
    nodes, detail = sampled_nodes(
        deg[roots] + deg[graph.indices[arcs]],
        lambda item, walks, seed: connected_walks(
            graph.indptr, graph.indices, int(roots[item]), int(first[item]), params.k, walks,
            seed, mark, ext))
    # A w-clique holds C(w, j) connected j-sets, each a search node for 2 <= j < k.
    found = clique_found(*cpu.clique_dag(graph))
    floor = float(sum(math.comb(found, size) for size in range(2, params.k)))
    seconds = (max(nodes, floor) / NODES_PER_SECOND[backend]["connected"]
               + graph.m * SECONDS_PER_EDGE)
    return Estimate(seconds=seconds, detail=(
        f"{detail.replace('roots', 'edge items')}; a {found}-clique found: at least "
        f"{floor:,.0f} search nodes"))


def estimate_independent(graph: Graph, params: IndependentParams, backend: Backend
                         ) -> Estimate:
    """Cost of ``count_independent_sets``: local regime O(sum of squared degrees) (the per-edge
    triangle merges); enumeration regime like :func:`estimate_cliques` on the complement."""
    if driver.regime(graph, params) == "local":
        deg = np.diff(graph.indptr).astype(np.float64)
        work = float((deg * deg).sum()) + graph.m
        seconds = work * SECONDS_PER_LOCAL_READ + graph.m * SECONDS_PER_EDGE
        return Estimate(seconds=seconds, detail=f"local counts, about {work:,.0f} adjacency reads")
    if params.k < 3:
        return Estimate(seconds=graph.n ** 2 * SECONDS_PER_LOCAL_READ, detail="closed form")
    dptr, dadj = dag.complement_lists(graph.indptr, graph.indices)
    seconds, detail = _dag_seconds(graph, dptr, dadj, params, backend)
    return Estimate(seconds=seconds, detail=detail + " of the complement")


#: Nodes of the triangle-free ring beside the warm-up's clique: enough that CuPy's passes over
#: per-node arrays take their large-array kernels (multi-block scans, CUB reductions), which
#: it compiles separately from the small-array ones.
WARM_UP_RING = 1 << 15


#: Clique sizes of the warm-up (:func:`warm_up_cliques`).
WARM_UP_SIZES = tuple(range(3, 4 + gpu.CLIQUE_DEPTH))
#: The warm-up's parts, two clique sizes each (a first start on many cores compiles them in
#: separate processes: all of them took 31.3 s of one process on the GPU host, the longest
#: share of its compile pool; with CuPy's per-length reductions gone, a part of one size took
#: 8.5 s alone, mostly what every size compiles: the module and CuPy's passes, 2026-11-27).
WARM_UP_PART_SIZES = {"k" + "-".join(map(str, WARM_UP_SIZES[i:i + 2])): WARM_UP_SIZES[i:i + 2]
                      for i in range(0, len(WARM_UP_SIZES), 2)}
WARM_UP_PARTS = tuple(WARM_UP_PART_SIZES)


def warm_up_cliques(backend: Backend, part: str | None = None) -> None:
    """Worker warm-up of ``count_cliques``: the search at every depth of the GPU's work-item
    cutting (k = 3 to 3 + CLIQUE_DEPTH, with and without k_max; ``part``: the sizes of
    one of :data:`WARM_UP_PARTS`) on a complete graph of 12 nodes beside a ring of
    :data:`WARM_UP_RING` nodes.

    The documented examples run on a ring of 64 nodes, which has no triangle: there the search
    never gets past its first passes, and the kernels and CuPy passes of the cutting would be
    compiled by a job's first call instead (seconds on a fresh worker).
    """
    src, dst = np.triu_indices(12, 1)
    ring = np.arange(12, 12 + WARM_UP_RING)
    graph = simple_graph(np.concatenate([src, ring]), np.concatenate([dst, np.roll(ring, 1)]))
    run = gpu.cliques_gpu if backend == "gpu" else cpu.cliques_cpu
    for k in WARM_UP_SIZES if part is None else WARM_UP_PART_SIZES[part]:
        for k_max in (False, True):
            run(graph, CountParams(k=k, k_max=k_max), no_progress)
