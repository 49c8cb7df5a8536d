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

Modules: :mod:`~graphgpu.kernels.algorithms.counting.plan` (the runs, written once for both
backends), :mod:`~graphgpu.kernels.algorithms.counting.cliques` and
:mod:`~graphgpu.kernels.algorithms.counting.esu` (the host searches: the CPU's counts, the GPU's
work items, the estimates), :mod:`~graphgpu.kernels.algorithms.counting.cpu` and
:mod:`~graphgpu.kernels.algorithms.counting.gpu` (the entry points, ``counting.cu``); the
orderings are :mod:`graphgpu.kernels.algorithms.common.dag`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.common import dag
from graphgpu.kernels.algorithms.counting import cpu, gpu, plan
from graphgpu.kernels.algorithms.counting.cliques import clique_scratch, clique_walks
from graphgpu.kernels.algorithms.counting.cpu import cliques_cpu, connected_cpu, independent_cpu
from graphgpu.kernels.algorithms.counting.esu import connected_walks, esu_scratch
from graphgpu.kernels.algorithms.counting.gpu import cliques_gpu, connected_gpu, independent_gpu
from graphgpu.kernels.algorithms.counting.plan import ENUMERATE_MAX_NODES, LOCAL_MAX_K
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    AlgorithmFn,
    Backend,
    Estimate,
    EstimateFn,
    no_progress,
    register_algorithm,
)

__all__ = ["ENUMERATE_MAX_NODES", "LOCAL_MAX_K", "MAX_K", "CountParams", "CountSummary",
           "IndependentParams", "cliques_cpu", "cliques_gpu", "connected_cpu", "connected_gpu",
           "estimate_cliques", "estimate_connected", "estimate_independent", "independent_cpu",
           "independent_gpu", "warm_up_cliques"]

#: Largest k (the depth of the GPU kernels' per-thread stacks).
MAX_K = 64
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


# ------------------------------------------------------------------------------------------------
# Estimates: sample roots, search them on the CPU under a budget, extrapolate
# ------------------------------------------------------------------------------------------------


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


def _dag_seconds(graph: Graph, dptr: np.ndarray, dadj: np.ndarray, params: CountParams,
                 backend: Backend) -> tuple[float, str]:
    """Seconds of a clique search on the DAG ``(dptr, dadj)``: sampled search nodes, bitmaps and
    the orientation."""
    pos, rows, cand = clique_scratch(dptr, params.k)
    lo_size = 3 if params.k_max else params.k
    outdeg = np.diff(dptr)
    nodes, detail = sampled_nodes(outdeg, lambda v, walks, seed: clique_walks(
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
    dptr, dadj = gpu.clique_dag(graph, np) if backend == "gpu" else cpu.clique_dag(graph)
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
    mark, ext = esu_scratch(graph.indptr, params.k)
    nodes, detail = sampled_nodes(
        deg[roots] + deg[graph.indices[arcs]],
        lambda item, walks, seed: connected_walks(
            graph.indptr, graph.indices, int(roots[item]), int(first[item]), params.k, walks,
            seed, mark, ext))
    seconds = nodes / NODES_PER_SECOND[backend]["connected"] + graph.m * SECONDS_PER_EDGE
    return Estimate(seconds=seconds, detail=detail.replace("roots", "edge items"))


def estimate_independent(graph: Graph, params: IndependentParams, backend: Backend
                         ) -> Estimate:
    """Cost of ``count_independent_sets``: local regime O(sum of squared degrees) (the per-edge
    triangle merges); enumeration regime like :func:`estimate_cliques` on the complement."""
    if plan.regime(graph, params) == "local":
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


def warm_up_cliques(backend: Backend) -> None:
    """Worker warm-up of ``count_cliques``: the search at every depth of the GPU's work-item
    cutting (k = 3 to 3 + CLIQUE_DEPTH, with and without k_max) on a complete graph of 12 nodes
    beside a ring of :data:`WARM_UP_RING` nodes.

    The documented examples run on a ring of 64 nodes, which has no triangle: there the search
    never gets past its first passes, and the kernels and CuPy passes of the cutting would be
    compiled by a job's first call instead (seconds on a fresh worker).
    """
    src, dst = np.triu_indices(12, 1)
    ring = np.arange(12, 12 + WARM_UP_RING)
    graph, _ = build_graph(np.concatenate([src, ring]), np.concatenate([dst, np.roll(ring, 1)]))
    run = cliques_gpu if backend == "gpu" else cliques_cpu
    for k in range(3, 4 + gpu.CLIQUE_DEPTH):
        for k_max in (False, True):
            run(graph, CountParams(k=k, k_max=k_max), no_progress)


def _declare(name: str, summary: str, params_model: type[CountParams], cpu: AlgorithmFn,
             gpu: AlgorithmFn, estimate: EstimateFn,
             warm_up: Callable[[Backend], None] | None = None) -> Algorithm:
    # The three share their result model; each names its parameters, backends and estimate.
    return register_algorithm(Algorithm(name=name, summary=summary, params_model=params_model,
                                        result_model=CountSummary, cpu=cpu, gpu=gpu,
                                        estimate=estimate, directed="symmetrise",
                                        warm_up=warm_up))


_declare("count_connected_subgraphs",
         "Exact number of vertex sets of size k inducing a connected subgraph (ESU; k_max: every "
         "size up to k).", CountParams, connected_cpu, connected_gpu, estimate_connected)
_declare("count_cliques",
         "Exact number of k-cliques (degeneracy-ordered DAG, bitmap search; k_max: every size up "
         "to k).", CountParams, cliques_cpu, cliques_gpu, estimate_cliques, warm_up_cliques)
_declare("count_independent_sets",
         "Exact number of independent sets of size k (local counts for k <= 4 on any graph, "
         "enumeration on graphs of <= 1,024 nodes).", IndependentParams, independent_cpu,
         independent_gpu, estimate_independent)
