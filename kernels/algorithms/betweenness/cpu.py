"""CPU (Numba) side of the ``betweenness`` family: Brandes, sources spread over the cores.

From each source the distances come from a BFS (hop counts) or Dijkstra (positive weights,
:func:`graphgpu.kernels.algorithms.common.dijkstra.dijkstra`), with the reached nodes in
ascending distance; then the path counts are pulled over the in-rows in that order and the
dependencies over the out-rows in the reverse order, along the tight arcs of the family's notes.
"""

from __future__ import annotations

import os
from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.betweenness import driver
from graphgpu.kernels.algorithms.common.dijkstra import dijkstra
from graphgpu.kernels.algorithms.common.direction import backward
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn
from graphgpu.kernels.core.threads import in_threads


@numba.njit(cache=True, nogil=True)
def _tight(du: float, dv: float, weight: np.ndarray, j: int) -> bool:
    """Whether arc ``j`` (``u -> v``) is on a shortest path: ``du + w == dv`` exactly, with
    ``du < dv`` (a weight lost in the rounding of ``du`` makes no arc); ``w`` is 1 without
    weights (``weight`` empty)."""
    w = 1.0 if weight.shape[0] == 0 else weight[j]
    return du < dv and du + w == dv


@numba.njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def _distances(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray, s: int,
               dist: np.ndarray, order: np.ndarray) -> int:
    """Distances from ``s`` into ``dist`` (``inf`` unreached); the reached nodes into ``order``
    by ascending distance; returns how many there are."""
    if weight.shape[0] > 0:
        found = dijkstra(indptr, indices, weight, s)
        reached = np.flatnonzero(found < np.inf).astype(np.int32)
        reached = reached[np.argsort(found[reached], kind="mergesort")]
        for i in range(reached.shape[0]):
            order[i] = reached[i]
            dist[reached[i]] = found[reached[i]]
        return reached.shape[0]
    dist[s] = 0.0
    order[0] = s
    head, tail = 0, 1
    while head < tail:  # BFS: discovery order is the level order
        v = order[head]
        head += 1
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if dist[w] == np.inf:
                dist[w] = dist[v] + 1.0
                order[tail] = w
                tail += 1
    return tail


@numba.njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def _one_source(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray,
                in_indptr: np.ndarray, in_indices: np.ndarray, in_weight: np.ndarray, s: int,
                endpoints: bool, dist: np.ndarray, sigma: np.ndarray, delta: np.ndarray,
                order: np.ndarray, bc: np.ndarray) -> None:
    """Add source ``s``'s dependencies to ``bc`` (scratch arrays are reset on the way out)."""
    tail = _distances(indptr, indices, weight, s, dist, order)
    sigma[s] = 1.0
    for i in range(1, tail):  # path counts pulled over the in-rows, as the GPU does
        w = order[i]
        total = 0.0
        for j in range(in_indptr[w], in_indptr[w + 1]):
            v = in_indices[j]
            if _tight(dist[v], dist[w], in_weight, j):
                total += sigma[v]
        sigma[w] = total
    for i in range(tail - 1, -1, -1):  # dependencies pulled from the successors
        v = order[i]
        total = 0.0
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if _tight(dist[v], dist[w], weight, j):
                total += (sigma[v] / sigma[w]) * (1.0 + delta[w])
        delta[v] = total
    for i in range(tail):
        v = order[i]
        if v == s:
            if endpoints:
                bc[v] += tail - 1
        else:
            bc[v] += delta[v] + 1.0 if endpoints else delta[v]
        dist[v] = np.inf
        sigma[v] = 0.0
        delta[v] = 0.0


@numba.njit(cache=True, nogil=True)
def _share(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray,
           in_indptr: np.ndarray, in_indices: np.ndarray, in_weight: np.ndarray,
           sources: np.ndarray, endpoints: bool, bc: np.ndarray, t: int, workers: int) -> None:
    """Add the dependencies of every ``workers``-th source from ``t`` to ``bc`` (one thread's
    share, with scratch arrays of its own)."""
    n = indptr.shape[0] - 1
    dist = np.full(n, np.inf, np.float64)
    sigma = np.zeros(n, np.float64)
    delta = np.zeros(n, np.float64)
    order = np.empty(n, np.int32)
    for i in range(t, sources.shape[0], workers):
        _one_source(indptr, indices, weight, in_indptr, in_indices, in_weight,
                    np.int64(sources[i]), endpoints, dist, sigma, delta, order, bc)


@numba.njit(cache=True, nogil=True)
def _column_sums(partial: np.ndarray) -> np.ndarray:
    """``partial.sum(axis=0)`` in its order (rows added to zeros one after the other), without
    compiling NumPy's axis reduction (and its error-message code) for one call."""
    out = np.zeros(partial.shape[1], np.float64)
    for t in range(partial.shape[0]):
        for v in range(partial.shape[1]):
            out[v] += partial[t, v]
    return out


def brandes_numba(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray,
                  in_indptr: np.ndarray, in_indices: np.ndarray, in_weight: np.ndarray,
                  sources: np.ndarray, endpoints: bool, workers: int) -> np.ndarray:
    """Unnormalised betweenness (ordered pairs) from ``sources``.

    The shares run in a pool of threads (the compiled share releases the GIL) rather than a
    Numba ``prange``: the parallel lowering was 2-3 s of the family's cold compile on the
    2-core VM, for a loop over ``workers`` independent shares.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR out-rows: the arcs paths follow.
    weight : ndarray of float64
        Positive length of each out-row arc; empty for hop counts.
    in_indptr, in_indices, in_weight : ndarray
        The same arcs by head (the out-rows themselves on an undirected graph).
    sources : ndarray of int32
        Internal ids of the sources.
    endpoints : bool
        Count the path's end nodes as NetworkX's ``endpoints=True``.
    workers : int
        Shares (threads); each has its own scratch arrays and accumulator.

    Returns
    -------
    ndarray of float64
        Sum over the sources of each node's dependency, before NetworkX's rescaling.
    """
    partial = np.zeros((workers, indptr.shape[0] - 1), np.float64)
    args = (indptr, indices, weight, in_indptr, in_indices, in_weight, sources, bool(endpoints))
    in_threads(lambda t: _share(*args, partial[t], t, workers), workers)
    return _column_sums(partial)


def betweenness(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Betweenness on the CPU (Numba Brandes, sources over the cores).

    Parameters
    ----------
    graph : Graph
        Undirected or directed (paths follow out-edges).
    params : BetweennessParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``betweenness`` (float64) per node, rescaled as NetworkX; summary per
        ``BetweennessSummary``.

    Raises
    ------
    InvalidInput
        ``k`` larger than the number of nodes; a weight that is not positive.
    """
    sources, exact = driver.sources_of(graph, params)
    weight, in_weight = driver.lengths(graph, params)
    in_indptr, in_indices, _ = backward(graph)
    progress(0.0, f"betweenness: {sources.shape[0]:,} sources")
    workers = max(1, min(len(os.sched_getaffinity(0)), int(sources.shape[0])))
    raw = brandes_numba(graph.indptr, graph.indices, weight, in_indptr, in_indices, in_weight,
                        sources, params.endpoints, workers)
    progress(1.0, "betweenness: done")
    return driver.result(np, graph, params, sources, exact, raw)
