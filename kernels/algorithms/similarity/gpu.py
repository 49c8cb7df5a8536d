"""GPU (CuPy RawKernel) side of the ``similarity`` family; kernels in ``similarity.cu``.

Given pairs: a thread per pair intersects the two rows, a warp per pair of two long rows. Every
edge: the common neighbours of each edge are its triangles, counted per arc of the degree-ordered
DAG (:func:`~graphgpu.kernels.algorithms.common.dag.device_degree_dag`), then read per edge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.common.dag import degree_rank, device_degree_dag
from graphgpu.kernels.algorithms.similarity import driver
from graphgpu.kernels.core.cuda import grid_for, kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("similarity.cu")
NAMES = ("jaccard_pairs", "jaccard_pairs_heavy", "support_arcs", "support_arcs_heavy",
         "jaccard_edges")
THREADS = 256
#: Pairs (and DAG arcs) whose two lists both hold over LIMIT entries go to a warp each, which
#: merges 32 entries of each list at a time unless one is over RATIO times the other (then the
#: lanes binary-search the shorter's entries in the longer).
LIMIT = 16
RATIO = 4
#: Blocks per multiprocessor of the warp-per-item kernels.
BLOCKS_PER_SM = 16


def _kernels() -> dict[str, Any]:
    return kernels(CUDA_SOURCE, NAMES, (f"-DLIMIT={LIMIT}", f"-DRATIO={RATIO}"))


def _warp_grid(items: int) -> tuple[int]:
    return (max(1, min(grid_for(items * 32, THREADS)[0], sm_count() * BLOCKS_PER_SM)),)


def jaccard_device(graph: Graph, us: Any, vs: Any) -> Any:
    """Jaccard coefficient of each pair ``(us[i], vs[i])`` (internal ids, host or device
    int32 arrays), as a device array: the same IEEE quotients as
    :func:`~graphgpu.kernels.algorithms.similarity.cpu.jaccard_numba`."""
    cp = cupy()
    dg = on_device(graph)
    pairs = int(us.shape[0])
    d_us, d_vs = cp.asarray(us, dtype=cp.int32), cp.asarray(vs, dtype=cp.int32)
    out = cp.empty(pairs, dtype=cp.float64)
    if pairs:
        k = _kernels()
        heavy = cp.empty(pairs, dtype=cp.int64)
        size = cp.zeros(1, dtype=cp.uint64)
        k["jaccard_pairs"](grid_for(pairs, THREADS), (THREADS,), (
            dg.indptr, dg.indices, d_us, d_vs, np.int64(pairs), out, heavy, size))
        k["jaccard_pairs_heavy"](_warp_grid(pairs), (THREADS,), (
            dg.indptr, dg.indices, d_us, d_vs, heavy, size, out))
    return out


def edges_device(graph: Graph) -> tuple[Any, Any, Any]:
    """Every edge ``u < v`` in CSR row order (internal ids, device int32) and its coefficient,
    from the triangles through it (the support of its DAG arc)."""
    cp = cupy()
    dg = on_device(graph)
    rows = (cp.searchsorted(dg.indptr, cp.arange(dg.indices.shape[0]), side="right")
            - 1).astype(cp.int32)
    upper = dg.indices > rows
    us, vs = rows[upper], dg.indices[upper]
    del rows, upper
    pairs = int(us.shape[0])
    out = cp.empty(pairs, dtype=cp.float64)
    if pairs == 0:
        return us, vs, out
    k = _kernels()
    dptr, dadj = device_degree_dag(graph)
    tail = (cp.searchsorted(dptr, cp.arange(pairs), side="right") - 1).astype(cp.int32)
    support = cp.zeros(pairs, dtype=cp.uint32)
    heavy = cp.empty(pairs, dtype=cp.int64)
    size = cp.zeros(1, dtype=cp.uint64)
    k["support_arcs"](grid_for(pairs, THREADS), (THREADS,), (
        dptr, dadj, tail, np.int64(pairs), support, heavy, size))
    k["support_arcs_heavy"](_warp_grid(pairs), (THREADS,), (
        dptr, dadj, tail, heavy, size, support))
    del tail, heavy
    k["jaccard_edges"](grid_for(pairs, THREADS), (THREADS,), (
        dg.indptr, us, vs, degree_rank(cp, dg.indptr), dptr, dadj, support, np.int64(pairs),
        out))
    return us, vs, out


def jaccard(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Jaccard coefficients on the GPU; same contract and bit-identical values as the CPU's."""
    if params.pairs is None:
        progress(0.0, f"jaccard: every edge ({graph.m:,})")
        us, vs, values = (a.get() for a in edges_device(graph))
    else:
        us, vs = driver.pairs_of(graph, params)
        progress(0.0, f"jaccard: {us.size:,} pairs")
        values = jaccard_device(graph, us, vs).get()
    progress(1.0, "jaccard: done")
    return driver.result(params, us, vs, values)
