"""CPU side of the k-core family: Batagelj-Zaversnik bucket peeling (Numba), O(n + m)."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.common.dag import bucket_peel
from graphgpu.kernels.algorithms.kcore import driver
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn


@numba.njit(cache=True, nogil=True)
def core_numbers(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Core number of every node of an undirected graph (CSR, no self-loops), by the bucket
    peeling of :func:`graphgpu.kernels.algorithms.common.dag.bucket_peel`.

    Returns
    -------
    ndarray of int32
    """
    return bucket_peel(indptr, indices)[1].astype(np.int32)


def _cores(graph: Graph, progress: ProgressFn) -> np.ndarray:
    return core_numbers(graph.indptr, graph.indices)


def core_number(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Core numbers on the CPU (bucket peeling, Numba).

    Parameters
    ----------
    graph : Graph
        Undirected (directed graphs are symmetrised by the worker).
    params : CoreParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``core_number`` (int32) per node; summary per ``CoreSummary``.
    """
    return driver.core_number(graph, progress, _cores)


def k_core(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Membership of the k-core on the CPU (from the core numbers); ``graph`` and ``progress``
    as :func:`core_number`, ``params`` a ``KCoreParams``.

    Returns
    -------
    AlgorithmResult
        ``in_core`` (bool) per node; summary per ``KCoreSummary``.
    """
    return driver.k_core(graph, params, progress, _cores)
