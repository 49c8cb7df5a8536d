"""GPU (CuPy RawKernel) side of the ``betweenness`` family; kernels in ``betweenness.cu``.

Sources go in batches sized to a device-memory budget (:func:`batch_size`). For each batch: with
weights, the distances of all its sources at once (relaxation rounds to a fixpoint); then the
levels (BFS levels, or the most tight arcs on a path with weights), the path counts level by
level over the in-rows, the dependencies back over the out-rows, and the batch's contributions
added to the scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.betweenness import driver
from graphgpu.kernels.algorithms.common.direction import backward
from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("betweenness.cu")
THREADS = 256
#: Device bytes of the per-(source, node) state: level (4), sigma (8), delta (8); with weights
#: also dist (8) and mark (4).
BYTES_PER_CELL = {False: 20, True: 32}
#: Device memory the batch state may take.
BATCH_BYTES = 2 << 30
NAMES = ("bc_relax", "bc_discover", "bc_sigma", "bc_delta", "bc_accumulate")


def batch_size(n: int, sources: int, weighted: bool = False) -> int:
    """Sources per batch: as many as :data:`BATCH_BYTES` holds, at least one."""
    return max(1, min(sources, BATCH_BYTES // max(BYTES_PER_CELL[weighted] * n, 1)))


def _until_still(kernel: Any, grid: int, args: tuple, flag: Any, first: int) -> int:
    """Launch ``kernel(*args, step, flag)`` for ``step = first, first + 1, ...`` until a launch
    leaves ``flag`` at 0 (one host read per launch); returns the number of launches that set it.
    """
    steps = 0
    while True:
        flag.fill(0)
        kernel(grid, (THREADS,), (*args, np.int32(first + steps), flag))
        if not int(flag.get()[0]):
            return steps
        steps += 1


def brandes_device(graph: Graph, sources: np.ndarray, endpoints: bool, progress: ProgressFn,
                   lengths: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Unnormalised betweenness from ``sources`` (internal ids), as the CPU's ``brandes_numba``.

    Parameters
    ----------
    graph : Graph
        Undirected or directed (paths follow the out-rows).
    sources : ndarray of int32
    endpoints : bool
    progress : ProgressFn
        Called between batches; may raise to cancel.
    lengths : (ndarray, ndarray), optional
        Positive float64 lengths of the out-row and in-row arcs (:func:`.driver.lengths`);
        None or empty arrays: hop counts.

    Returns
    -------
    ndarray of float64
        Host copy of the scores before rescaling.
    """
    cp = cupy()
    k = kernels(CUDA_SOURCE, NAMES)
    dg = on_device(graph)
    n = graph.n
    weighted = lengths is not None and lengths[0].shape[0] > 0
    if graph.directed:
        in_indptr, in_indices, _ = backward(graph)
        rows_in = (cp.asarray(in_indptr), cp.asarray(in_indices))
    else:
        rows_in = (dg.indptr, dg.indices)
    weight = cp.asarray(lengths[0]) if weighted else cp.zeros(1, dtype=cp.float64)
    in_weight = cp.asarray(lengths[1]) if weighted and graph.directed else weight
    bc = cp.zeros(n, dtype=cp.float64)
    size = batch_size(n, int(sources.shape[0]), weighted)
    level = cp.empty(size * n, dtype=cp.int32)
    sigma = cp.empty(size * n, dtype=cp.float64)
    delta = cp.empty(size * n, dtype=cp.float64)
    dist = cp.empty(size * n if weighted else 1, dtype=cp.float64)
    mark = cp.empty(size * n if weighted else 1, dtype=cp.int32)
    flag = cp.zeros(1, dtype=cp.int32)
    flags = (np.int32(weighted), np.int32(n))
    for start in range(0, int(sources.shape[0]), size):
        progress(start / max(sources.shape[0], 1),
                 f"betweenness: sources {start:,} of {sources.shape[0]:,}")
        batch = sources[start:start + size]
        b = int(batch.shape[0])
        cells = b * n
        grid = grid_for(cells, THREADS)
        d_src = cp.asarray(batch, dtype=cp.int32)
        first = cp.arange(b, dtype=cp.int64) * n + d_src
        level[:cells].fill(-1)
        sigma[:cells].fill(0)
        delta[:cells].fill(0)
        level[first] = 0
        sigma[first] = 1.0
        if weighted:
            dist[:cells].fill(cp.inf)
            mark[:cells].fill(-1)
            dist[first] = 0.0
            mark[first] = 0
            _until_still(k["bc_relax"], grid, (dg.indptr, dg.indices, weight, np.int32(n),
                                               np.int64(cells), dist, mark), flag, first=1)
        depth = _until_still(k["bc_discover"], grid, (dg.indptr, dg.indices, weight, dist, *flags,
                                                      np.int64(cells), level), flag, first=0)
        for d in range(1, depth + 1):  # the source's count is 1
            k["bc_sigma"](grid, (THREADS,), (*rows_in, in_weight, dist, *flags, np.int64(cells),
                                             level, sigma, np.int32(d)))
        for d in range(depth - 1, -1, -1):  # the deepest level's dependencies are 0
            k["bc_delta"](grid, (THREADS,), (dg.indptr, dg.indices, weight, dist, *flags,
                                             np.int64(cells), level, sigma, delta, np.int32(d)))
        reached = (level[:cells].reshape(b, n) >= 0).sum(axis=1).astype(cp.int64)
        k["bc_accumulate"](grid_for(n, THREADS), (THREADS,),
                           (np.int32(n), np.int32(b), d_src, level, delta, reached,
                            np.int32(bool(endpoints)), bc))
    return bc.get()


def betweenness(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Betweenness on the GPU (batched Brandes); same contract as the CPU backend's."""
    sources, exact = driver.sources_of(graph, params)
    lengths = driver.lengths(graph, params)
    raw = brandes_device(graph, sources, params.endpoints, progress, lengths)
    progress(1.0, "betweenness: done")
    return driver.result(graph, params, sources, exact, raw)
