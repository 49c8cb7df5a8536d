"""CPU (Numba) side of the ``betweenness`` family: Brandes, sources spread over the cores."""

from __future__ import annotations

import os
from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.betweenness import driver
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn


@numba.njit(cache=True, nogil=True)
def _one_source(indptr: np.ndarray, indices: np.ndarray, s: int, endpoints: bool,
                dist: np.ndarray, sigma: np.ndarray, delta: np.ndarray, order: np.ndarray,
                bc: np.ndarray) -> None:
    """Add source ``s``'s dependencies to ``bc`` (scratch arrays are reset on the way out)."""
    dist[s] = 0
    sigma[s] = 1.0
    order[0] = s
    head, tail = 0, 1
    while head < tail:  # BFS: discovery order is the level order
        v = order[head]
        head += 1
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if dist[w] < 0:
                dist[w] = dist[v] + 1
                order[tail] = w
                tail += 1
    for i in range(1, tail):  # path counts pulled in CSR order, as the GPU does
        w = order[i]
        total = 0.0
        for j in range(indptr[w], indptr[w + 1]):
            v = indices[j]
            if dist[v] == dist[w] - 1:
                total += sigma[v]
        sigma[w] = total
    for i in range(tail - 1, -1, -1):  # dependencies pulled from the successors
        v = order[i]
        total = 0.0
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if dist[w] == dist[v] + 1:
                total += (sigma[v] / sigma[w]) * (1.0 + delta[w])
        delta[v] = total
    for i in range(tail):
        v = order[i]
        if v == s:
            if endpoints:
                bc[v] += tail - 1
        else:
            bc[v] += delta[v] + 1.0 if endpoints else delta[v]
        dist[v] = -1
        sigma[v] = 0.0
        delta[v] = 0.0


@numba.njit(cache=True, nogil=True, parallel=True)
def brandes_numba(indptr: np.ndarray, indices: np.ndarray, sources: np.ndarray,
                  endpoints: bool, workers: int) -> np.ndarray:
    """Unnormalised betweenness (ordered pairs) from ``sources``.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR rows.
    sources : ndarray of int32
        Internal ids of the sources.
    endpoints : bool
        Count the path's end nodes as NetworkX's ``endpoints=True``.
    workers : int
        Parallel chunks; each has its own scratch arrays and accumulator.

    Returns
    -------
    ndarray of float64
        Sum over the sources of each node's dependency, before NetworkX's rescaling.
    """
    n = indptr.shape[0] - 1
    partial = np.zeros((workers, n), np.float64)
    for t in numba.prange(workers):
        dist = np.full(n, -1, np.int32)
        sigma = np.zeros(n, np.float64)
        delta = np.zeros(n, np.float64)
        order = np.empty(n, np.int32)
        for i in range(t, sources.shape[0], workers):
            _one_source(indptr, indices, sources[i], endpoints, dist, sigma, delta, order,
                        partial[t])
    return partial.sum(axis=0)


def betweenness(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Betweenness on the CPU (Numba Brandes, sources over the cores).

    Parameters
    ----------
    graph : Graph
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
        ``k`` larger than the number of nodes.
    """
    sources, exact = driver.sources_of(graph, params)
    progress(0.0, f"betweenness: {sources.shape[0]:,} sources")
    workers = max(1, min(len(os.sched_getaffinity(0)), int(sources.shape[0])))
    raw = brandes_numba(graph.indptr, graph.indices, sources, params.endpoints, workers)
    progress(1.0, "betweenness: done")
    return driver.result(graph, params, sources, exact, raw)
