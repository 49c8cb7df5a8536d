"""What an ``apsp`` job does on either backend: the plan, pruning and Phase III, the summary.

:mod:`.cpu` and :mod:`.gpu` solve a CSR graph into a distance matrix (NumPy or CuPy); everything
around that is written once here, for both array modules (``xp``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from graphgpu.kernels.algorithms.common import pruning
from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: Floyd-Warshall block width (the CUDA kernels' TILE; the CPU follows the same blocks).
TILE = 64
#: ``auto`` uses Floyd-Warshall when the average degree is at least n / FW_DEGREE_RATIO: its
#: n**3 min-plus steps then cost less than ~20 Bellman-Ford sweeps of n * 2m relaxations each
#: (an H100 does both at roughly 1e13 and 5e11 per second).
FW_DEGREE_RATIO = 400
#: ``auto`` prunes Floyd-Warshall runs when at least this share of the nodes has degree 1: its
#: n**3 work shrinks with the cube of the core, while Phase III costs two gathers of length n
#: per pruned vertex. The BFS and Bellman-Ford methods prune only at the traversal family's
#: share (:data:`graphgpu.kernels.algorithms.common.pruning.AUTO_MIN_PENDANT_SHARE`): they are
#: cheap enough that filling
#: the matrix in Phase III costs as much as it saves (H100, bench/results/traversal.md,
#: ca-CondMat with 9.5% pruned: Floyd-Warshall 2.80 s -> 2.35 s pruned, Bellman-Ford 0.91 s
#: vs 0.88 s, hop counts 0.80 s -> 0.94 s).
AUTO_MIN_PENDANT_SHARE = 0.05

Method = Literal["bfs", "floyd_warshall", "sssp"]
#: ``(indptr, indices, weight, n, plan, progress) -> distance matrix``, arrays in one module.
Solve = Callable[[Any, Any, Any, int, "Plan", ProgressFn], Any]


@dataclass(frozen=True)
class Plan:
    """What a run will do, decided from the graph and the parameters only."""

    method: Method
    dtype: np.dtype

    @property
    def weighted(self) -> bool:
        return self.method != "bfs"

    @property
    def unreachable(self) -> float:
        return math.inf if self.weighted else -1


def plan(graph: Graph, params: Any) -> Plan:
    """The method and dtype of a run (``params``: ``ApspParams``); refuses negative weights
    (``field="weights"``)."""
    if not (params.weighted and graph.weights is not None):
        return Plan("bfs", np.dtype(np.int32))
    if graph.weights.size and graph.weights.min() < 0:
        raise InvalidInput("apsp needs non-negative weights", field="weights")
    method = params.method
    if method == "auto":
        method = "floyd_warshall" if 2 * graph.m * FW_DEGREE_RATIO >= graph.n ** 2 else "sssp"
    return Plan(method, np.dtype(params.dtype))


def should_prune(graph: Graph, mode: pruning.PruneMode, p: Plan) -> bool:
    """``on``/``off`` as given; ``auto`` from the share of degree-1 nodes and the method."""
    if mode == "auto":
        share = (AUTO_MIN_PENDANT_SHARE if p.method == "floyd_warshall"
                 else pruning.AUTO_MIN_PENDANT_SHARE)
        return pruning.pendant_share(graph) >= share
    return mode == "on"


def arc_rows(xp: Any, indptr: Any, indices: Any) -> Any:
    """Row (source node) of every arc of a CSR."""
    return xp.searchsorted(indptr, xp.arange(indices.shape[0], dtype=indptr.dtype),
                           side="right") - 1


def initial_matrix(xp: Any, indptr: Any, indices: Any, weight: Any, n: int, p: Plan,
                    size: int | None = None, dtype: np.dtype | None = None,
                    unreachable: float = math.inf) -> Any:
    """``size`` x ``size`` (default n) matrix of ``dtype`` (default ``p.dtype``): 0 diagonal, arc
    weights, ``unreachable`` elsewhere."""
    size = size or n
    d = xp.full((size, size), unreachable, dtype=dtype or p.dtype)
    d[arc_rows(xp, indptr, indices), indices] = weight
    diagonal = xp.arange(size)
    d[diagonal, diagonal] = 0
    return d


def extend_matrix(xp: Any, dist: Any, vertex: Any, neighbour: Any, step: Any,
                  bounds: np.ndarray, unreachable: float) -> None:
    """Phase III for APSP, in place: rows and columns of the pruned vertices, latest round first.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``, where ``dist`` lives.
    dist : array, shape (n, n)
        Filled on the core (and ``unreachable`` between core components); its other entries are
        overwritten.
    vertex, neighbour : array of int
        Pruned vertices and their neighbours at removal, ordered by round.
    step : array
        Length of each pruned vertex's edge to its neighbour, in ``dist``'s dtype.
    bounds : ndarray
        Offsets of each round's slice of ``vertex``.
    unreachable : float
        -1 (hop counts) or inf: it must stay unreachable when a length is added.
    """
    for r in range(len(bounds) - 2, -1, -1):
        sl = slice(int(bounds[r]), int(bounds[r + 1]))
        v, w, h = vertex[sl], neighbour[sl], step[sl]
        rows = dist[w] + h[:, None]
        if unreachable < 0:
            rows[dist[w] < 0] = -1
        dist[v] = rows
        cols = dist[:, w] + h[None, :]  # reads the rows just written: pairs within the round
        if unreachable < 0:
            cols[dist[:, w] < 0] = -1
        dist[:, v] = cols
        dist[v, v] = 0


def pruned_solve(xp: Any, graph: Graph, p: Plan, weight: Any, indptr: Any, indices: Any,
                 solve: Solve, progress: ProgressFn) -> tuple[Any, pruning.Pruned]:
    """Phase I, Phase II on the core, Phase III: the whole matrix."""
    pruned = pruning.prune(graph, xp)
    n = graph.n
    rows = arc_rows(xp, indptr, indices)
    core_weight = None
    if weight is not None:
        alive = xp.ones(n, dtype=xp.bool_)
        alive[pruned.vertex] = False
        core_weight = weight[alive[rows] & alive[indices]]  # core_csr keeps the arcs' order
    core = pruned.core_ids
    core_dist = solve(pruned.core_indptr, pruned.core_indices, core_weight, int(core.shape[0]),
                      p, progress)
    dist = xp.full((n, n), p.unreachable, dtype=p.dtype)
    dist[core[:, None], core[None, :]] = core_dist
    del core_dist
    vertex, neighbour = pruned.vertex, pruned.neighbour
    if weight is None:
        step = xp.ones(vertex.shape[0], dtype=p.dtype)
    else:
        key = rows * n + indices  # ascending: rows in order, sorted within each row
        arc = xp.searchsorted(key, vertex.astype(xp.int64) * n + neighbour)
        step = weight[arc]
    extend_matrix(xp, dist, vertex, neighbour, step, pruned.bounds, p.unreachable)
    return dist, pruned


def run(graph: Graph, params: Any, progress: ProgressFn, xp: Any,
        csr: Callable[[], tuple[Any, Any, Any]], solve: Solve) -> AlgorithmResult:
    """An ``apsp`` job (``params``: ``ApspParams``) on the backend of ``xp`` and ``solve``.

    ``csr()`` gives the whole graph's ``(indptr, indices, weights)`` in ``xp``; it is called
    after the plan has checked the weights.
    """
    p = plan(graph, params)
    progress(0.0, f"apsp: {p.method}")
    indptr, indices, weights = csr()
    weight = weights.astype(p.dtype) if p.weighted else None
    pruned = None
    if should_prune(graph, params.prune, p):
        dist, pruned = pruned_solve(xp, graph, p, weight, indptr, indices, solve, progress)
    else:
        dist = solve(indptr, indices, weight, graph.n, p, progress)
    reachable = dist >= 0 if p.unreachable < 0 else xp.isfinite(dist)
    summary: dict[str, Any] = {
        "n": graph.n, "method": p.method, "dtype": p.dtype.name,
        "reachable_pairs": reductions.count_true(reachable) - graph.n,
        "diameter": float(xp.where(reachable, dist, 0).max()),
        **pruning.summary_fields(params.prune, pruned)}
    del reachable
    matrix = getattr(xp, "asnumpy", np.asarray)(dist)
    progress(1.0, "apsp: done")
    return AlgorithmResult(summary=summary, arrays={"distance": matrix})
