"""CPU (Numba) side of the ``similarity`` family: Jaccard coefficients by merging sorted rows."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.similarity import driver
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn


@numba.njit(cache=True, nogil=True, parallel=True)
def jaccard_numba(indptr: np.ndarray, indices: np.ndarray, us: np.ndarray,
                  vs: np.ndarray) -> np.ndarray:
    """``|N(u) & N(v)| / |N(u) | N(v)|`` for each pair (0 where both rows are empty).

    Parameters
    ----------
    indptr, indices : ndarray
        CSR rows, each sorted ascending.
    us, vs : ndarray of int32
        Internal ids of the pairs' two nodes.

    Returns
    -------
    ndarray of float64
        One coefficient per pair, the same IEEE quotient as the GPU's.
    """
    out = np.empty(us.shape[0], np.float64)
    for p in numba.prange(us.shape[0]):
        a, a_end = indptr[us[p]], indptr[us[p] + 1]
        b, b_end = indptr[vs[p]], indptr[vs[p] + 1]
        both = (a_end - a) + (b_end - b)
        common = 0
        while a < a_end and b < b_end:
            x, y = indices[a], indices[b]
            if x == y:
                common += 1
            if x <= y:
                a += 1
            if y <= x:
                b += 1
        both -= common
        out[p] = 0.0 if both == 0 else np.float64(common) / np.float64(both)
    return out


def jaccard(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Jaccard coefficients on the CPU (Numba, a merge per pair).

    Parameters
    ----------
    graph : Graph
    params : JaccardParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        Arrays ``u``, ``v`` (internal ids, translated to original ones by the worker) and
        ``jaccard`` (float64), one entry per pair; summary per ``JaccardSummary``.

    Raises
    ------
    InvalidInput
        A pair names a node that is not in the graph.
    """
    us, vs = driver.pairs_of(graph, params)
    progress(0.0, f"jaccard: {us.size:,} pairs")
    values = jaccard_numba(graph.indptr, graph.indices, us, vs)
    progress(1.0, "jaccard: done")
    return driver.result(params, us, vs, values)
