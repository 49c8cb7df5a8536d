"""GPU (CuPy RawKernel) side of the ``betweenness`` family; kernels in ``betweenness.cu``.

Hop counts (no weights) take :mod:`.hops` (batches of up to 128 sources with byte levels and
frontier lists); this module's kernels serve weighted paths, as follows.

Sources go in batches sized to a device-memory budget (:func:`batch_size`). For each batch: the
distances of all its sources at once (relaxation rounds to a fixpoint); then the levels (the
most tight arcs on a path), the path counts level by
level over the in-rows, the dependencies back over the out-rows, and the batch's contributions
added to the scores. The batch state is node-major (a node's entries of the batch's sources
side by side), so that the lanes of a warp walk one row together, and the entries of rows over
:data:`HUB_ROW` arcs are walked by a block each (``betweenness.cu``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.betweenness import driver, hops
from graphgpu.kernels.algorithms.common.direction import backward
from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("betweenness.cu")
THREADS = 256
#: Device bytes of the per-(source, node) state: level (4), sigma (8), delta (8), dist (8) and
#: mark (4).
BYTES_PER_CELL = 32
#: Device memory the batch state may take (rmat22: 32 sources, so that a warp's lanes hold the
#: entries of one node).
BATCH_BYTES = 3 << 30
#: Rows of more arcs than this are walked by a block of HUB_THREADS per (node, source) entry.
HUB_ROW = 512
HUB_THREADS = 128
STEPS = ("bc_relax", "bc_discover", "bc_sigma", "bc_delta")
NAMES = (*STEPS, *(f"{name}_hub" for name in STEPS), "bc_accumulate")


def batch_size(n: int, sources: int) -> int:
    """Sources per batch: as many as :data:`BATCH_BYTES` holds (a multiple of a warp's 32 from
    32 on), at least one."""
    size = BATCH_BYTES // max(BYTES_PER_CELL * n, 1)
    return max(1, min(sources, size - size % 32 if size >= 32 else size))


def state_bytes(n: int, arcs: int, sources: int, weighted: bool) -> int:
    """Device bytes of a run's batch state (the estimate's ``device_bytes`` beside the graph)."""
    if weighted:
        return BYTES_PER_CELL * n * batch_size(n, sources)
    return hops.state_bytes(n, arcs, sources)


def _step(k: dict[str, Any], name: str, grid: tuple[int], hubs: Any, b: int, head: tuple,
          tail: tuple) -> None:
    """One step: ``name`` over the entries of rows up to :data:`HUB_ROW` arcs (a thread each),
    then ``name_hub`` over those of the longer rows ``hubs`` (a block each); arguments
    ``(*head, hubs, HUB_ROW, *tail)``."""
    args = (*head, hubs, np.int64(HUB_ROW), *tail)
    k[name](grid, (THREADS,), args)
    if hubs.shape[0]:
        k[f"{name}_hub"]((int(hubs.shape[0]) * b,), (HUB_THREADS,), args)


def _until_still(k: dict[str, Any], name: str, grid: tuple[int], hubs: Any, b: int,
                 head: tuple, tail: tuple, flag: Any, first: int) -> int:
    """:func:`_step` with arguments ``(..., *tail, step, flag)`` for ``step = first, first + 1,
    ...`` until a step leaves ``flag`` at 0 (one host read per step); returns the number of
    steps that set it."""
    steps = 0
    while True:
        flag.fill(0)
        _step(k, name, grid, hubs, b, head, (*tail, np.int32(first + steps), flag))
        if not int(flag.get()[0]):
            return steps
        steps += 1


def _hubs(indptr: Any) -> Any:
    """The rows of over :data:`HUB_ROW` arcs (device int32)."""
    cp = cupy()
    return cp.flatnonzero(cp.diff(indptr) > HUB_ROW).astype(cp.int32)


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
    cupy.ndarray of float64
        The scores before rescaling.
    """
    cp = cupy()
    k = kernels(CUDA_SOURCE, NAMES)
    dg = on_device(graph)
    n = graph.n
    # A source without out-arcs reaches no node and adds nothing to any score (with endpoints,
    # its own count is the nodes it reaches but itself: 0); left out, it takes no lane.
    sources = sources[graph.indptr[sources + 1] > graph.indptr[sources]]  # O(k), not O(n)
    if sources.shape[0] == 0:
        return cp.zeros(n, dtype=cp.float64)
    if lengths is None or lengths[0].shape[0] == 0:
        return hops.brandes_hops(dg, sources, endpoints, progress)
    if graph.directed:
        in_indptr, in_indices, _ = backward(graph)
        rows_in = (cp.asarray(in_indptr), cp.asarray(in_indices))
    else:
        rows_in = (dg.indptr, dg.indices)
    hubs_out, hubs_in = _hubs(dg.indptr), _hubs(rows_in[0])
    weight = cp.asarray(lengths[0])
    in_weight = cp.asarray(lengths[1]) if graph.directed else weight
    bc = cp.zeros(n, dtype=cp.float64)
    size = batch_size(n, int(sources.shape[0]))
    level = cp.empty(size * n, dtype=cp.int32)
    sigma = cp.empty(size * n, dtype=cp.float64)
    delta = cp.empty(size * n, dtype=cp.float64)
    dist = cp.empty(size * n, dtype=cp.float64)
    mark = cp.empty(size * n, dtype=cp.int32)
    flag = cp.zeros(1, dtype=cp.int32)
    for start in range(0, int(sources.shape[0]), size):
        progress(start / max(sources.shape[0], 1),
                 f"betweenness: sources {start:,} of {sources.shape[0]:,}")
        batch = sources[start:start + size]
        b = int(batch.shape[0])
        cells = b * n
        grid = grid_for(cells, THREADS)
        d_src = cp.asarray(batch, dtype=cp.int32)
        first = d_src.astype(cp.int64) * b + cp.arange(b, dtype=cp.int64)  # node-major
        level[:cells].fill(-1)
        sigma[:cells].fill(0)
        delta[:cells].fill(0)
        level[first] = 0
        sigma[first] = 1.0
        dist[:cells].fill(cp.inf)
        mark[:cells].fill(-1)
        dist[first] = 0.0
        mark[first] = 0
        _until_still(k, "bc_relax", grid, hubs_out, b, (dg.indptr, dg.indices, weight),
                     (np.int32(b), np.int64(cells), dist, mark), flag, first=1)
        out_head = (dg.indptr, dg.indices, weight, dist)
        depth = _until_still(k, "bc_discover", grid, hubs_out, b, out_head,
                             (np.int32(b), np.int64(cells), level), flag, first=0)
        for d in range(1, depth + 1):  # the source's count is 1
            _step(k, "bc_sigma", grid, hubs_in, b, (*rows_in, in_weight, dist),
                  (np.int32(b), np.int64(cells), level, sigma, np.int32(d)))
        for d in range(depth - 1, -1, -1):  # the deepest level's dependencies are 0
            _step(k, "bc_delta", grid, hubs_out, b, out_head,
                  (np.int32(b), np.int64(cells), level, sigma, delta, np.int32(d)))
        reached = (level[:cells].reshape(n, b) >= 0).sum(axis=0).astype(cp.int64)
        k["bc_accumulate"](grid_for(n, THREADS), (THREADS,),
                           (np.int32(n), np.int32(b), d_src, level, delta, reached,
                            np.int32(bool(endpoints)), bc))
    return bc


def betweenness(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Betweenness on the GPU (batched Brandes); same contract as the CPU backend's."""
    sources, exact = driver.sources_of(graph, params)
    lengths = driver.lengths(graph, params)
    raw = brandes_device(graph, sources, params.endpoints, progress, lengths)
    progress(1.0, "betweenness: done")
    return driver.result(cupy(), graph, params, sources, exact, raw)
