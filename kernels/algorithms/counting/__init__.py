"""Exact counting: connected induced k-subgraphs, k-cliques and k-independent sets, CPU and GPU.

After Chatterjee, Radhakrishnan & Antonio, *Counting Problems on Graphs: GPU Storage and Parallel
Computing Techniques* (IPDPSW 2012), who test every k-combination inside windows of BFS levels on
graphs of at most ~500 nodes. We count the same three quantities exactly without testing
combinations, so that graphs of millions of edges are in reach:

* ``count_connected_subgraphs``: ESU (Wernicke 2006). Every connected k-set is enumerated once,
  from its smallest vertex ``r``: a search node is a set S with the list L of S's neighbours above
  ``r`` in discovery order; its children add one of L's not-yet-passed entries. The work is split
  into items, the search nodes at the depth where there are enough of them for the GPU (the
  host searches the levels above); the GPU runs one thread per item. Nodes of size k - 1 add
  their number of children without visiting them.
* ``count_cliques``: kClist-style (Danisch et al. 2018). Orient every edge upwards in an order:
  on the CPU a degeneracy (smallest-last) order, so each vertex keeps at most degeneracy-many
  out-neighbours; on the GPU a (degree, id) order, built on the device with a sort and scans
  (out-degrees below sqrt(2m); the peeling of a degeneracy order is sequential host work that
  took longer than the whole GPU search). Per root, a bitmap of the out-neighbourhood's
  adjacency, then a depth-first search where the candidates of a node are the AND of its
  parent's candidates and the chosen vertex's row. The GPU runs a warp per work item, each lane
  owning words of the bitmaps; an item is a root or, for roots with many candidates, one of its
  search nodes up to three levels down, cut on the device one level per round (the cutting
  kernels count the nodes above), so one giant clique does not leave a single warp with all the
  work.
* ``count_independent_sets``, two regimes (``method``):

  - ``local`` (k <= 4, any graph, the default there): inclusion-exclusion over the edge sets
    inside a k-set, ``i_k = sum over F ⊆ E, |V(F)| <= k of (-1)^|F| C(n - |V(F)|, k - |V(F)|)``,
    grouped by the shape of F: ``i_2 = C(n,2) - m``, ``i_3 = C(n,3) - m(n-2) + P2 - T`` and
    ``i_4 = C(n,4) - m C(n-2,2) + P2 (n-3) + (C(m,2) - P2) - T (n-3) - S3 - P4 + C4 + paw
    - diamond + K4``, with ``P2 = sum C(d,2)`` (2-paths), ``S3 = sum C(d,3)`` (3-stars),
    ``P4 = sum over edges (d_u-1)(d_v-1) - 3T`` (3-paths), ``paw = sum t_v (d_v - 2)``,
    ``diamond = sum over edges C(t_e, 2)``, T and K4 from the clique search and 4-cycles counted
    once from their highest-ranked vertex. O(m * degeneracy), no complement is built.
  - ``enumerate`` (any k, graphs of at most 1,024 nodes, the default for k > 4): the clique search
    on the complement (oriented by id, as out-lists). Its time grows with the number of
    independent sets of size below k, so the estimate refuses what would not finish.

Counts are Python integers, exact at any size: CPU totals are two-word accumulators per size, GPU
totals 128-bit (64-bit per-thread partials flushed before they would wrap).

``k_max=true`` returns every size 1..k in ``counts`` (the connected and clique searches produce
them anyway; for independent sets the empty set is not included). Estimates take the heaviest 32
and 64 random roots (edge items for connected sets), size each one's search tree with Knuth's
random-path estimator (unbiased, heavy-tailed) and extrapolate, plus the orientation and bitmap
work, at rates measured on the H100 machine; jobs over ``GRAPHGPU_MAX_JOB_SECONDS`` are
refused before they are queued (422 ``job_too_long``, the estimate in the error).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.counting import cpu
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    AlgorithmResult,
    Backend,
    Estimate,
    ProgressFn,
    register_algorithm,
)

#: Largest k (the depth of the GPU kernels' per-thread stacks).
MAX_K = 64
#: Largest graph the ``enumerate`` independent-set regime takes (one 32-lane warp of words).
ENUMERATE_MAX_NODES = 1024
#: Largest k of the ``local`` independent-set regime.
LOCAL_MAX_K = 4
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
#: CPU progress reports per run.
CPU_CHUNKS = 64


class CountParams(BaseModel):
    """Parameters of ``count_connected_subgraphs`` and ``count_cliques``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"k": 4},
                                                                              {"k": 5,
                                                                               "k_max": True}]})

    k: int = Field(3, ge=1, le=MAX_K, description="Size of the vertex sets counted.")
    k_max: bool = Field(False, description="Also return the count of every size 1..k.")


