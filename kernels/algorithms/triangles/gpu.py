"""GPU side of ``triangles``: a thread per DAG arc (``triangles.cu``), DAG built on the device."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphgpu.kernels.algorithms.common.dag import device_degree_dag
from graphgpu.kernels.core.cuda import grid_for, kernels, sm_count
from graphgpu.kernels.core.device import cupy
from graphgpu.kernels.core.graph import Graph

CUDA_SOURCE = Path(__file__).with_name("triangles.cu")
THREADS = 256


def rank_triangles(graph: Graph) -> Any:
    """Triangles per rank of the ``(degree, id)`` DAG (device int64)."""
    cp = cupy()
    dptr, dadj = device_degree_dag(graph)
    arcs = int(dadj.shape[0])
    count = cp.zeros(graph.n, dtype=cp.uint64)
    if arcs:
        tail = (cp.searchsorted(dptr, cp.arange(arcs), side="right") - 1).astype(cp.int32)
        kernel = kernels(CUDA_SOURCE, ("triangles_arcs",))["triangles_arcs"]
        grid = (min(grid_for(arcs, THREADS)[0], sm_count() * 32),)
        kernel(grid, (THREADS,), (dptr, dadj, tail, cp.int64(arcs), count))
    return count.astype(cp.int64)
