"""Single-source shortest paths on the CPU: Dijkstra (Numba, binary heap), then the parent rule.

Dijkstra is :func:`graphgpu.kernels.algorithms.common.dijkstra.dijkstra`; the fewest-hop search
over tight arcs is the shared queue sweep
:func:`graphgpu.kernels.algorithms.common.bfs.bfs_queue`, restricted to the tight arcs.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.common.bfs import bfs_queue
from graphgpu.kernels.algorithms.common.dijkstra import dijkstra
from graphgpu.kernels.algorithms.common.direction import backward
from graphgpu.kernels.algorithms.sssp import driver
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn


@numba.njit(cache=True, nogil=True)
def tight_parents(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray,
                  in_indptr: np.ndarray, in_indices: np.ndarray, in_weight: np.ndarray,
                  dist: np.ndarray, source: int) -> np.ndarray:
    """Fewest-hop BFS over tight arcs (out-rows), then the parent rule of the family's notes
    (in-rows: the same arcs by head; the same CSR on an undirected graph)."""
    n = indptr.shape[0] - 1
    tight = np.empty(indices.shape[0], np.bool_)
    for u in range(n):
        for j in range(indptr[u], indptr[u + 1]):
            tight[j] = dist[u] + weight[j] == dist[indices[j]]
    hops = np.full(n, -1, np.int32)
    queue = np.empty(n, np.int32)
    hops[source] = 0
    queue[0] = source
    bfs_queue(indptr, indices, hops, queue, 0, 1, 1, tight)
    parent = np.full(n, -1, np.int64)
    parent[source] = source
    for v in range(n):
        if hops[v] > 0:
            for j in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[j]
                if hops[u] == hops[v] - 1 and dist[u] + in_weight[j] == dist[v]:
                    parent[v] = u
                    break
    return parent


def _solve(graph: Graph, source: int, weight: np.ndarray, in_weight: np.ndarray,
           progress: ProgressFn) -> tuple[np.ndarray, np.ndarray]:
    progress(0.0, "sssp: distances")
    dist = dijkstra(graph.indptr, graph.indices, weight, source)
    progress(0.7, "sssp: parents")
    in_indptr, in_indices, _ = backward(graph)
    return dist, tight_parents(graph.indptr, graph.indices, weight, in_indptr, in_indices,
                               in_weight, dist, source)


def sssp(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Dijkstra from ``params.source`` (an ``SsspParams``) on the CPU (Numba, binary heap).

    Weights must be non-negative (else ``InvalidInput`` with ``field="weights"``, as for an
    unknown source); an unweighted graph counts each edge as 1. ``progress`` is called at start,
    between distances and parents, and at the end, and may raise to cancel. The result holds
    ``distance`` (``params.dtype``, inf unreachable) and ``parent`` (int64 internal ids, -1
    unreachable, the source its own parent) per node, and an ``SsspSummary``.
    """
    return driver.run(graph, params, progress, _solve)
