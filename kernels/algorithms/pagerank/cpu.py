"""CPU side of ``pagerank``: one Numba ``prange`` pull over the in-CSR per iteration."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.pagerank import driver
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn


@numba.njit(parallel=True, cache=True, nogil=True)
def pull(in_indptr: np.ndarray, in_indices: np.ndarray, in_weights: np.ndarray,
         y: np.ndarray, p: np.ndarray, d: np.ndarray, alpha: float, dangling_mass: float,
         x: np.ndarray, x_next: np.ndarray) -> float:
    """One iteration: ``x_next`` from ``y = x / W``; returns the L1 change.

    Parameters
    ----------
    in_indptr, in_indices : ndarray
        The in-CSR.
    in_weights : ndarray
        Weight of each in-arc; empty for an unweighted graph (every arc counts 1).
    y : ndarray
        ``x / W`` (0 for dangling nodes).
    p, d : ndarray
        Personalization and dangling distributions.
    alpha, dangling_mass : float
        Damping factor and the sum of ``x`` over the dangling nodes.
    x, x_next : ndarray
        Current ranks and the output.
    """
    n = in_indptr.shape[0] - 1
    weighted = in_weights.shape[0] > 0
    err = 0.0
    for v in numba.prange(n):
        s = 0.0
        if weighted:
            for j in range(in_indptr[v], in_indptr[v + 1]):
                s += y[in_indices[j]] * in_weights[j]
        else:
            for j in range(in_indptr[v], in_indptr[v + 1]):
                s += y[in_indices[j]]
        value = alpha * (s + dangling_mass * d[v]) + (1.0 - alpha) * p[v]
        x_next[v] = value
        err += abs(value - x[v])
    return err


def power_iteration(state: dict[str, Any], params: Any, progress: ProgressFn
                    ) -> tuple[np.ndarray, int, bool, float]:
    """Iterate until the L1 change is below ``tol`` or ``max_iter`` iterations.

    Parameters
    ----------
    state : dict
        From :func:`.driver.prepare`.
    params : PagerankParams
    progress : ProgressFn

    Returns
    -------
    rank : ndarray of float64
    iterations : int
    converged : bool
    residual : float
        The L1 change of the last iteration.
    """
    n = state["inv_out"].shape[0]
    if n == 0:
        return np.zeros(0), 0, True, 0.0
    in_weights = state["in_weights"]
    in_weights = np.zeros(0) if in_weights is None else np.asarray(in_weights, np.float64)
    inv_out, dangling = state["inv_out"], state["dangling"]
    x = np.full(n, 1.0 / n)
    x_next = np.empty(n)
    for iteration in range(1, params.max_iter + 1):
        progress(iteration / params.max_iter, f"pagerank: iteration {iteration}")
        err = pull(state["in_indptr"], state["in_indices"], in_weights, x * inv_out,
                   state["p"], state["d"], params.alpha, float(x[dangling].sum()), x, x_next)
        x, x_next = x_next, x
        if err < params.tol:
            return x, iteration, True, err
    return x, params.max_iter, False, err


def pagerank(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """PageRank on the CPU (Numba pull iteration over the in-CSR).

    Parameters
    ----------
    graph : Graph
        Directed or undirected; weights must be non-negative.
    params : PagerankParams
    progress : ProgressFn
        Called every iteration; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``pagerank`` (float64, sums to 1) per node; summary per ``PagerankSummary``.

    Raises
    ------
    InvalidInput
        A negative weight, an unknown node or no positive weight in a distribution.
    """
    return driver.run(graph, params, progress, driver.host_arrays(graph), np, power_iteration)
