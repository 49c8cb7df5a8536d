"""CPU (NumPy + Numba) operations of the ``communities`` driver; the GPU's ``gpu.py`` mirrors them.

Every function here has a twin in ``gpu.py`` that gives the same integers (moves,
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


@numba.njit(cache=True, nogil=True, inline="always")
def _mix32(x: int) -> int:
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    x ^= x >> 16
    return x


@numba.njit(cache=True, nogil=True, inline="always")
def _mover(i: int, salt: int, sweep: int) -> bool:
    """Whether node ``i`` is on the moving half in ``sweep`` (``mover`` in ``communities.cu``)."""
    return (_mix32((i ^ salt ^ (sweep * 0x9E3779B9)) & 0xFFFFFFFF) & 1) == 0


@numba.njit(cache=True, nogil=True, inline="always")
def _skipped(i: int, v: int, comm: np.ndarray, size: np.ndarray, part: np.ndarray,
             refine: bool, active: np.ndarray, salt: int, sweep: int) -> bool:
    """Refinement joins only sub-communities that a neighbour stays in (``skipped`` in
    ``communities.cu``): the connected ones stay connected."""
    return v == i or (refine and (part[v] != part[i] or (
        active[v] and _mover(v, salt, sweep) and size[comm[v]] == 1)))


@numba.njit(cache=True, nogil=True)
def _local_move(indptr: np.ndarray, indices: np.ndarray, w: np.ndarray, comm: np.ndarray,
                k: np.ndarray, sigma: np.ndarray, size: np.ndarray, part: np.ndarray,
                refine: bool, res: float, m2: float, salt: int, max_sweeps: int,
                stop_divisor: int) -> int:
    n = indptr.shape[0] - 1
    acc = np.zeros(n, np.int64)
    target = np.empty(n, np.int32)
    active = np.ones(n, np.bool_)
    later = np.zeros(n, np.bool_)
    sweeps = 0
    for sweep in range(max_sweeps):
        sweeps += 1
        for i in range(n):  # decide, all from the sweep's start
            a = comm[i]
            target[i] = a
            if not active[i] or indptr[i + 1] == indptr[i]:
                continue
            if not _mover(i, salt, sweep):
                later[i] = True  # the resting half: its turn comes
                continue
            if refine and size[a] != 1:
                continue
            for j in range(indptr[i], indptr[i + 1]):
                v = indices[j]
                if not _skipped(i, v, comm, size, part, refine, active, salt, sweep):
                    acc[comm[v]] += w[j]
            kd = np.float64(k[i])
            stay = np.float64(acc[a]) - res * (kd * np.float64(sigma[a] - k[i])) / m2
            best = 0.0
            best_c = -1
            for j in range(indptr[i], indptr[i + 1]):
                v = indices[j]
                c = comm[v]
                if c == a or _skipped(i, v, comm, size, part, refine, active, salt, sweep):
                    continue
                score = np.float64(acc[c]) - res * (kd * np.float64(sigma[c])) / m2
                if best_c < 0 or score > best or (score == best and c < best_c):
                    best = score
                    best_c = c
            if best_c >= 0 and best > stay and not (
                    not refine and size[a] == 1 and size[best_c] == 1 and best_c > a):
                target[i] = best_c
            for j in range(indptr[i], indptr[i + 1]):
                acc[comm[indices[j]]] = 0
        moved = 0
        for i in range(n):  # then apply, and wake the movers and their neighbours
            a, t = comm[i], target[i]
            if a != t:
                sigma[a] -= k[i]
                sigma[t] += k[i]
                size[a] -= 1
                size[t] += 1
                comm[i] = t
                moved += 1
                later[i] = True
                for j in range(indptr[i], indptr[i + 1]):
                    later[indices[j]] = True
        if moved == 0 or moved * stop_divisor < n:
            break
        active, later = later, active
        later[:] = False
    return sweeps


def local_move(indptr: np.ndarray, indices: np.ndarray, w: np.ndarray, comm: np.ndarray,
               k: np.ndarray, sigma: np.ndarray, size: np.ndarray, part: np.ndarray | None,
               res: float, m2: float, salt: int, max_sweeps: int, stop_divisor: int) -> int:
    """Synchronous local moving, in place on ``comm``/``sigma``/``size``; returns the sweeps.

    Each sweep, the awake nodes of a hashed half (:func:`_mover`) choose from the sweep's
    starting state, then all move at once; the next sweep wakes only the movers, their
    neighbours and the resting half (vertex pruning). With ``part`` (refinement): only nodes
    alone in their community move, towards sub-communities of the same part that a neighbour
    stays in.
    """
    refine = part is not None
    return int(_local_move(indptr, indices, w, comm, k, sigma, size,
                           part if refine else comm, refine, float(res), float(m2), salt,
                           max_sweeps, stop_divisor))


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


def rows(indptr: np.ndarray) -> np.ndarray:
    """The row (source node) of each arc of a CSR."""
    return np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int32), np.diff(indptr))


def aggregate(indptr: np.ndarray, indices: np.ndarray, w: np.ndarray, group: np.ndarray,
              count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The graph of the groups (``driver.aggregate_sorted``)."""
    return driver.aggregate_sorted(np, rows(indptr), indices, w, group, count)


def community_arcs(indptr: np.ndarray, indices: np.ndarray, comm: np.ndarray, count: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Arcs inside each community (both ends in it) and arcs out of its nodes (its degree)."""
    src, dst = comm[rows(indptr)], comm[indices]
    return (np.bincount(src[src == dst], minlength=count),
            np.bincount(src, minlength=count))


def modularity_terms(internal: np.ndarray, degree: np.ndarray, arcs: int, resolution: float
                     ) -> np.ndarray:
    """Each community's term of the modularity of an unweighted graph (float64): its arcs
    inside over all arcs, less the resolution times the square of its share of the arcs."""
    return internal / arcs - resolution * (degree / arcs) ** 2


OPS = driver.Ops(xp=np, csr=_csr, rows=rows, aggregate=aggregate,
                 community_arcs=community_arcs, modularity_terms=modularity_terms,
                 local_move=local_move, components=components, to_host=np.asarray)


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
