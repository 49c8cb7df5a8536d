"""GPU side of ``triangles``: a thread per DAG arc, a warp per arc of hub rows (``triangles.cu``),
DAG built on the device."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphgpu.kernels.algorithms.common.dag import device_degree_dag
from graphgpu.kernels.algorithms.triangles import driver
from graphgpu.kernels.core.cuda import grid_for, kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("triangles.cu")
THREADS = 256
#: Arcs whose two rows hold more entries than this go to a warp each (``triangles_heavy``).
HEAVY_ENTRIES = 128


def rank_triangles(graph: Graph) -> Any:
    """Triangles per rank of the ``(degree, id)`` DAG (device int64): half the support (the
    triangles on each arc, from ``triangles.cu``) of the arcs out of and into each rank."""
    cp = cupy()
    dptr, dadj = device_degree_dag(graph)
    arcs = int(dadj.shape[0])
    if arcs == 0:
        return cp.zeros(graph.n, dtype=cp.int64)
    support = cp.zeros(arcs, dtype=cp.uint64)
    tail = (cp.searchsorted(dptr, cp.arange(arcs), side="right") - 1).astype(cp.int32)
    k = kernels(CUDA_SOURCE, ("triangles_arcs", "triangles_heavy"))
    heavy = cp.empty(arcs, dtype=cp.int64)
    heavy_size = cp.zeros(1, dtype=cp.uint64)
    grid = (min(grid_for(arcs, THREADS)[0], sm_count() * 32),)
    k["triangles_arcs"](grid, (THREADS,), (dptr, dadj, tail, cp.int64(arcs),
                                           cp.int64(HEAVY_ENTRIES), support, heavy, heavy_size))
    k["triangles_heavy"](grid, (THREADS,), (dptr, dadj, tail, heavy, heavy_size, support))
    support = support.astype(cp.int64)
    running = cp.concatenate([cp.zeros(1, dtype=cp.int64), cp.cumsum(support)])
    out_of = running[dptr[1:]] - running[dptr[:-1]]
    # Float sums of integers below 2**53: exact in any order.
    into = cp.bincount(dadj, weights=support.astype(cp.float64), minlength=graph.n)
    return (out_of + into.astype(cp.int64)) // 2


def triangles(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Triangle counts, clustering and transitivity on the GPU (a thread per DAG arc); same
    answer as :func:`.cpu.triangles`, bit for bit."""
    cp = cupy()
    progress(0.0, "triangles: orienting and counting")
    indptr = on_device(graph).indptr
    counts = rank_triangles(graph)[driver.degree_rank(cp, indptr)]
    local = driver.clustering(cp, counts, cp.diff(indptr))
    progress(1.0, "triangles: done")
    return driver.result(counts.get(), local.get(), graph.degrees())
