"""Critical node detection: delete exactly k nodes to minimise the connected pairs left.

The objective of a set A of k nodes is the sum, over the components of G - A, of s(s - 1) / 2.
After the CND heuristic (an MIS grown greedily back to n - k nodes) and its CND* / pCND*
versions of *Parallel critical node detection on GPU and in the cloud* (the paper in the
project's seeds):

* ``greedy`` (CND*): a maximal independent set, randomised by ``seed``, is the starting set of
  kept ("selected") nodes; while more than k nodes are forbidden, the forbidden node whose
  return joins the fewest pairs goes back (smallest id on ties). Components are kept as
  ``component[]``/``sizes[]`` arrays (the paper's union-find: O(1) find, O(V) union). When the
  MIS leaves fewer than k nodes out, the highest-id MIS nodes go too (the paper's trivial case:
  any choice keeps the objective at 0).
* ``multistart`` (pCND*): ``starts`` greedy runs with seeds ``seed, seed + 1, ...``; the best
  (smallest objective, then first start) wins. On the GPU each CUDA block runs one start with
  its own MIS, component and size arrays, and reduces the candidates' scores by argmin in
  shared memory; the GPU rescores only the candidates next to the component that just grew
  (the others' scores cannot change), so each step costs the new component's volume plus one
  argmin pass instead of O(V + E). Same sets as the CPU, bit for bit.
* ``distributed`` (pCND*(Cloud)): the worker fans the starts out as ``shards`` queue jobs (a
  range of seeds each, on any worker) and a reduce job keeps the best; see
  :func:`shard_params` and :func:`merge_results` (the queue side is ``workers/fanout.py``).
* ``search`` (past the paper): from the best of ``starts`` greedy runs (on the CPU, or a
  greedy removal by exact articulation gains when that is better), swap moves under
  ``time_limit_s``: remove the node of a large component whose removal leaves the fewest pairs
  (exact, from the articulation points of that component), put back the deleted node whose
  return joins the fewest, with tabu tenures and restarts from the best set (see
  :func:`graphgpu.kernels.algorithms.critical_nodes.cpu.swap_search`). On the GPU thousands of such
  chains run at once, one
  per warp, from the blocks' best multistart sets; a warp scores every removal candidate of
  the component and every restore candidate in parallel. Search answers depend on the time
  limit (and on the backend); greedy, multistart and distributed answers depend on the seeds
  only and are the same on both backends.
* Run in-process (no queue, e.g. a direct library call), ``distributed`` is the multistart of
  all its seeds, which is what the shards compute together.

Every result's objective is recomputed independently (SciPy's connected components of the
residual graph) before it is returned.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict, Field
from scipy.sparse import csgraph

from graphgpu.kernels.algorithms.critical_nodes import cpu as cnd_cpu
from graphgpu.kernels.algorithms.critical_nodes import gpu as cnd_gpu
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    VOLATILE,
    Algorithm,
    AlgorithmResult,
    Backend,
    Estimate,
    ProgressFn,
    register_algorithm,
)

#: Longest component-size histogram and best-over-time list kept in the summary.
MAX_LISTED = 1000
#: CPU cost of one CND* step per node or arc scanned, for the estimate (Numba; ~3 ns per scan
#: over V - |MIS| - k steps on the H100 host, counted here over V - k steps: about 2x over).
NS_PER_SCAN = 6.0
#: GPU speed-up of one start over the CPU's, for the estimate (measured 3x to 27x on an H100,
#: bench/results/cnd.md; a wave of concurrent starts takes about 2.5x one start).
GPU_SPEEDUP = 4.0


class CndParams(BaseModel):
    """Parameters of ``critical_nodes``."""

    # Workers warm up with every example (together they reach every GPU kernel); the first is
    # deterministic, so the registry's contract test can compare the backends on it.
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"k": 10, "method": "multistart", "starts": 128, "seed": 7},
                     {"k": 3, "method": "search", "starts": 4, "time_limit_s": 0.05}]})

    k: int = Field(ge=1, description="Nodes to delete (1 <= k < number of nodes).")
    method: Literal["greedy", "multistart", "distributed", "search"] = Field(
        "greedy", description="greedy (CND*), multistart (pCND*), distributed (pCND* over "
                              "queue jobs) or search (swap local search from the best greedy).")
    seed: int = Field(0, ge=0, le=2**62, description="Seed of the first start; same seed, same "
                                                     "answer (search: for the same moves).")
    starts: int = Field(64, ge=1, le=1 << 16, description="multistart, distributed, search: "
                                                           "greedy starts (seeds seed, seed+1, "
                                                           "...).")
    shards: int = Field(2, ge=1, le=256, description="distributed: queue jobs the starts are "
                                                      "split into.")
    time_limit_s: float = Field(1.0, gt=0.0, le=3600.0, description="search: seconds of swap "
                                                                     "moves after the starts.")


class CndSummary(BaseModel):
    """Summary of a ``critical_nodes`` result."""

    method: str = Field(description="The method that ran.")
    k: int = Field(description="Nodes deleted (the `critical` array, original ids).")
    objective: int = Field(description="Connected pairs left: sum of s(s-1)/2 over components.")
    objective_before: int = Field(description="The same for the whole graph.")
    components: int = Field(description="Components left.")
    component_sizes: list[list[int]] = Field(
        description="[size, count] pairs, largest size first (at most 1000).")
    best_seed: int = Field(description="Seed of the greedy start that won (search: it started "
                                       "from).")
    best_start: int = Field(description="Index of that start among the starts.")
    shard: int | None = Field(None, description="distributed: the shard that found it.")
    shards_ok: int | None = Field(None, description="distributed: shards that succeeded.")
    starts_run: int = Field(description="Greedy starts run.")
    time_to_best_s: float = Field(description="Seconds from the start of the run to the best.",
                                  json_schema_extra=VOLATILE)
    iterations: int = Field(0, description="search: swap moves made (all chains).",
                            json_schema_extra=VOLATILE)
    timeline: list[list[float]] = Field(
        default_factory=list, description="search: [seconds, objective] at each new best.",
        json_schema_extra=VOLATILE)


def check_k(graph: Graph, params: CndParams) -> None:
    """Refuse a k that leaves no node (the API calls this through the estimate)."""
    if params.k >= graph.n:
        raise InvalidInput(f"k must be below the number of nodes ({graph.n}), got {params.k}",
                           field="k")


def objective_of(graph: Graph, removed: np.ndarray) -> tuple[int, np.ndarray]:
    """Pairs connected in ``graph`` without the ``removed`` nodes, and the components' sizes.

    Independent of the engines: SciPy's connected components of the induced subgraph.
    """
    keep = np.ones(graph.n, bool)
    keep[removed] = False
    adjacency = sp.csr_matrix((np.ones(graph.indices.shape[0], np.int8), graph.indices,
                               graph.indptr), shape=(graph.n, graph.n))
    residual = adjacency[keep][:, keep]
    count, labels = csgraph.connected_components(residual, directed=False)
    sizes = np.bincount(labels, minlength=count).astype(np.int64)
    return int((sizes * (sizes - 1) // 2).sum()), sizes


def histogram(sizes: np.ndarray) -> list[list[int]]:
    values, counts = np.unique(sizes, return_counts=True)
    return [[int(v), int(c)] for v, c in zip(values[::-1], counts[::-1], strict=True)][:MAX_LISTED]


def make_result(graph: Graph, params: CndParams, removed: np.ndarray, claimed: int,
                **fields: Any) -> AlgorithmResult:
    """The result of ``removed`` (internal ids), its objective checked against ``claimed``."""
    removed = np.sort(np.asarray(removed, dtype=np.int64))
    if removed.shape[0] != params.k or np.unique(removed).shape[0] != params.k:
        raise RuntimeError(f"critical_nodes: {removed.shape[0]} distinct nodes, not k={params.k}")
    objective, sizes = objective_of(graph, removed)
    if objective != claimed:
        raise RuntimeError(f"critical_nodes: engine claimed {claimed}, recomputed {objective}")
    flags = np.zeros(graph.n, np.uint8)
    flags[removed] = 1
    before, _ = objective_of(graph, np.empty(0, np.int64))
    summary = {"method": params.method, "k": params.k, "objective": objective,
               "objective_before": before, "components": int(sizes.shape[0]),
               "component_sizes": histogram(sizes), **fields}
    return AlgorithmResult(summary=summary, node_values={"removed": flags},
                           arrays={"critical": removed}, node_id_fields=("critical",))


# ------------------------------------------------------------------------------------------------
# Greedy starts
# ------------------------------------------------------------------------------------------------


def _greedy_cpu(graph: Graph, k: int, seeds: range, progress: ProgressFn,
                share: float = 1.0) -> tuple[int, int, np.ndarray]:
    """CND* from each seed; returns (objective, index of the best start, removed mask)."""
    comp = np.zeros(graph.n, np.int64)
    sizes = np.zeros(graph.n + 1, np.int64)
    best = (-1, -1, np.zeros(0, bool))
    for i, seed in enumerate(seeds):
        progress(share * i / len(seeds), f"critical_nodes: greedy start {i + 1}/{len(seeds)}")
        objective = int(cnd_cpu.cnd_star(graph.indptr, graph.indices, k, np.uint64(seed), comp,
                                         sizes))
        if best[0] < 0 or objective < best[0]:
            best = (objective, i, comp == 0)
    return best


def _seeds(params: CndParams) -> range:
    count = 1 if params.method == "greedy" else params.starts
    return range(params.seed, params.seed + count)


def shard_params(params: CndParams) -> list[dict[str, Any]] | None:
    """``distributed``: one ``multistart`` parameter set per shard, covering all the seeds.

    None for the other methods (they run as one job). Run in-process (no queue), a
    ``distributed`` job is the ``multistart`` of all its seeds: the same answer.
    """
    if params.method != "distributed":
        return None
    bounds = np.linspace(0, params.starts, min(params.shards, params.starts) + 1).astype(int)
    base = params.model_dump(mode="json")
    return [{**base, "method": "multistart", "seed": params.seed + int(lo),
             "starts": int(hi - lo)} for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def merge_results(params: CndParams, shards: list[dict[str, Any] | None]
                  ) -> tuple[int, dict[str, Any]]:
    """``distributed``: the winning shard and the whole run's summary fields.

    ``shards`` holds each shard's summary, ``None`` for one that failed. The winner has the
    smallest objective, then the smallest seed; ``best_start`` counts from the run's first seed.
    """
    done = [(i, s) for i, s in enumerate(shards) if s is not None]
    if not done:
        raise InvalidInput("every shard of the distributed run failed", field="shards")
    index, winner = min(done, key=lambda d: (d[1]["objective"], d[1]["best_seed"]))
    return index, {**winner, "method": params.method,
                   "best_start": winner["best_seed"] - params.seed, "shard": index,
                   "shards_ok": len(done), "starts_run": sum(s["starts_run"] for _, s in done),
                   "time_to_best_s": max(s["time_to_best_s"] for _, s in done)}


# ------------------------------------------------------------------------------------------------
# Runs
# ------------------------------------------------------------------------------------------------


def _run(graph: Graph, params: CndParams, backend: Backend, progress: ProgressFn
         ) -> AlgorithmResult:
    check_k(graph, params)
    started = time.perf_counter()
    seeds = _seeds(params)
    search = params.method == "search"
    share = 0.1 if search else 1.0
    if backend == "cpu":
        objective, start, mask = _greedy_cpu(graph, params.k, seeds, progress, share)
    else:
        starts = cnd_gpu.multistart(graph, params.k, seeds, progress, share)
        objective, start, mask = starts.objective, starts.start, starts.removed
    removed = np.flatnonzero(mask)
    found = time.perf_counter() - started
    fields: dict[str, Any] = {"best_seed": seeds[start], "best_start": start,
                              "starts_run": len(seeds)}
    if search:
        deadline = started + params.time_limit_s
        patience = patience_for(params.k)
        if backend == "cpu":
            outcome = search_cpu(graph, removed, objective, params.seed, patience, started,
                                 deadline, progress)
        else:
            outcome = cnd_gpu.search(graph, params.k, starts, params.seed, patience, started,
                                     deadline, progress)
        removed, objective, found, fields["iterations"], fields["timeline"] = outcome
    progress(1.0, f"critical_nodes: objective {objective}")
    return make_result(graph, params, removed, objective, time_to_best_s=found, **fields)


def search_cpu(graph: Graph, start: np.ndarray, objective: int, seed: int, patience: int,
               started: float, deadline: float, progress: ProgressFn
               ) -> tuple[np.ndarray, int, float, int, list[list[float]]]:
    """One swap-search chain until ``deadline``, from ``start`` (the best greedy CND* set) or
    from a greedy removal (:func:`graphgpu.kernels.algorithms.critical_nodes.cpu.greedy_removal`)
    when that is better.

    Returns
    -------
    removed, objective, time_to_best, iterations, timeline
    """
    chain = cnd_cpu.SearchState(graph.indptr, graph.indices, None, seed, k=start.shape[0])
    if chain.best_objective >= objective:  # the greedy removal start is no better: CND*'s
        chain = cnd_cpu.SearchState(graph.indptr, graph.indices, start.astype(np.int32), seed)
    objective = chain.best_objective
    timeline = [[round(time.perf_counter() - started, 6), float(objective)]]
    found = timeline[0][0]
    batch = 16
    while time.perf_counter() < deadline and chain.best_objective > 0:
        tick = time.perf_counter()
        before = chain.best_objective
        chain.run(batch, patience)
        now = time.perf_counter()
        if chain.best_objective < before:
            found = now - started
            if len(timeline) < MAX_LISTED:
                timeline.append([round(found, 6), float(chain.best_objective)])
        # Batches of ~20 ms: progress and cancel checks stay prompt without costing much.
        batch = max(1, min(batch * 2, int(batch * 0.02 / max(now - tick, 1e-6))))
        span = max(deadline - started, 1e-9)
        progress(0.1 + 0.9 * min((now - started) / span, 1.0),
                 f"critical_nodes: search best {chain.best_objective} after "
                 f"{chain.iterations} moves")
    return chain.best.astype(np.int64), chain.best_objective, found, chain.iterations, timeline


def patience_for(k: int) -> int:
    """Moves without a new best before a restart from the best set."""
    return 100 + 4 * k


def critical_nodes_cpu(graph: Graph, params: CndParams, progress: ProgressFn) -> AlgorithmResult:
    """Critical nodes on the CPU (Numba).

    Parameters
    ----------
    graph : Graph
    params : CndParams
    progress : ProgressFn
        Called between starts and between batches of swap moves; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``removed`` (uint8 per node), ``critical`` (the k deleted nodes), summary per
        :class:`CndSummary`.

    Raises
    ------
    InvalidInput
        ``k`` not below the number of nodes (``field="k"``).
    """
    return _run(graph, params, "cpu", progress)


def critical_nodes_gpu(graph: Graph, params: CndParams, progress: ProgressFn) -> AlgorithmResult:
    """Critical nodes on the GPU (CuPy); greedy and multistart return the CPU's sets exactly."""
    return _run(graph, params, "gpu", progress)


