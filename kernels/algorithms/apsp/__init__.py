"""All-pairs shortest paths: the n x n distance matrix, CPU and GPU with the same answer.

Three methods, picked from the graph alone (so both backends, and pruning on or off, use the
same one):

* ``bfs`` (unweighted graph, or ``weighted=false``): hop counts, int32, ``-1`` unreachable.
  CPU: one Numba BFS per source, sources in parallel. GPU: the bit-parallel multi-source BFS of
  :mod:`graphgpu.kernels.algorithms.common.bitset_bfs` (64 sources per machine word, pull levels
  that skip nodes every source of a word has reached); ``apsp_bfs_level`` writes each level's new
  bits into the rows of their sources.
* ``floyd_warshall`` (weighted, dense: average degree >= n / :data:`FW_DEGREE_RATIO`): blocked
  Floyd-Warshall in :data:`TILE`-wide blocks, three phases per block row (pivot block, its row
  and column panels, then every other block as a min-plus product in shared memory on the GPU).
  Each update is one rounded addition and an exact minimum, and the CPU (Numba) follows the same
  block schedule, so the two backends agree bit for bit.
* ``sssp`` (weighted, sparse): Dijkstra from every source on the CPU (the shared Numba Dijkstra),
  batched Bellman-Ford on the GPU (one thread per (node, source), sources contiguous, in place
  until a sweep changes nothing). Both compute, per source, the smallest over paths of the path's
  weights added left to right in the dtype (the least fixpoint; see
  :mod:`graphgpu.kernels.algorithms.sssp`), so
  they agree bit for bit.

Weighted distances are ``dtype`` (float32 or float64), ``inf`` unreachable; weights are cast to
the dtype first. Row ``i`` holds the distances from node ``i`` (internal ids, ascending original
ids).

Pruning (the paper's Phase I-III for APSP): pendant vertices are peeled round by round
(:mod:`graphgpu.kernels.algorithms.common.pruning`), the core is solved, and Phase III fills the
pruned vertices' rows and
columns, latest round first: a vertex ``p`` removed towards ``w`` over an edge of weight ``h``
(1 for hop counts) has ``dist(p, x) = h + dist(w, x)`` and ``dist(x, p) = dist(x, w) + h`` for
every ``x`` filled before it (the core and later rounds: none of them is in ``p``'s pendant
tree, so their paths to ``p`` go through ``w``). Nodes of ``p``'s own tree come later and fill
their entries towards ``p`` the same way, so tree distances come out right too. For hop counts
and for weights whose sums are exact in the dtype (e.g. integers below 2**24 in float32) the
result is identical with and without pruning; for other float weights the sums are associated
differently and agree to rounding. Both backends run the same Phase III, so they agree exactly.

Layout: :mod:`.cpu` and :mod:`.gpu` solve a CSR graph into the matrix; :mod:`.driver` holds the
plan, pruning with Phase III and the summary, for both.
"""

from __future__ import annotations

import math
from typing import Literal

import numba
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.apsp import cpu, gpu
from graphgpu.kernels.algorithms.apsp.driver import (
    AUTO_MIN_PENDANT_SHARE,
    FW_DEGREE_RATIO,
    TILE,
    Method,
    plan,
)
from graphgpu.kernels.algorithms.common import pruning
from graphgpu.kernels.algorithms.common.bitset_bfs import batch_words
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import Algorithm, Backend, Estimate, register_algorithm

#: Rough rates of the cost estimate (operations per second; the CPU's per thread).
RATES = {"gpu": {"bfs": 1e11, "floyd_warshall": 1e13, "sssp": 5e11, "write": 5e11},
         "cpu": {"bfs": 2e8, "floyd_warshall": 1e9, "sssp": 3e7, "write": 1e9}}


class ApspParams(BaseModel):
    """Parameters of ``apsp``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"prune": "auto"}, {"weighted": True, "dtype": "float32",
                                          "method": "floyd_warshall"}]})

    weighted: bool = Field(
        True, description="Use the edge weights when the graph has them (float distances); "
        "false: hop counts (int32) even on a weighted graph.")
    dtype: Literal["float32", "float64"] = Field(
        "float64", description="Precision of weighted distances (weights are cast to it).")
    method: Literal["auto", "floyd_warshall", "sssp"] = Field(
        "auto", description="Weighted method: blocked Floyd-Warshall, or shortest paths from "
        "every source; 'auto' takes Floyd-Warshall when the average degree is at least "
        f"n / {FW_DEGREE_RATIO}. Unweighted distances always use the all-pairs BFS.")
    prune: pruning.PruneMode = Field(
        "auto", description="Remove pendant vertices round by round, solve the rest and fill "
        "their rows and columns from their neighbours' (same distances). 'auto' prunes when at "
        f"least {AUTO_MIN_PENDANT_SHARE:.0%} (Floyd-Warshall) or "
        f"{pruning.AUTO_MIN_PENDANT_SHARE:.0%} (other methods) of the nodes have degree 1.")


class ApspSummary(BaseModel):
    """Summary of an ``apsp`` result (the matrix is the ``distance`` array)."""

    n: int = Field(description="Rows and columns of the distance matrix.")
    method: Method = Field(description="Method used.")
    dtype: str = Field(description="dtype of the distances (int32 hop counts, or float).")
    reachable_pairs: int = Field(description="Ordered pairs (i, j), i != j, at finite distance.")
    diameter: float = Field(description="Largest finite distance (0 with no reachable pair).")
    pruned: pruning.PrunedCount = None
    prune_rounds: pruning.PruneRounds = None


def estimate(graph: Graph, params: ApspParams, backend: Backend) -> Estimate:
    """Closed-form cost of a run: the matrix size exactly, time and device memory roughly.

    Time assumes ~20 BFS levels or Bellman-Ford sweeps and ignores pruning (which only saves
    time). Device memory: the matrix twice (the summary's temporaries, or the core's matrix
    beside the whole one when pruning) plus the method's working set and the graph.
    """
    p = plan(graph, params)
    n, arcs = graph.n, 2 * graph.m
    item = p.dtype.itemsize
    matrix = n * n * item
    work = {"bfs": math.ceil(n / 64) * arcs * 20, "floyd_warshall": float(n) ** 3,
            "sssp": n * arcs * (20 if backend == "gpu" else max(1.0, math.log2(max(n, 2))))}
    rates = RATES[backend]
    threads = 1 if backend == "gpu" else numba.get_num_threads()
    seconds = (work[p.method] / rates[p.method] + n * n / rates["write"]) / threads
    extra = {"bfs": 3 * 8 * n * min(math.ceil(n / 64), batch_words(n, gpu.BATCH_BYTES)),
             "floyd_warshall": (-(-n // TILE) * TILE) ** 2 * item,
             "sssp": min(matrix, gpu.BATCH_BYTES)}[p.method]
    return Estimate(seconds=seconds, result_bytes=matrix + 8 * n,
                    device_bytes=2 * matrix + extra + graph.nbytes() if backend == "gpu"
                    else None,
                    detail=f"{p.method}: {n:,} x {n:,} {p.dtype.name} distances")


APSP = register_algorithm(Algorithm(
    name="apsp", params_model=ApspParams, result_model=ApspSummary, cpu=cpu.apsp, gpu=gpu.apsp,
    estimate=estimate, directed="refuse",
    summary="All-pairs shortest paths: the n x n distance matrix (hop counts by all-pairs BFS, "
            "or weighted by blocked Floyd-Warshall / shortest paths from every source)."))
