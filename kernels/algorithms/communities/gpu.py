"""GPU (CuPy RawKernel) operations of the ``communities`` driver; kernels in ``communities.cu``.

The twins of ``cpu.py``: same colours (Jones-Plassmann rounds with the CPU's greedy priority),
same moves (a warp per node of a colour class, a block per hub, exact integer totals, the same
gain expression compiled without fused multiply-adds, a reduction under the CPU's total order),
same component labels (smallest node id).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.communities import driver
from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("communities.cu")
#: NVRTC options: no contraction of a * b + c into an FMA, so gains round as on the CPU.
OPTIONS = ("--fmad=false",)
NAMES = ("cm_colour", "cm_colour_tail", "cm_decide", "cm_decide_hub", "cm_apply", "cm_components")
THREADS = 256
#: Threads of ``cm_decide_hub`` (``HUB_THREADS`` in the source): a block per hub.
HUB_THREADS = 1024
#: Nodes with more arcs than this decide in a block of their own, not a warp.
HUB_DEGREE = 1024
#: Jones-Plassmann rounds launched between compactions of the list of uncoloured nodes.
COLOUR_ROUNDS_PER_CHECK = 4
#: Uncoloured nodes left (after a first batch of rounds) that one block colours in order.
COLOUR_TAIL = 4096
TAIL_THREADS = 1024


def _k() -> dict[str, Any]:
    return kernels(CUDA_SOURCE, NAMES, OPTIONS)


def colour(indptr: Any, indices: Any, salt: int) -> Any:
    """Jones-Plassmann colouring, equal to ``cpu.colour`` (int32 colour per node); the last
    :data:`COLOUR_TAIL` uncoloured nodes greedily by one block (``cm_colour_tail``)."""
    cp = cupy()
    n = int(indptr.shape[0]) - 1
    result = cp.full(n, -1, dtype=cp.int32)
    pending = cp.arange(n, dtype=cp.int32)
    kern = _k()
    while pending.shape[0]:
        count = int(pending.shape[0])
        for _ in range(COLOUR_ROUNDS_PER_CHECK):
            kern["cm_colour"](grid_for(32 * count, THREADS), (THREADS,),
                              (pending, np.int32(count), indptr, indices, np.uint32(salt),
                               result))
        pending = pending[result[pending] < 0]  # later rounds walk only what is left
        if 0 < pending.shape[0] <= COLOUR_TAIL:
            priority = (driver.mix32(pending, salt).astype(cp.uint64) << cp.uint64(32)
                        | pending.astype(cp.uint64))
            tail = pending[cp.argsort(priority)[::-1]]
            kern["cm_colour_tail"]((1,), (TAIL_THREADS,), (
                tail, np.int32(tail.shape[0]), indptr, indices, result))
            break
    return result


def _hubs_first(order: Any, offsets: np.ndarray, indptr: Any) -> tuple[Any, np.ndarray]:
    """``order`` with each colour class's hubs (more than :data:`HUB_DEGREE` arcs) first, and
    the number of hubs of each class. A class's decisions do not depend on its order."""
    cp = cupy()
    size = int(order.shape[0])
    classes = len(offsets) - 1
    cls = cp.repeat(cp.arange(classes, dtype=cp.int64), cp.asarray(np.diff(offsets)))
    light = (indptr[order + 1] - indptr[order] <= HUB_DEGREE).astype(cp.int64)
    ranked = order[cp.argsort((2 * cls + light) * size + cp.arange(size))]
    hubs = cp.bincount(cls, weights=1 - light, minlength=classes)
    return ranked, hubs.get().astype(np.int64)


def local_move(order: Any, offsets: np.ndarray, indptr: Any, indices: Any, w: Any, comm: Any,
               k: Any, sigma: Any, size: Any, part: Any | None, res: float, m2: float,
               max_sweeps: int, stop_divisor: int) -> int:
    """Colour-class local moving on the device, as ``cpu.local_move``; returns the sweeps."""
    cp = cupy()
    kern = _k()
    n = int(indptr.shape[0]) - 1
    arcs = int(indices.shape[0])
    keys = cp.empty(2 * arcs, dtype=cp.int32)
    vals = cp.empty(2 * arcs, dtype=cp.int64)
    target = cp.empty(max(int(order.shape[0]), 1), dtype=cp.int32)
    moved = cp.zeros(1, dtype=cp.uint64)
    refine = part is not None
    args = (indptr, indices, w, comm, k, sigma, size, part if refine else comm,
            np.int32(refine), np.float64(res), np.float64(m2), keys, vals)
    order, hubs = _hubs_first(order, offsets, indptr)
    sweeps = 0
    for _ in range(max_sweeps):
        sweeps += 1
        moved.fill(0)
        for cls in range(len(offsets) - 1):
            start, count = int(offsets[cls]), int(offsets[cls + 1] - offsets[cls])
            if count == 0:
                continue
            members, heavy = order[start:start + count], int(hubs[cls])
            if heavy:
                kern["cm_decide_hub"]((heavy,), (HUB_THREADS,), (members, *args, target))
            if count > heavy:
                kern["cm_decide"](grid_for(32 * (count - heavy), THREADS), (THREADS,), (
                    members[heavy:], np.int32(count - heavy), *args, target[heavy:]))
            kern["cm_apply"](grid_for(count, THREADS), (THREADS,), (
                members, np.int32(count), target, comm, k, sigma, size, moved))
        done = int(moved.get()[0])
        if done == 0 or done * stop_divisor < n:
            break
    return sweeps


def components(indptr: Any, indices: Any, comm: Any) -> Any:
    """Smallest node id of each node's connected component inside its community."""
    cp = cupy()
    n = int(indptr.shape[0]) - 1
    label = cp.arange(n, dtype=cp.int32)
    changed = cp.zeros(1, dtype=cp.int32)
    kernel = _k()["cm_components"]
    while True:
        changed.fill(0)
        kernel(grid_for(n, THREADS), (THREADS,),
               (indptr, indices, np.int32(n), comm, label, changed))
        if not int(changed.get()[0]):
            return label


def _csr(graph: Graph) -> tuple[Any, Any]:
    dg = on_device(graph)  # kept on the device for a stored graph
    return dg.indptr, dg.indices


def _ops() -> driver.Ops:
    cp = cupy()
    return driver.Ops(xp=cp, csr=_csr, colour=colour, local_move=local_move,
                      components=components, to_host=cp.asnumpy)


def louvain(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Louvain on the GPU; the same partition as :func:`.cpu.louvain`."""
    return driver.run(_ops(), graph, params, False, progress)


def leiden(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Leiden on the GPU; the same partition as :func:`.cpu.leiden`."""
    return driver.run(_ops(), graph, params, True, progress)
