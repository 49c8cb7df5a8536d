"""CPU side of the k-core family: Batagelj-Zaversnik bucket peeling (Numba), O(n + m)."""

from __future__ import annotations

import numba
import numpy as np

from graphgpu.kernels.algorithms.common.dag import bucket_peel


@numba.njit(cache=True, nogil=True)
def core_numbers(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Core number of every node of an undirected graph (CSR, no self-loops), by the bucket
    peeling of :func:`graphgpu.kernels.algorithms.common.dag.bucket_peel`.

    Returns
    -------
    ndarray of int32
    """
    return bucket_peel(indptr, indices)[1].astype(np.int32)
