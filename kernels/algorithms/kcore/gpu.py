"""GPU side of the k-core family: level-by-level parallel peeling (``kcore.cu``).

Level ``k`` is the smallest degree left (found on the device); every node of degree <= k gets
core number k and leaves, its neighbours' degrees drop (atomics), and a neighbour dropping to k
joins the next frontier, until a frontier is empty; then the next level.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.kcore import driver
from graphgpu.kernels.core.cuda import grid_for, kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("kcore.cu")
NAMES = ("kcore_scan", "kcore_peel", "kcore_min_degree")
THREADS = 256


def core_numbers(graph: Graph, progress: ProgressFn) -> Any:
    """Core number of every node (device int32) of an undirected graph."""
    cp = cupy()
    n = graph.n
    dg = on_device(graph)
    k = kernels(CUDA_SOURCE, NAMES)
    grid = (min(grid_for(n, THREADS)[0], sm_count() * 16),)
    deg = cp.diff(dg.indptr).astype(cp.int32)
    core = cp.full(n, -1, dtype=cp.int32)
    frontier = cp.empty(max(n, 1), dtype=cp.int32)
    following = cp.empty(max(n, 1), dtype=cp.int32)
    size = cp.zeros(1, dtype=cp.uint32)
    level = cp.zeros(1, dtype=cp.int32)
    n32 = cp.int32(n)
    removed = levels = 0
    while removed < n:
        levels += 1
        if levels % 64 == 1:
            progress(removed / n, f"core numbers: {removed:,} of {n:,} nodes peeled")
        level.fill(0x7FFFFFFF)
        k["kcore_min_degree"](grid, (THREADS,), (n32, deg, core, level))
        size.fill(0)
        k["kcore_scan"](grid, (THREADS,), (n32, level, deg, core, frontier, size))
        count = int(size.get()[0])
        while count:
            removed += count
            size.fill(0)
            k["kcore_peel"](grid_for(count * 32, THREADS), (THREADS,), (
                dg.indptr, dg.indices, frontier, cp.uint32(count), level, deg, core, following,
                size))
            frontier, following = following, frontier
            count = int(size.get()[0])
    return core


def _cores(graph: Graph, progress: ProgressFn) -> np.ndarray:
    return core_numbers(graph, progress).get()


def core_number(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Core numbers on the GPU (parallel peeling); same answer as :func:`.cpu.core_number`."""
    return driver.core_number(graph, progress, _cores)


def k_core(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Membership of the k-core on the GPU; same answer as :func:`.cpu.k_core`."""
    return driver.k_core(graph, params, progress, _cores)
