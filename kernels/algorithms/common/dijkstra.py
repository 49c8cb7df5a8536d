"""Dijkstra's shortest paths in Numba, shared by ``sssp`` and ``apsp`` on the CPU."""

from __future__ import annotations

import heapq

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def dijkstra(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray,
             source: int) -> np.ndarray:
    """Distances from ``source`` with a binary heap, added in the weights' dtype.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR of the graph.
    weight : ndarray of float
        Non-negative weight per arc; float32 weights give float32 sums (each path's weights
        added left to right in that dtype, as the GPU's Bellman-Ford fixpoints compute them).
    source : int
        Internal id.

    Returns
    -------
    ndarray
        Distance per node in ``weight.dtype``, ``inf`` unreachable.
    """
    n = indptr.shape[0] - 1
    dist = np.full(n, np.inf, dtype=weight.dtype)
    dist[source] = 0
    done = np.zeros(n, np.bool_)
    heap = [(dist[source], np.int64(source))]
    while heap:
        d, u = heapq.heappop(heap)
        if done[u]:
            continue  # a stale entry: u was settled at a smaller distance
        done[u] = True
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            nd = d + weight[j]  # in the weight dtype: float32 stays float32
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, np.int64(v)))
    return dist
