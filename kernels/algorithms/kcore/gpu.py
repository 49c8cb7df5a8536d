"""GPU side of the k-core family: level-by-level parallel peeling in one persistent launch
(``kcore.cu``).

Level ``k`` is the smallest degree left (a lower bound of it, kept on the device); every node of
degree <= k gets core number k and leaves, its neighbours' degrees drop (atomics), and a
neighbour dropping to k joins the next frontier, until a frontier is empty; then the next level.
Phases are separated by grid barriers instead of launches and host reads (a rmat22 graph has
~1000 levels), one per level and one per round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.kcore import driver
from graphgpu.kernels.core.cuda import kernels, resident_blocks, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("kcore.cu")
THREADS = 1024
#: Blocks per multiprocessor of the persistent launch at most (all must be resident): one wide
#: block each, as the grid barriers of every level cost more with every block that arrives.
BLOCKS_PER_SM = 1
NONE = 0x7FFFFFFF


def core_numbers(graph: Graph, progress: ProgressFn) -> Any:
    """Core number of every node (device int32) of an undirected graph: one persistent launch
    of ``kcore_peel_all``."""
    cp = cupy()
    n = graph.n
    core = cp.full(n, -1, dtype=cp.int32)
    if n == 0:
        return core
    dg = on_device(graph)
    kernel = kernels(CUDA_SOURCE, ("kcore_peel_all",))["kcore_peel_all"]
    blocks = resident_blocks(kernel, THREADS, BLOCKS_PER_SM) * sm_count()
    deg = cp.diff(dg.indptr).astype(cp.int32)
    alive = cp.arange(n, dtype=cp.int32)
    buffers = [cp.empty(n, dtype=cp.int32) for _ in range(3)]
    alive_size = cp.asarray([n, 0, 0], dtype=cp.uint32)
    size = cp.zeros(3, dtype=cp.uint32)
    level_min = cp.full(3, NONE, dtype=cp.int32)
    level_min[0] = deg.min()  # the first level's k, without a host read
    barrier = cp.zeros(1, dtype=cp.uint32)
    kernel((blocks,), (THREADS,), (dg.indptr, dg.indices, alive, *buffers, deg, core,
                                   alive_size, size, level_min, barrier))
    return core


def _cores(graph: Graph, progress: ProgressFn) -> np.ndarray:
    return core_numbers(graph, progress).get()


def core_number(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Core numbers on the GPU (parallel peeling); same answer as :func:`.cpu.core_number`."""
    return driver.core_number(graph, progress, _cores)


def k_core(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Membership of the k-core on the GPU; same answer as :func:`.cpu.k_core`."""
    return driver.k_core(graph, params, progress, _cores)