def estimate(graph: Graph, params: CndParams, backend: Backend) -> Estimate:
    """Closed-form cost: a CND* start scans V + E per step for at most V - k steps."""
    check_k(graph, params)
    steps = max(graph.n - params.k, 0)
    per_start = steps * (graph.n + 2 * graph.m) * NS_PER_SCAN * 1e-9
    starts = len(_seeds(params))
    if params.method == "distributed":
        starts = -(-starts // min(params.shards, starts))  # shards run side by side
    search = params.method == "search"
    if backend == "gpu":
        starts = -(-starts // cnd_gpu.concurrent_starts(on_gpu=False))
        per_start *= 2.5 / GPU_SPEEDUP
    seconds = per_start * starts + (params.time_limit_s if search else 0.0)
    return Estimate(seconds=seconds, result_bytes=graph.n + 8 * params.k,
                    device_bytes=cnd_gpu.device_bytes(graph, len(_seeds(params)), params.k,
                                                      search),
                    detail=f"{starts} rounds of starts, at most {steps} greedy steps each")


CRITICAL_NODES = register_algorithm(Algorithm(
    name="critical_nodes",
    summary="Critical node detection: the k nodes whose deletion leaves the fewest connected "
            "pairs (CND* greedy, GPU multistart, distributed shards, swap search).",
    params_model=CndParams,
    result_model=CndSummary,
    cpu=critical_nodes_cpu,
    gpu=critical_nodes_gpu,
    estimate=estimate,
    shards=shard_params,
    merge=merge_results,
))
