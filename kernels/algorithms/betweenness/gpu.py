"""GPU (CuPy RawKernel) side of the ``betweenness`` family; kernels in ``betweenness.cu``.

Sources go in batches sized to a device-memory budget (20 bytes per source and node); each batch
runs one level-synchronous BFS for all its sources at once, then the backward dependency sweep,
then adds its sources' contributions to the scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.betweenness import driver
from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("betweenness.cu")
THREADS = 256
#: Device bytes of the per-(source, node) state: dist (4), sigma (8), delta (8).
BYTES_PER_CELL = 20
#: Device memory the batch state may take.
BATCH_BYTES = 2 << 30
NAMES = ("bc_discover", "bc_sigma", "bc_delta", "bc_accumulate")


def batch_size(n: int, sources: int) -> int:
    """Sources per batch: as many as :data:`BATCH_BYTES` holds, at least one."""
    return max(1, min(sources, BATCH_BYTES // max(BYTES_PER_CELL * n, 1)))


def brandes_device(graph: Graph, sources: np.ndarray, endpoints: bool,
                   progress: ProgressFn) -> np.ndarray:
    """Unnormalised betweenness from ``sources`` (internal ids), as the CPU's ``brandes_numba``.

    Parameters
    ----------
    graph : Graph
    sources : ndarray of int32
    endpoints : bool
    progress : ProgressFn
        Called between batches; may raise to cancel.

    Returns
    -------
    ndarray of float64
        Host copy of the scores before rescaling.
    """
    cp = cupy()
    k = kernels(CUDA_SOURCE, NAMES)
    dg = on_device(graph)
    n = graph.n
    bc = cp.zeros(n, dtype=cp.float64)
    size = batch_size(n, int(sources.shape[0]))
    dist = cp.empty(size * n, dtype=cp.int32)
    sigma = cp.empty(size * n, dtype=cp.float64)
    delta = cp.empty(size * n, dtype=cp.float64)
    grew = cp.zeros(1, dtype=cp.int32)
    for start in range(0, int(sources.shape[0]), size):
        progress(start / max(sources.shape[0], 1),
                 f"betweenness: sources {start:,} of {sources.shape[0]:,}")
        batch = sources[start:start + size]
        b = int(batch.shape[0])
        cells = b * n
        d_src = cp.asarray(batch, dtype=cp.int32)
        first = cp.arange(b, dtype=cp.int64) * n + d_src
        dist[:cells].fill(-1)
        sigma[:cells].fill(0)
        delta[:cells].fill(0)
        dist[first] = 0
        sigma[first] = 1.0
        grid = grid_for(cells, THREADS)
        level = 0
        while True:
            grew.fill(0)
            k["bc_discover"](grid, (THREADS,), (dg.indptr, dg.indices, np.int32(n),
                                                np.int64(cells), dist, np.int32(level), grew))
            if not int(grew.get()[0]):
                break
            level += 1
            k["bc_sigma"](grid, (THREADS,), (dg.indptr, dg.indices, np.int32(n), np.int64(cells),
                                             dist, sigma, np.int32(level)))
        for depth in range(level - 1, -1, -1):  # the deepest level's dependencies are 0
            k["bc_delta"](grid, (THREADS,), (dg.indptr, dg.indices, np.int32(n),
                                             np.int64(cells), dist, sigma, delta,
                                             np.int32(depth)))
        reached = (dist[:cells].reshape(b, n) >= 0).sum(axis=1).astype(cp.int64)
        k["bc_accumulate"](grid_for(n, THREADS), (THREADS,),
                           (np.int32(n), np.int32(b), d_src, dist, delta, reached,
                            np.int32(bool(endpoints)), bc))
    return bc.get()


def betweenness(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Betweenness on the GPU (batched Brandes); same contract as the CPU backend's."""
    sources, exact = driver.sources_of(graph, params)
    raw = brandes_device(graph, sources, params.endpoints, progress)
    progress(1.0, "betweenness: done")
    return driver.result(graph, params, sources, exact, raw)
