"""GPU (CuPy RawKernel) operations of the ``communities`` driver; kernels in ``communities.cu``.

The twins of ``cpu.py``: same moves (a warp per awake node of a sweep, a block per hub, exact
integer totals, the same gain expression compiled without fused multiply-adds, a reduction under
the CPU's total order), same component labels (smallest node id).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.communities import driver
from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("communities.cu")
#: NVRTC options: no contraction of a * b + c into an FMA, so gains round as on the CPU.
OPTIONS = ("--fmad=false",)
NAMES = ("cm_decide", "cm_decide_hub", "cm_apply", "cm_link", "cm_flatten", "cm_rows",
         "cm_aggregate", "cm_community_arcs", "cm_awake", "cm_modularity_terms")
THREADS = 256  # DECIDE_THREADS in the source
#: Threads of ``cm_decide_hub`` (``HUB_THREADS`` in the source): a block per hub.
HUB_THREADS = 1024
#: Nodes with more arcs than this decide in a block of their own, not a warp.
HUB_DEGREE = 1024

def _k() -> dict[str, Any]:
    return kernels(CUDA_SOURCE, NAMES, OPTIONS)


def local_move(indptr: Any, indices: Any, w: Any, comm: Any, k: Any, sigma: Any, size: Any,
               part: Any | None, res: float, m2: float, salt: int, max_sweeps: int,
               stop_divisor: int) -> int:
    """Synchronous local moving on the device, as ``cpu.local_move``; returns the sweeps.

    Each sweep decides for the awake nodes only (all at first, then the movers and their
    neighbours, and the resting half's), hubs a block each, the others a warp each. The hubs
    are listed once (their kernels skip the sleeping ones), the awake others each sweep by
    ``cm_awake`` after the moves, whose count comes back with the moves (one host sync a sweep).
    """
    cp = cupy()
    kern = _k()
    n = int(indptr.shape[0]) - 1
    arcs = int(indices.shape[0])
    keys = cp.empty(max(2 * arcs, 1), dtype=cp.int32)
    vals = cp.empty(max(2 * arcs, 1), dtype=cp.int64)
    target = cp.empty(n, dtype=cp.int32)
    active = cp.ones(n, dtype=cp.bool_)
    later = cp.zeros(n, dtype=cp.bool_)
    light_row = indptr[1:] - indptr[:-1] <= HUB_DEGREE
    hubs = cp.flatnonzero(~light_row).astype(cp.int32)
    light = cp.flatnonzero(light_row).astype(cp.int32)  # the first sweep's: every light node
    count = int(light.shape[0])
    next_light = cp.empty_like(light)
    counters = cp.zeros(2, dtype=cp.uint64)  # nodes moved, awake light nodes listed
    refine = part is not None
    sweeps = 0
    for sweep in range(max_sweeps):
        sweeps += 1
        args = (indptr, indices, w, comm, k, sigma, size, part if refine else comm,
                np.int32(refine), np.float64(res), np.float64(m2), keys, vals, active,
                np.uint32(salt), np.uint32(sweep), later)
        if hubs.shape[0]:
            kern["cm_decide_hub"]((int(hubs.shape[0]),), (HUB_THREADS,), (hubs, *args, target))
        if count:
            kern["cm_decide"](grid_for(32 * count, THREADS), (THREADS,), (
                light, np.int32(count), *args, target))
        counters.fill(0)
        for nodes, listed in ((hubs, int(hubs.shape[0])), (light, count)):
            if listed:
                kern["cm_apply"](grid_for(32 * listed, THREADS), (THREADS,), (
                    nodes, np.int32(listed), indptr, indices, active, target, comm, k,
                    sigma, size, later, counters))
        kern["cm_awake"](grid_for(n, THREADS), (THREADS,), (
            indptr, np.int32(n), np.int32(HUB_DEGREE), later, next_light, counters[1:]))
        done, count = (int(x) for x in counters.get())
        if done == 0 or done * stop_divisor < n:
            break
        active, later = later, active
        later.fill(0)
        light, next_light = next_light, light
    return sweeps


def components(indptr: Any, indices: Any, comm: Any) -> Any:
    """Smallest node id of each node's connected component inside its community (union-find, a
    thread per arc: ``cm_link``, ``cm_flatten``)."""
    cp = cupy()
    n = int(indptr.shape[0]) - 1
    arcs = int(indices.shape[0])
    parent = cp.arange(n, dtype=cp.int32)
    kern = _k()
    if arcs:
        kern["cm_link"](grid_for(arcs, THREADS), (THREADS,),
                        (rows(indptr), indices, np.int64(arcs), comm, parent))
    kern["cm_flatten"](grid_for(n, THREADS), (THREADS,), (np.int32(n), parent))
    return parent


def rows(indptr: Any) -> Any:
    """The row (source node) of each arc of a CSR (int32), a warp per row."""
    cp = cupy()
    n = int(indptr.shape[0]) - 1
    out = cp.empty(int(indptr[-1]), dtype=cp.int32)
    _k()["cm_rows"](grid_for(32 * n, THREADS), (THREADS,), (indptr, np.int32(n), out))
    return out


def aggregate(indptr: Any, indices: Any, w: Any, group: Any, count: int
              ) -> tuple[Any, Any, Any]:
    """The graph of the groups without a sort of the arcs (as GVE-Louvain): each group gets a
    hash table of two slots per arc of its members, laid out in group order (offsets by a
    prefix sum), every arc adds its weight there in parallel, and one compaction of the
    claimed slots gives the rows in group order. The same arcs and weights as
    ``driver.aggregate_sorted``; the order within a row varies, which no step depends on."""
    cp = cupy()
    arcs = int(indices.shape[0])
    degree = (indptr[1:] - indptr[:-1]).astype(cp.float64)  # exact below 2**53
    start = cp.zeros(count + 1, dtype=cp.int64)
    start[1:] = cp.cumsum(reductions.bincount(group, count, degree).astype(cp.int64))
    keys = cp.full(max(2 * arcs, 1), -1, dtype=cp.int32)
    vals = cp.zeros(max(2 * arcs, 1), dtype=cp.int64)
    distinct = cp.zeros(count, dtype=cp.int64)
    _k()["cm_aggregate"](grid_for(arcs, THREADS), (THREADS,), (
        rows(indptr), indices, w, np.int64(arcs), group, start, keys, vals, distinct))
    claimed = cp.flatnonzero(keys >= 0)
    new_indptr = cp.zeros(count + 1, dtype=cp.int64)
    new_indptr[1:] = cp.cumsum(distinct)
    return new_indptr, keys[claimed], vals[claimed]


def community_arcs(indptr: Any, indices: Any, comm: Any, count: int) -> tuple[Any, Any]:
    """Arcs inside each community and arcs out of its nodes, a warp per node and one atomic
    per node and total (``bincount`` over every arc waited on the few large communities)."""
    cp = cupy()
    n = int(indptr.shape[0]) - 1
    internal = cp.zeros(count, dtype=cp.int64)
    degree = cp.zeros(count, dtype=cp.int64)
    _k()["cm_community_arcs"](grid_for(32 * n, THREADS), (THREADS,), (
        indptr, indices, np.int32(n), comm.astype(cp.int32), internal, degree))
    return internal, degree


def modularity_terms(internal: Any, degree: Any, arcs: int, resolution: float) -> Any:
    """Each community's term of the modularity, as :func:`.cpu.modularity_terms` (float64)."""
    cp = cupy()
    count = int(internal.shape[0])
    out = cp.empty(count, dtype=cp.float64)
    _k()["cm_modularity_terms"](grid_for(count, THREADS), (THREADS,), (
        internal, degree, np.int32(count), np.float64(arcs), np.float64(resolution), out))
    return out


def _csr(graph: Graph) -> tuple[Any, Any]:
    dg = on_device(graph)  # kept on the device for a stored graph
    return dg.indptr, dg.indices


def _ops() -> driver.Ops:
    cp = cupy()
    return driver.Ops(xp=cp, csr=_csr, rows=rows, aggregate=aggregate,
                      community_arcs=community_arcs, modularity_terms=modularity_terms,
                      local_move=local_move,
                      components=components, to_host=cp.asnumpy)


def louvain(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Louvain on the GPU; the same partition as :func:`.cpu.louvain`."""
    return driver.run(_ops(), graph, params, False, progress)


def leiden(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Leiden on the GPU; the same partition as :func:`.cpu.leiden`."""
    return driver.run(_ops(), graph, params, True, progress)
