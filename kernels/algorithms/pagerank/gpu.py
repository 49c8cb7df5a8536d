"""GPU side of ``pagerank``: the fused pull kernels of ``pagerank.cu``, one launch per iteration
(and one for the segments of hub rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.common.in_csr import device_in_csr
from graphgpu.kernels.algorithms.pagerank import driver
from graphgpu.kernels.core.cuda import device_attribute, kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("pagerank.cu")
THREADS = 256
#: Rows of more in-arcs than this are summed in segments of ``SEGMENT`` in-arcs, a block of
#: ``HEAVY_THREADS`` each (rmat22, H100: 1024 / 4096 / 256 took 34.9 ms for 18 iterations,
#: 4096 / 8192 / 512 37.7 ms, 16384 / 16384 / 512 44.3 ms, a block per row 48.8 ms).
HEAVY_ROW = 1024
SEGMENT = 4096
HEAVY_THREADS = 256


def device_arrays(graph: Graph) -> dict[str, Any]:
    """The device counterpart of :func:`.driver.host_arrays`."""
    dg = on_device(graph)
    in_indptr, in_indices, in_weights = device_in_csr(graph)
    return {"indptr": dg.indptr, "weights": dg.weights, "in_indptr": in_indptr,
            "in_indices": in_indices, "in_weights": in_weights}


def _group(arcs: int, n: int) -> int:
    """Lanes per row: 4 where the ranks gathered (8 bytes a node) pass a quarter of the L2
    cache, else the power of two (4..32) nearest above the mean in-degree. Where most gathers
    miss the L2, more rows in flight per warp hide more of their latency (H100, R-MAT, mean
    in-degree 16, 4 lanes against 16: rmat24 143 -> 111 ms and rmat22 24.7 -> 22.7 ms for the
    converged run, rmat20, whose ranks stay in the L2, 5.3 -> 5.8 ms)."""
    if 8 * n > device_attribute("L2CacheSize") // 4:
        return 4
    mean = arcs / max(n, 1)
    group = 4
    while group < 32 and group < mean:
        group *= 2
    return group


def _segments(in_indptr: Any) -> tuple[Any, ...] | None:
    """The kernel arguments of ``pagerank_pull_heavy`` for the rows over ``HEAVY_ROW`` in-arcs:
    the rows, each segment's row, each row's first segment, ``SEGMENT``, the partial sums and
    finish counters; None without such rows."""
    cp = cupy()
    lengths = cp.diff(in_indptr)
    rows = cp.flatnonzero(lengths > HEAVY_ROW).astype(cp.int32)
    if rows.shape[0] == 0:
        return None
    pieces = -(-lengths[rows] // SEGMENT)
    ends = cp.cumsum(pieces)
    segments = int(ends[-1])
    segment_row = (cp.searchsorted(ends, cp.arange(segments), side="right")).astype(cp.int32)
    return (rows, segment_row, (ends - pieces).astype(cp.int32), np.int64(SEGMENT),
            cp.empty(segments), cp.zeros(rows.shape[0], dtype=cp.uint32))


def device_power_iteration(state: dict[str, Any], params: Any, progress: ProgressFn
                           ) -> tuple[Any, int, bool, float]:
    """Same contract as :func:`.cpu.power_iteration`, with device arrays in ``state``; the ranks
    stay on the device (a CuPy array): the worker copies them once into its pinned staging
    buffer (``device.to_host``: 2.5 ms for rmat24's 134 MB of ranks on an H100, where the
    pageable copy made here before took 37-48 ms)."""
    cp = cupy()
    n = int(state["inv_out"].shape[0])
    if n == 0:
        return cp.zeros(0), 0, True, 0.0
    k = kernels(CUDA_SOURCE, ("pagerank_pull", "pagerank_pull_heavy"))
    in_indptr, in_indices = state["in_indptr"], state["in_indices"]
    in_weights = state["in_weights"]
    inv_out, p, d = state["inv_out"], state["p"], state["d"]
    group = _group(int(in_indices.shape[0]), n)
    heavy = _segments(in_indptr)
    blocks = min(sm_count() * 8, max(1, -(-n * group // THREADS)))
    x = cp.full(n, 1.0 / n)
    x_next = cp.empty(n)
    y, y_next = x * inv_out, cp.empty(n)
    sums = cp.zeros(2, dtype=cp.float64)
    dangling_mass = float(x[state["dangling"]].sum())
    null = np.uintp(0)
    for iteration in range(1, params.max_iter + 1):
        progress(iteration / params.max_iter, f"pagerank: iteration {iteration}")
        sums.fill(0)
        args = (in_indptr, in_indices, null if in_weights is None else in_weights, y, p, d,
                inv_out, x, np.float64(params.alpha), np.float64(dangling_mass))
        k["pagerank_pull"]((blocks,), (THREADS,), (
            *args, np.int32(n), np.int32(group), np.int64(HEAVY_ROW), x_next, y_next, sums))
        if heavy is not None:
            k["pagerank_pull_heavy"]((int(heavy[1].shape[0]),), (HEAVY_THREADS,), (
                *args, *heavy, x_next, y_next, sums))
        err, dangling_mass = (float(v) for v in sums.get())
        x, x_next = x_next, x
        y, y_next = y_next, y
        if err < params.tol:
            return x, iteration, True, err
    return x, params.max_iter, False, err


def pagerank(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """PageRank on the GPU (one fused pull kernel per iteration); same contract as
    :func:`.cpu.pagerank`, same ranks to rounding, left on the device (``result.host()`` for
    a NumPy copy)."""
    return driver.run(graph, params, progress, device_arrays(graph), cupy(),
                      device_power_iteration)