class IndependentParams(CountParams):
    """Parameters of ``count_independent_sets``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"k": 4}, {"k": 6, "k_max": True, "method": "enumerate"}]})

    method: Literal["auto", "local", "enumerate"] = Field(
        "auto", description="local: closed forms over local counts (k <= 4, any graph); "
                            "enumerate: search the complement (any k, at most 1,024 nodes); "
                            "auto: local when k <= 4, else enumerate.")


class CountSummary(BaseModel):
    """Summary of a counting result (exact integers of any size)."""

    k: int = Field(description="Size counted.")
    count: int = Field(description="Number of vertex sets of size k with the property.")
    counts: list[int] | None = Field(
        None, description="With k_max: counts[i] is the number of sets of size i + 1.")
    method: str = Field(description="How it was counted: esu, kclist, local or enumerate.")
    roots: int = Field(description="Roots the search started from (or local-count passes).")


def _summary(params: CountParams, counts: dict[int, int], method: str, roots: int
             ) -> AlgorithmResult:
    sizes = range(1, params.k + 1)
    return AlgorithmResult(summary={
        "k": params.k, "count": counts[params.k],
        "counts": [counts[s] for s in sizes] if params.k_max else None,
        "method": method, "roots": roots})


def _chunks(total: int) -> list[np.ndarray]:
    return np.array_split(np.arange(total, dtype=np.int64), min(CPU_CHUNKS, max(total, 1)))


# ------------------------------------------------------------------------------------------------
# Cliques
# ------------------------------------------------------------------------------------------------


def oriented(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rank-relabelled CSR ``(ptr, adj, split)`` and DAG out-lists ``(dptr, dadj)``."""
    rank = cpu.degeneracy_rank(graph.indptr, graph.indices)
    ptr, adj, split = cpu.relabel(graph.indptr, graph.indices, rank)
    dptr, dadj = cpu.out_lists(ptr, adj, split)
    return ptr, adj, split, dptr, dadj


def _dag_counts_cpu(dptr: np.ndarray, dadj: np.ndarray, kmax: int, lo_size: int,
                    progress: ProgressFn, what: str) -> dict[int, int]:
    lo = np.zeros(kmax + 2, np.int64)
    hi = np.zeros(kmax + 2, np.int64)
    n = dptr.shape[0] - 1
    done = 0
    for chunk in _chunks(n):
        progress(done / max(n, 1), f"{what}: {done:,} of {n:,} roots done")
        cpu.clique_roots(dptr, dadj, chunk, kmax, lo_size, lo, hi)
        done += chunk.shape[0]
    totals = cpu.wide_totals(lo, hi)
    return {s: totals[s] for s in range(3, kmax + 1)}


def _dag_counts(backend: Backend) -> Callable[..., dict[int, int]]:
    if backend == "cpu":
        return _dag_counts_cpu
    from graphgpu.kernels.algorithms.counting import gpu as counting_gpu
    return counting_gpu.dag_counts


