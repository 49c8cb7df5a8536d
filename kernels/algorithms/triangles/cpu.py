"""CPU side of ``triangles``: merge intersections along the DAG's arcs (Numba)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def dag_triangles(dptr: np.ndarray, dadj: np.ndarray) -> np.ndarray:
    """Triangles at each vertex of an acyclic orientation (rank ids), each counted once.

    Parameters
    ----------
    dptr, dadj : ndarray
        Sorted out-lists of the DAG (``graphgpu.kernels.algorithms.common.dag``).

    Returns
    -------
    ndarray of int64
        Per rank, the triangles it belongs to.
    """
    n = dptr.shape[0] - 1
    count = np.zeros(n, np.int64)
    for a in range(n):
        for e in range(dptr[a], dptr[a + 1]):
            b = dadj[e]
            i, j = e + 1, dptr[b]
            found = 0
            while i < dptr[a + 1] and j < dptr[b + 1]:
                x, y = dadj[i], dadj[j]
                if x < y:
                    i += 1
                elif y < x:
                    j += 1
                else:
                    count[x] += 1
                    found += 1
                    i += 1
                    j += 1
            count[a] += found
            count[b] += found
    return count
