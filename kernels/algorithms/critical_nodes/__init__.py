"""Critical node detection: delete exactly k nodes to minimise the connected pairs left.

The objective of a set A of k nodes is the sum, over the components of G - A, of s(s - 1) / 2.
After the CND heuristic (an MIS grown greedily back to n - k nodes) and its CND* / pCND*
versions of *Parallel critical node detection on GPU and in the cloud* (the paper in the
project's seeds):

* ``greedy`` (CND*): a maximal independent set, randomised by ``seed``, is the starting set of
  kept ("selected") nodes; while more than k nodes are forbidden, the forbidden node whose
  return joins the fewest pairs goes back (smallest id on ties). Components are kept as
  ``component[]``/``sizes[]`` arrays (the paper's union-find: O(1) find); on the CPU a merge
  relabels the smaller pieces only and the candidates sit in heaps of lower bounds of their
  costs (hubs next to a merge bounded rather than rescanned, bounds that follow the largest
  component's growth), the same sets as the paper's rescan of every candidate: dblp-2010 in
  about a second on one core, an R-MAT of a million nodes in 12 s (n^1.3 there). When the
  MIS leaves fewer than k nodes out, the highest-id MIS nodes go too (the paper's trivial case:
  any choice keeps the objective at 0).
* ``multistart`` (pCND*): ``starts`` greedy runs with seeds ``seed, seed + 1, ...``; the best
  (smallest objective, then first start) wins. On the GPU each CUDA block runs one start with
  its own MIS, component and size arrays, and reduces the candidates' scores by argmin in
  shared memory. A cost is kept as ``alpha * G + beta``, G the size of one big component
  (joining it is linear in its size), so the big one's growth rescores nothing; each step
  costs an argmin and a relabelling pass over the nodes (O(V)) plus the rescoring of the
  candidates next to the other merged components. Same sets as the CPU, bit for bit.
* ``distributed`` (pCND*(Cloud)): the worker fans the starts out as ``shards`` queue jobs (a
  range of seeds each, on any worker) and a reduce job keeps the best; see
  :func:`shard_params` and :func:`merge_results` (the queue side is ``workers/fanout.py``).
  With ``shard_method="memetic"`` each shard is a memetic island instead (its own seed, the
  whole time limit) and the best island wins; the islands trade their bests through Redis
  while they run (every ``MIGRATION_SHARE`` of the time limit, see ``memetic.py``), so a
  better set found on one worker joins every other island's population.
* ``search`` (past the paper): from the best of the ``starts`` greedy runs that fit in
  ``START_SHARE`` of ``time_limit_s`` (the first may take ``FIRST_START_SHARE``; where it would
  not fit, the k highest-degree nodes; on the CPU a greedy removal by exact articulation gains
  when that is better; on the GPU the host's start where a GPU wave would not fit), swap moves
  until ``time_limit_s``: remove the node of a large component whose removal leaves the fewest pairs
  (exact, from the articulation points of that component), put back the deleted node whose
  return joins the fewest, with tabu tenures and restarts from the best set (see
  :func:`graphgpu.kernels.algorithms.critical_nodes.search.swap_search`). On the GPU
  thousands of such chains run at once, one per warp, from the blocks' best multistart sets;
  a warp scores every removal candidate of the component and every restore candidate in
  parallel. Search answers depend on the time limit (and on the backend); greedy, multistart
  and distributed answers depend on the seeds only and are the same on both backends.
* ``memetic`` (the choice for quality): a population of k-sets, a backbone crossover (keep what
  both parents delete, complete greedily by exact articulation gains), the swap search above
  as the improvement, and reduce-solve-combine restarts (see
  :mod:`graphgpu.kernels.algorithms.critical_nodes.memetic`). Anytime: the k highest-degree
  nodes answer within milliseconds, every new best is a progress message and a ``timeline``
  entry, and the run ends at ``time_limit_s`` (or after ``generations``); the CND* starts are
  offered as they are first (never worse than greedy where one fits), and building the
  population takes at most ``POPULATION_SHARE`` of the limit (where it cannot, the rest of the
  time improves the best set again and again). Population and moves shrink as n * k grows.
  On a small instance (n * k up to ``POLISH_MAX_WORK``) a run bounded by time gives its last
  ``POLISH_SHARE`` of the limit to the ``search`` chains from its best set (``polish_gain``:
  the pairs they took off): on Watts-Strogatz graphs the population stalls where those
  chains go on.
  On the GPU each generation's children are improved at once, one warp each; the answer is
  deterministic per seed and backend when ``generations`` ends the run (the backends need not
  agree).
* Run in-process (no queue, e.g. a direct library call), ``distributed`` is the multistart of
  all its seeds, which is what the shards compute together.

Modules: ``cpu.py`` and ``gpu.py`` hold the two entry points (one signature), ``driver.py`` the
run both share; ``greedy.py`` (CND*), ``moves.py`` (components under node moves), ``search.py``
(swap search) and ``memetic.py`` the Numba engines; ``multistart.cu`` and ``search.cu`` the CUDA
kernels (fetched through ``cuda.kernels``); ``params.py`` the models and seeds, ``result.py`` the
result and its checks, ``tuning.py`` the search constants, ``cost.py`` the cost model.
Every result's objective is recomputed independently (SciPy's connected components of the
residual graph) before it is returned.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.critical_nodes import gpu as cnd_gpu
from graphgpu.kernels.algorithms.critical_nodes.cost import (
    check_seconds,
    cnd_seconds,
)
from graphgpu.kernels.algorithms.critical_nodes.cpu import critical_nodes_cpu
from graphgpu.kernels.algorithms.critical_nodes.gpu import critical_nodes_gpu
from graphgpu.kernels.algorithms.critical_nodes.params import (
    CndParams,
    CndSummary,
    is_memetic,
    island_seed,
    seeds_for,
)
from graphgpu.kernels.algorithms.critical_nodes.result import check_k, make_result, objective_of
from graphgpu.kernels.algorithms.critical_nodes.warmup import PARTS, warm_up
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    Backend,
    Estimate,
    register_algorithm,
)

__all__ = ["CndParams", "CndSummary", "check_k", "critical_nodes_cpu", "critical_nodes_gpu",
           "estimate", "make_result", "merge_results", "objective_of", "shard_params"]

def shard_params(params: CndParams) -> list[dict[str, Any]] | None:
    """``distributed``: one ``multistart`` parameter set per shard, covering all the seeds, or
    with ``shard_method="memetic"`` one memetic island per shard (seeds ``ISLAND_SEEDS`` apart,
    so that the islands' CND* starts differ).

    None for the other methods (they run as one job). Run in-process (no queue), a
    ``distributed`` job is the ``multistart`` of all its seeds: the same answer; with memetic
    islands it is the first island.
    """
    if params.method != "distributed":
        return None
    base = params.model_dump(mode="json")
    if params.shard_method == "memetic":
        return [{**base, "method": "memetic", "seed": island_seed(params, i)}
                for i in range(params.shards)]
    bounds = np.linspace(0, params.starts, min(params.shards, params.starts) + 1).astype(int)
    return [{**base, "method": "multistart", "seed": params.seed + int(lo),
             "starts": int(hi - lo)} for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def merge_results(params: CndParams, shards: list[dict[str, Any] | None]
                  ) -> tuple[int, dict[str, Any]]:
    """``distributed``: the winning shard and the whole run's summary fields.

    ``shards`` holds each shard's summary, ``None`` for one that failed. The winner has the
    smallest objective, then the smallest seed; ``best_start`` counts from the run's first seed
    (memetic islands: the island).
    """
    done = [(i, s) for i, s in enumerate(shards) if s is not None]
    if not done:
        raise InvalidInput("every shard of the distributed run failed", field="shards")
    index, winner = min(done, key=lambda d: (d[1]["objective"], d[1]["best_seed"]))
    islands = params.shard_method == "memetic"
    return index, {**winner, "method": params.method,
                   "best_start": index if islands else winner["best_seed"] - params.seed,
                   "shard": index,
                   "shards_ok": len(done), "starts_run": sum(s["starts_run"] for _, s in done),
                   "time_to_best_s": max(s["time_to_best_s"] for _, s in done)}


def estimate(graph: Graph, params: CndParams, backend: Backend) -> Estimate:
    """Cost by :mod:`~graphgpu.kernels.algorithms.critical_nodes.cost`: a CND* start is about
    linear in nodes and arcs on the CPU; a GPU start passes over the nodes each step.
    ``memetic`` and ``search`` take their time limit (their starts fit in a share of it, or
    none runs)."""
    check_k(graph, params)
    result_bytes = graph.n + 8 * params.k
    if is_memetic(params):
        return Estimate(seconds=params.time_limit_s + check_seconds(graph),
                        result_bytes=result_bytes,
                        device_bytes=cnd_gpu.memetic_device_bytes(graph, params.k)
                        if backend == "gpu" else graph.nbytes(),
                        detail=f"memetic search for {params.time_limit_s:g} s")
    starts = len(seeds_for(params))
    device_bytes = cnd_gpu.device_bytes(graph, starts, params.k, params.method == "search")
    if params.method == "search":  # its starts fit in a share of the limit, or none runs
        return Estimate(seconds=params.time_limit_s + check_seconds(graph),
                        result_bytes=result_bytes, device_bytes=device_bytes,
                        detail=f"swap search for {params.time_limit_s:g} s")
    if params.method == "distributed":
        starts = -(-starts // min(params.shards, starts))  # shards run side by side
    if backend == "gpu" and not cnd_gpu.on_host(graph, params.k, starts, on_gpu=False):
        wave = cnd_gpu.concurrent_starts(on_gpu=False)
        rounds = -(-starts // wave)
        seconds = cnd_gpu.gpu_starts_seconds(graph, params.k, starts, on_gpu=False)
    else:  # the CPU, or the GPU backend's starts on the host (cnd_gpu.on_host)
        rounds, seconds = starts, starts * cnd_seconds(graph, params.k)
    return Estimate(seconds=seconds + check_seconds(graph), result_bytes=result_bytes,
                    device_bytes=device_bytes, detail=f"{rounds} rounds of CND* starts")


CRITICAL_NODES = register_algorithm(Algorithm(
    name="critical_nodes",
    summary="Critical node detection: the k nodes whose deletion leaves the fewest connected "
            "pairs (CND* greedy, GPU multistart, distributed shards, swap search, memetic "
            "search).",
    params_model=CndParams,
    result_model=CndSummary,
    cpu=critical_nodes_cpu,
    gpu=critical_nodes_gpu,
    estimate=estimate,
    shards=shard_params,
    merge=merge_results,
    migrates=True,
    directed="symmetrise",
    warm_up=warm_up,
    warm_up_parts=PARTS,
))