def clique_dag(graph: Graph, backend: Backend, xp: Any = None) -> tuple[Any, Any]:
    """The DAG a backend's clique search runs on: out-lists ``(dptr, dadj)``.

    CPU: degeneracy order (the smallest out-degrees, O(m) sequential peeling). GPU: degree order
    built with array passes (on the device; with ``xp=numpy`` on the host, for estimates),
    unless an out-degree would pass the kernel's limit; then the degeneracy order, which bounds
    it better.
    """
    if backend == "gpu" and graph.n:
        from graphgpu.kernels.algorithms.counting import gpu as counting_gpu
        if xp is None:
            dptr, dadj = counting_gpu.degree_dag(graph)
        else:
            dptr, dadj = cpu.degree_dag(xp, graph.indptr, graph.indices)
        if int((dptr[1:] - dptr[:-1]).max()) <= counting_gpu.MAX_OUT_DEGREE:
            return dptr, dadj
    return oriented(graph)[3:]


def _cliques(graph: Graph, params: CountParams, progress: ProgressFn, backend: Backend
             ) -> AlgorithmResult:
    progress(0.0, "cliques: ordering")
    dptr, dadj = clique_dag(graph, backend)
    lo_size = 3 if params.k_max else params.k
    counts = {1: graph.n, 2: graph.m}
    counts.update(_dag_counts(backend)(dptr, dadj, params.k, lo_size, progress, "cliques"))
    progress(1.0, "cliques: done")
    return _summary(params, counts, "kclist", graph.n)


def cliques_cpu(graph: Graph, params: CountParams, progress: ProgressFn) -> AlgorithmResult:
    """k-cliques on the CPU (Numba): degeneracy-ordered DAG, per-root bitmaps (module notes).

    Parameters
    ----------
    graph : Graph
    params : CountParams
    progress : ProgressFn
        Reports roots done; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        Summary per :class:`CountSummary` (exact integers).
    """
    return _cliques(graph, params, progress, "cpu")


def cliques_gpu(graph: Graph, params: CountParams, progress: ProgressFn) -> AlgorithmResult:
    """k-cliques on the GPU (a warp per root); same contract and answer as :func:`cliques_cpu`."""
    return _cliques(graph, params, progress, "gpu")


# ------------------------------------------------------------------------------------------------
# Connected induced subgraphs
# ------------------------------------------------------------------------------------------------


def _connected_counts_cpu(graph: Graph, kmax: int, progress: ProgressFn) -> dict[int, int]:
    lo = np.zeros(kmax + 2, np.int64)
    hi = np.zeros(kmax + 2, np.int64)
    done = 0
    for chunk in _chunks(graph.n):
        progress(done / max(graph.n, 1),
                 f"connected subgraphs: {done:,} of {graph.n:,} roots done")
        cpu.connected_roots(graph.indptr, graph.indices, chunk, kmax, lo, hi)
        done += chunk.shape[0]
    totals = cpu.wide_totals(lo, hi)
    return {s: totals[s] for s in range(3, kmax + 1)}


def _connected(graph: Graph, params: CountParams, progress: ProgressFn, backend: Backend
               ) -> AlgorithmResult:
    counts = {1: graph.n, 2: graph.m}
    if backend == "cpu":
        counts.update(_connected_counts_cpu(graph, params.k, progress))
    else:
        from graphgpu.kernels.algorithms.counting import gpu as counting_gpu
        counts.update(counting_gpu.connected_counts(graph, params.k, progress))
    progress(1.0, "connected subgraphs: done")
    return _summary(params, counts, "esu", graph.n)


def connected_cpu(graph: Graph, params: CountParams, progress: ProgressFn) -> AlgorithmResult:
    """Connected induced k-subgraphs on the CPU (Numba ESU from each smallest vertex).

    Parameters
    ----------
    graph : Graph
    params : CountParams
    progress : ProgressFn
        Reports roots done; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        Summary per :class:`CountSummary` (exact integers).
    """
    return _connected(graph, params, progress, "cpu")


