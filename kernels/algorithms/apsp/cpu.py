"""All-pairs shortest paths on the CPU: Numba, sources (or Floyd-Warshall blocks) in parallel.

Hop counts run the shared queue sweep (:func:`graphgpu.kernels.algorithms.common.bfs.bfs_queue`)
from every source, the sparse weighted method the shared Numba Dijkstra
(:func:`graphgpu.kernels.algorithms.common.dijkstra.dijkstra`); blocked Floyd-Warshall follows the
GPU's block schedule, so the two backends agree bit for bit.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.apsp import driver
from graphgpu.kernels.algorithms.apsp.driver import TILE, Plan, initial_matrix
from graphgpu.kernels.algorithms.common.bfs import bfs_queue
from graphgpu.kernels.algorithms.common.dijkstra import dijkstra
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn


@numba.njit(cache=True, nogil=True, parallel=True)
def _bfs_rows(indptr: np.ndarray, indices: np.ndarray, first: int, out: np.ndarray) -> None:
    n = indptr.shape[0] - 1
    for r in numba.prange(out.shape[0]):
        row = out[r]
        row[:] = -1
        queue = np.empty(n, np.int32)
        row[first + r] = 0
        queue[0] = first + r
        bfs_queue(indptr, indices, row, queue, 0, 1, 1)


@numba.njit(cache=True, nogil=True, parallel=True)
def _dijkstra_rows(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray, first: int,
                   out: np.ndarray) -> None:
    for r in numba.prange(out.shape[0]):
        out[r] = dijkstra(indptr, indices, weight, first + r)


@numba.njit(cache=True, nogil=True)
def _closure(d: np.ndarray, i0: int, i1: int, j0: int, j1: int, k0: int, k1: int) -> None:
    # One k at a time, as the GPU's steps between barriers: step k never changes row k or column
    # k (their diagonal entry is 0), so the loop order inside a step does not matter.
    for k in range(k0, k1):
        for i in range(i0, i1):
            aik = d[i, k]
            for j in range(j0, j1):
                cand = aik + d[k, j]
                if cand < d[i, j]:
                    d[i, j] = cand


@numba.njit(cache=True, nogil=True, parallel=True)
def _fw_round(d: np.ndarray, kb: int, tile: int) -> None:
    n = d.shape[0]
    blocks = (n + tile - 1) // tile
    k0, k1 = kb * tile, min(n, kb * tile + tile)
    _closure(d, k0, k1, k0, k1, k0, k1)
    for o in numba.prange(blocks - 1):
        ob = o if o < kb else o + 1
        o0, o1 = ob * tile, min(n, ob * tile + tile)
        _closure(d, k0, k1, o0, o1, k0, k1)  # pivot row panel
        _closure(d, o0, o1, k0, k1, k0, k1)  # pivot column panel
    for o in numba.prange(blocks - 1):
        ob = o if o < kb else o + 1
        for i in range(ob * tile, min(n, ob * tile + tile)):
            row = d[i]
            for k in range(k0, k1):
                aik = row[k]
                if aik == np.inf:
                    continue
                pivot = d[k]
                # Both sides of the pivot column panel, which is final for this round.
                for j in range(k0):
                    row[j] = min(row[j], aik + pivot[j])
                for j in range(k1, n):
                    row[j] = min(row[j], aik + pivot[j])


def _chunks(n: int) -> range:
    """Starts of the source chunks between progress reports (about 16)."""
    return range(0, n, max(64, -(-n // 16)))


def solve(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray | None, n: int, p: Plan,
          progress: ProgressFn) -> np.ndarray:
    """Distance matrix of a CSR graph on the CPU."""
    if p.method == "floyd_warshall":
        d = initial_matrix(np, indptr, indices, weight, n, p)
        blocks = -(-n // TILE)
        for kb in range(blocks):
            if kb % max(1, blocks // 16) == 0:
                progress(kb / blocks, f"apsp: Floyd-Warshall block row {kb} of {blocks}")
            _fw_round(d, kb, TILE)
        return d
    d = np.empty((n, n), dtype=p.dtype)
    for first in _chunks(n):
        progress(first / max(n, 1), f"apsp: sources {first} of {n}")
        rows = d[first:first + max(64, -(-n // 16))]
        if p.method == "bfs":
            _bfs_rows(indptr, indices, first, rows)
        else:
            _dijkstra_rows(indptr, indices, weight, first, rows)
    return d


def apsp(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """All-pairs shortest paths on the CPU (Numba, sources or blocks in parallel).

    ``params`` is an ``ApspParams``; weights, when used, must be non-negative (else
    ``InvalidInput`` with ``field="weights"``). ``progress`` is called between source chunks
    or block rows and may raise to cancel. The result's ``distance`` array has shape (n, n), row =
    source, in internal id order: int32 hop counts (-1 unreachable) or ``params.dtype`` (inf
    unreachable); its summary is an ``ApspSummary``.
    """
    return driver.run(graph, params, progress, np,
                      lambda: (graph.indptr, graph.indices, graph.weights), solve)
