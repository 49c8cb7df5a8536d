"""GPU (CuPy RawKernel) side of the ``similarity`` family; kernels in ``similarity.cu``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.similarity import driver
from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("similarity.cu")
THREADS = 256


def jaccard_device(graph: Graph, us: np.ndarray, vs: np.ndarray) -> Any:
    """Jaccard coefficient of each pair ``(us[i], vs[i])`` (internal ids), as a device array.

    One thread per pair merges the two sorted rows; same arithmetic as
    :func:`~graphgpu.kernels.algorithms.similarity.cpu.jaccard_numba`.
    """
    cp = cupy()
    dg = on_device(graph)
    d_us = cp.asarray(us, dtype=cp.int32)
    d_vs = cp.asarray(vs, dtype=cp.int32)
    out = cp.empty(us.shape[0], dtype=cp.float64)
    if us.shape[0]:
        kernel = kernels(CUDA_SOURCE, ("jaccard_pairs",))["jaccard_pairs"]
        kernel(grid_for(us.shape[0], THREADS), (THREADS,),
               (dg.indptr, dg.indices, d_us, d_vs, np.int64(us.shape[0]), out))
    return out


def jaccard(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Jaccard coefficients on the GPU; same contract and bit-identical values as the CPU's."""
    us, vs = driver.pairs_of(graph, params)
    progress(0.0, f"jaccard: {us.size:,} pairs")
    values = jaccard_device(graph, us, vs).get()
    progress(1.0, "jaccard: done")
    return driver.result(params, us, vs, values)