def connected_gpu(graph: Graph, params: CountParams, progress: ProgressFn) -> AlgorithmResult:
    """Connected induced k-subgraphs on the GPU (a thread per edge item); same answer as
    :func:`connected_cpu`."""
    return _connected(graph, params, progress, "gpu")


# ------------------------------------------------------------------------------------------------
# Independent sets
# ------------------------------------------------------------------------------------------------


def regime(graph: Graph, params: IndependentParams) -> str:
    """The independent-set regime a run uses; raises InvalidInput when none applies."""
    method = params.method
    if method == "auto":
        method = "local" if params.k <= LOCAL_MAX_K else "enumerate"
    if method == "local" and params.k > LOCAL_MAX_K:
        raise InvalidInput(f"method=local counts independent sets of size <= {LOCAL_MAX_K}",
                           field="k")
    if method == "enumerate" and graph.n > ENUMERATE_MAX_NODES:
        raise InvalidInput(
            f"independent sets of size > {LOCAL_MAX_K} are counted by enumeration, on graphs of "
            f"at most {ENUMERATE_MAX_NODES:,} nodes (this one has {graph.n:,})",
            field="k" if params.method == "auto" else "method")
    return method


def independent_from_local(n: int, m: int, local: dict[str, int], k: int) -> dict[int, int]:
    """Independent sets of sizes 1..k (k <= 4) from the local counts (module notes)."""
    out = {1: n, 2: math.comb(n, 2) - m}
    if k >= 3:
        out[3] = math.comb(n, 3) - m * (n - 2) + local["p2"] - local["triangles"]
    if k >= 4:
        # With n < 4 every term below but C(n, 4) = 0 has a zero factor; max() keeps comb legal.
        out[4] = (math.comb(n, 4) - m * math.comb(max(n - 2, 0), 2) + local["p2"] * (n - 3)
                  + (math.comb(m, 2) - local["p2"]) - local["triangles"] * (n - 3)
                  - local["s3"] - local["p4"] + local["c4"] + local["paw"] - local["diamond"]
                  + local["k4"])
    return {s: out[s] for s in range(1, k + 1)}


