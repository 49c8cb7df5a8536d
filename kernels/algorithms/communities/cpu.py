"""CPU (NumPy + Numba) operations of the ``communities`` driver; the GPU's ``gpu.py`` mirrors them.

Every function here has a twin in ``gpu.py`` that gives the same integers (colours, moves,
labels) and, through the same IEEE expressions, the same gains: the driver (:mod:`.driver`) runs
either set unchanged.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.communities import driver
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn


@numba.njit(cache=True, nogil=True)
def _greedy_colour(indptr: np.ndarray, indices: np.ndarray, order: np.ndarray) -> np.ndarray:
    n = indptr.shape[0] - 1
    colour = np.full(n, -1, np.int32)
    mark = np.full(n + 1, -1, np.int64)
    for i in order:
        for j in range(indptr[i], indptr[i + 1]):
            c = colour[indices[j]]
            if c >= 0:
                mark[c] = i
        c = 0
        while mark[c] == i:
            c += 1
        colour[i] = c
    return colour


def colour(indptr: np.ndarray, indices: np.ndarray, salt: int) -> np.ndarray:
    """Greedy colouring in descending ``(mix32(i ^ salt), i)`` order (int32 colour per node).

    The GPU's Jones-Plassmann rounds with the same priority give this colouring exactly.
    """
    ids = np.arange(indptr.shape[0] - 1)
    order = np.lexsort((ids, driver.mix32(ids, salt)))[::-1].copy()
    return _greedy_colour(indptr, indices, order)


@numba.njit(cache=True, nogil=True)
def _local_move(order: np.ndarray, offsets: np.ndarray, indptr: np.ndarray,
                indices: np.ndarray, w: np.ndarray, comm: np.ndarray, k: np.ndarray,
                sigma: np.ndarray, size: np.ndarray, part: np.ndarray, refine: bool,
                res: float, m2: float, max_sweeps: int, stop_divisor: int) -> int:
    n = indptr.shape[0] - 1
    acc = np.zeros(n, np.int64)
    target = np.empty(order.shape[0], np.int32)
    sweeps = 0
    for _ in range(max_sweeps):
        sweeps += 1
        moved = 0
        for cls in range(offsets.shape[0] - 1):
            for p in range(offsets[cls], offsets[cls + 1]):  # decide, from the class's start
                i = order[p]
                a = comm[i]
                target[p] = a
                if refine and size[a] != 1:
                    continue
                for j in range(indptr[i], indptr[i + 1]):
                    v = indices[j]
                    if v != i and not (refine and part[v] != part[i]):
                        acc[comm[v]] += w[j]
                kd = np.float64(k[i])
                stay = np.float64(acc[a]) - res * (kd * np.float64(sigma[a] - k[i])) / m2
                best = 0.0
                best_c = -1
                for j in range(indptr[i], indptr[i + 1]):
                    v = indices[j]
                    if v == i or (refine and part[v] != part[i]):
                        continue
                    c = comm[v]
                    if c == a:
                        continue
                    score = np.float64(acc[c]) - res * (kd * np.float64(sigma[c])) / m2
                    if best_c < 0 or score > best or (score == best and c < best_c):
                        best = score
                        best_c = c
                if best_c >= 0 and best > stay:
                    target[p] = best_c
                for j in range(indptr[i], indptr[i + 1]):
                    acc[comm[indices[j]]] = 0
            for p in range(offsets[cls], offsets[cls + 1]):  # then apply
                i = order[p]
                a, t = comm[i], target[p]
                if a != t:
                    sigma[a] -= k[i]
                    sigma[t] += k[i]
                    size[a] -= 1
                    size[t] += 1
                    comm[i] = t
                    moved += 1
        if moved == 0 or moved * stop_divisor < n:
            break
    return sweeps


def local_move(order: np.ndarray, offsets: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
               w: np.ndarray, comm: np.ndarray, k: np.ndarray, sigma: np.ndarray,
               size: np.ndarray, part: np.ndarray | None, res: float, m2: float,
               max_sweeps: int, stop_divisor: int) -> int:
    """Colour-class local moving, in place on ``comm``/``sigma``/``size``; returns the sweeps.

    With ``part`` (refinement): only nodes alone in their community move, and only towards
    neighbours of the same part.
    """
    refine = part is not None
    return int(_local_move(order, offsets, indptr, indices, w, comm, k, sigma, size,
                           part if refine else comm, refine, float(res), float(m2), max_sweeps,
                           stop_divisor))


def components(indptr: np.ndarray, indices: np.ndarray, comm: np.ndarray) -> np.ndarray:
    """Smallest node id of each node's connected component inside its community."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = indptr.shape[0] - 1
    rows = np.repeat(np.arange(n), np.diff(indptr))
    keep = comm[rows] == comm[indices]
    inner = csr_matrix((np.ones(int(keep.sum()), np.int8), (rows[keep], indices[keep])),
                       shape=(n, n))
    _, labels = connected_components(inner, directed=False)
    smallest = np.full(labels.max() + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(smallest, labels, np.arange(n))
    return smallest[labels].astype(np.int32)


def _csr(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    return graph.indptr, graph.indices


OPS = driver.Ops(xp=np, csr=_csr, colour=colour, local_move=local_move,
                 components=components, to_host=np.asarray)


def louvain(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Louvain on the CPU (NumPy + Numba).

    Parameters
    ----------
    graph : Graph
        Weights, when present, must be non-negative.
    params : CommunityParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``community`` (int64) per node; summary per ``CommunitySummary``.

    Raises
    ------
    InvalidInput
        A negative weight.
    """
    return driver.run(OPS, graph, params, False, progress)


def leiden(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Leiden on the CPU; same contract as :func:`louvain`, connected communities."""
    return driver.run(OPS, graph, params, True, progress)