def local_counts(graph: Graph, k: int, backend: Backend, progress: ProgressFn
                 ) -> dict[str, int]:
    """The subgraph counts that :func:`independent_from_local` needs for size ``k``.

    Degree sums always; triangles (clique search) for k >= 3; for k = 4 also K4, 4-cycles,
    3-paths, paws and diamonds (per-arc triangle counts). On the GPU every count is computed on
    the device; the closing sums are exact int64 reductions.
    """
    if backend == "gpu":
        from graphgpu.kernels.algorithms.counting import gpu as counting_gpu
        from graphgpu.kernels.core.device import cupy
        xp: Any = cupy()
        indptr = xp.asarray(graph.indptr)
    else:
        xp, indptr = np, graph.indptr
    deg = xp.diff(indptr)
    out = {"p2": int((deg * (deg - 1) // 2).sum()), "s3": int((deg * (deg - 1) * (deg - 2)
                                                               // 6).sum())}
    if k < 3:
        return out
    progress(0.1, "independent sets: triangles")
    ptr, adj, split, dptr, dadj = oriented(graph)
    cliques = _dag_counts(backend)(dptr, dadj, min(k, 4), 3, progress, "independent sets")
    out["triangles"] = cliques[3]
    if k < 4:
        return out
    out["k4"] = cliques[4]
    progress(0.6, "independent sets: 4-cycles and triangles per edge")
    if backend == "gpu":
        te = counting_gpu.arc_triangles(graph)
        out["c4"] = counting_gpu.four_cycles(ptr, adj, split)
    else:
        te = cpu.edge_triangles(graph.indptr, graph.indices)
        out["c4"] = int(cpu.four_cycles(ptr, adj, split))
    def row_sums(values: Any) -> Any:  # per vertex, the sum over its arcs (rows are contiguous)
        cum = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(values)])
        return cum[indptr[1:]] - cum[indptr[:-1]]

    # Sums over arcs count each edge twice.
    next_deg = row_sums(deg[xp.asarray(graph.indices)] - 1)
    out["p4"] = int(((deg - 1) * next_deg).sum()) // 2 - 3 * out["triangles"]
    out["diamond"] = int((te * (te - 1) // 2).sum()) // 2
    out["paw"] = int((row_sums(te) // 2 * (deg - 2)).sum())
    return out


def _independent(graph: Graph, params: IndependentParams, progress: ProgressFn,
                 backend: Backend) -> AlgorithmResult:
    method = regime(graph, params)
    if method == "local":
        counts = independent_from_local(graph.n, graph.m,
                                        local_counts(graph, params.k, backend, progress),
                                        params.k)
    else:
        progress(0.0, "independent sets: complement")
        dptr, dadj = cpu.complement_lists(graph.indptr, graph.indices)
        counts = {1: graph.n, 2: int(dadj.shape[0])}
        lo_size = 3 if params.k_max else params.k
        counts.update(_dag_counts(backend)(dptr, dadj, params.k, lo_size, progress,
                                           "independent sets"))
    progress(1.0, "independent sets: done")
    return _summary(params, counts, method, graph.n)


def independent_cpu(graph: Graph, params: IndependentParams, progress: ProgressFn
                    ) -> AlgorithmResult:
    """k-independent sets on the CPU, by local counts (k <= 4) or enumeration (module notes).

    Parameters
    ----------
    graph : Graph
    params : IndependentParams
    progress : ProgressFn
        Reports phases and roots done; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        Summary per :class:`CountSummary` (exact integers; ``method`` names the regime).

    Raises
    ------
    InvalidInput
        ``local`` with k > 4, or enumeration on a graph of more than 1,024 nodes.
    """
    return _independent(graph, params, progress, "cpu")


def independent_gpu(graph: Graph, params: IndependentParams, progress: ProgressFn
                    ) -> AlgorithmResult:
    """k-independent sets on the GPU; same contract and answer as :func:`independent_cpu`."""
    return _independent(graph, params, progress, "gpu")


# ------------------------------------------------------------------------------------------------
# Estimates: sample roots, search them on the CPU under a budget, extrapolate
# ------------------------------------------------------------------------------------------------


def sampled_nodes(weights: np.ndarray, search: Callable[[int, int, int], float]
                  ) -> tuple[float, str]:
    """Search nodes of all roots: the heaviest :data:`HEAVY_SAMPLES` roots plus
    :data:`RANDOM_SAMPLES` random others scaled up; ``search(root, walks, seed)`` estimates one
    root's search nodes (Knuth's random-path estimator, ``counting_cpu.clique_walks``)."""
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


def _dag_seconds(graph: Graph, dptr: np.ndarray, dadj: np.ndarray, params: CountParams,
                 backend: Backend) -> tuple[float, str]:
    """Seconds of a clique search on the DAG ``(dptr, dadj)``: sampled search nodes, bitmaps and
    the orientation."""
    pos, rows, cand = cpu.clique_scratch(dptr, params.k)
    lo_size = 3 if params.k_max else params.k
    outdeg = np.diff(dptr)
    nodes, detail = sampled_nodes(outdeg, lambda v, walks, seed: cpu.clique_walks(
        dptr, dadj, v, params.k, lo_size, walks, seed, pos, rows, cand))
    bitmap_reads = float(outdeg[dadj].sum())
    seconds = (nodes / NODES_PER_SECOND[backend]["clique"]
               + graph.m * ORIENT_SECONDS_PER_EDGE[backend]
               + bitmap_reads * SECONDS_PER_BITMAP_READ[backend])
    return seconds, f"{detail}; {bitmap_reads:,.0f} bitmap reads"


def estimate_cliques(graph: Graph, params: CountParams, backend: Backend) -> Estimate:
    """Cost of ``count_cliques``: sampled roots of the oriented graph (module notes)."""
    if params.k < 3 or graph.m == 0:
        return Estimate(seconds=graph.m * SECONDS_PER_EDGE, detail="closed form")
    dptr, dadj = clique_dag(graph, backend, np)
    seconds, detail = _dag_seconds(graph, dptr, dadj, params, backend)
    return Estimate(seconds=seconds, detail=detail)


def estimate_connected(graph: Graph, params: CountParams, backend: Backend) -> Estimate:
    """Cost of ``count_connected_subgraphs``: sampled edge items (root, first pick)."""
    if params.k < 3 or graph.m == 0:
        return Estimate(seconds=graph.m * SECONDS_PER_EDGE, detail="closed form")
    deg = np.diff(graph.indptr)
    src = np.repeat(np.arange(graph.n), deg)
    arcs = np.flatnonzero(graph.indices > src)
    roots = src[arcs]
    above = np.bincount(roots, minlength=graph.n)
    first = arcs - (graph.indptr[roots + 1] - above[roots])
    mark = np.zeros(graph.n, np.uint8)
    ext = np.empty(max(1, params.k * int(deg.max())), np.int32)
    nodes, detail = sampled_nodes(
        deg[roots] + deg[graph.indices[arcs]],
        lambda item, walks, seed: cpu.connected_walks(
            graph.indptr, graph.indices, int(roots[item]), int(first[item]), params.k, walks,
            seed, mark, ext))
    seconds = nodes / NODES_PER_SECOND[backend]["connected"] + graph.m * SECONDS_PER_EDGE
    return Estimate(seconds=seconds, detail=detail.replace("roots", "edge items"))


def estimate_independent(graph: Graph, params: IndependentParams, backend: Backend
                         ) -> Estimate:
    """Cost of ``count_independent_sets``: local regime O(sum of squared degrees) (the per-edge
    triangle merges); enumeration regime like :func:`estimate_cliques` on the complement."""
    if regime(graph, params) == "local":
        deg = np.diff(graph.indptr).astype(np.float64)
        work = float((deg * deg).sum()) + graph.m
        seconds = work * SECONDS_PER_LOCAL_READ + graph.m * SECONDS_PER_EDGE
        return Estimate(seconds=seconds, detail=f"local counts, about {work:,.0f} adjacency reads")
    if params.k < 3:
        return Estimate(seconds=graph.n ** 2 * SECONDS_PER_LOCAL_READ, detail="closed form")
    dptr, dadj = cpu.complement_lists(graph.indptr, graph.indices)
    seconds, detail = _dag_seconds(graph, dptr, dadj, params, backend)
    return Estimate(seconds=seconds, detail=detail + " of the complement")


register_algorithm(Algorithm(
    name="count_connected_subgraphs",
    summary="Exact number of vertex sets of size k inducing a connected subgraph (ESU; "
            "k_max: every size up to k).",
    params_model=CountParams, result_model=CountSummary, cpu=connected_cpu, gpu=connected_gpu,
    estimate=estimate_connected,
))
register_algorithm(Algorithm(
    name="count_cliques",
    summary="Exact number of k-cliques (degeneracy-ordered DAG, bitmap search; k_max: every "
            "size up to k).",
    params_model=CountParams, result_model=CountSummary, cpu=cliques_cpu, gpu=cliques_gpu,
    estimate=estimate_cliques,
))
register_algorithm(Algorithm(
    name="count_independent_sets",
    summary="Exact number of independent sets of size k (local counts for k <= 4 on any graph, "
            "enumeration on graphs of <= 1,024 nodes).",
    params_model=IndependentParams, result_model=CountSummary, cpu=independent_cpu,
    gpu=independent_gpu, estimate=estimate_independent,
))
