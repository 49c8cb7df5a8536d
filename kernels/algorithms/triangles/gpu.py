"""GPU side of ``triangles``: a block per chunk of DAG rows, a thread per arc, a warp per arc of
hub rows (``triangles.cu``), DAG built on the device; ``clustering``: cuSPARSE products."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphgpu.kernels.algorithms.common.dag import degree_rank, device_degree_dag
from graphgpu.kernels.algorithms.common.in_csr import device_in_csr
from graphgpu.kernels.algorithms.triangles import driver
from graphgpu.kernels.core.cuda import grid_for, kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("triangles.cu")
THREADS = 512
#: Arcs a block takes (whole rows, so a chunk may be longer); its first SLOTS arcs count their
#: triangles in shared memory (40 KB with the queue), the rest in global memory.
CHUNK = 2048
SLOTS = 8192
#: Heavy arcs a block queues in shared memory; more go to a global overflow list.
QUEUE = 2048
#: Arcs whose shorter list (a's row after b, b's row) holds more entries than this go to a warp
#: each, which merges the lists 32 entries at a time unless one is over RATIO times the other
#: (then binary searches).
HEAVY_ENTRIES = 16
RATIO = 4  # rmat22 (H100): rank_triangles 95.1 ms, 99.3 with 8, 105.4 with 16
#: Blocks of the overflow and spill kernels per multiprocessor.
BLOCKS_PER_SM = 16
#: Wedges (entries of the sparse product) per chunk of rows of ``clustering``: cuSPARSE's
#: SpGEMM buffers take a few times the product's 12 bytes an entry.
CLUSTERING_WEDGES_PER_CHUNK = 1 << 25


def rank_triangles(graph: Graph) -> Any:
    """Triangles per rank of the ``(degree, id)`` DAG (device int64), counted per chunk of
    rows in shared memory (``triangles.cu``)."""
    cp = cupy()
    dptr, dadj = device_degree_dag(graph)
    arcs = int(dadj.shape[0])
    count = cp.zeros(graph.n, dtype=cp.uint64)
    if arcs == 0:
        return count.astype(cp.int64)
    tail = (cp.searchsorted(dptr, cp.arange(arcs), side="right") - 1).astype(cp.int32)
    # Chunk k starts at the first row starting at or after k * CHUNK.
    firsts = cp.searchsorted(dptr, cp.arange(0, arcs, CHUNK, dtype=cp.int64), side="left")
    bounds = cp.unique(cp.concatenate([dptr[firsts], cp.asarray([arcs], dtype=cp.int64)]))
    spill = cp.zeros(arcs, dtype=cp.uint32)
    overflow = cp.empty(arcs, dtype=cp.int64)
    overflow_size = cp.zeros(1, dtype=cp.uint64)
    k = kernels(CUDA_SOURCE, ("triangles_chunks", "triangles_overflow", "triangles_spill"),
                (f"-DTHREADS={THREADS}", f"-DSLOTS={SLOTS}", f"-DQUEUE={QUEUE}",
                 f"-DRATIO={RATIO}"))
    k["triangles_chunks"]((int(bounds.shape[0]) - 1,), (THREADS,), (
        dptr, dadj, tail, bounds, cp.int64(HEAVY_ENTRIES), spill, count, overflow,
        overflow_size))
    grid = (min(grid_for(arcs, THREADS)[0], sm_count() * BLOCKS_PER_SM),)
    k["triangles_overflow"](grid, (THREADS,), (dptr, dadj, tail, overflow, overflow_size,
                                               spill, count))
    k["triangles_spill"](grid, (THREADS,), (dadj, spill, cp.int64(arcs), count))
    return count.astype(cp.int64)


def triangles(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Triangle counts, clustering and transitivity on the GPU (a block per chunk of rows); same
    answer as :func:`.cpu.triangles`, bit for bit."""
    cp = cupy()
    progress(0.0, "triangles: orienting and counting")
    indptr = on_device(graph).indptr
    counts = rank_triangles(graph)[degree_rank(cp, indptr)]
    local = driver.clustering(cp, counts, cp.diff(indptr))
    progress(1.0, "triangles: done")
    return driver.result(counts.get(), local.get(), graph.degrees())


def clustering(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """NetworkX's clustering of a directed or weighted graph on the GPU (cuSPARSE products
    through ``cupyx.scipy.sparse``, in chunks of rows: :func:`.driver.fagiolo`); unweighted,
    the same answer as :func:`.cpu.clustering` bit for bit (integer counts), weighted to
    rounding (sums in another order)."""
    import cupyx.scipy.sparse

    cp = cupy()
    scale = driver.weight_scale(graph, params.weighted)
    dg = on_device(graph)
    in_csr = device_in_csr(graph) if graph.directed else None
    progress(0.0, "clustering: sparse products")
    diag, pairs = driver.fagiolo(cp, cupyx.scipy.sparse, graph.n,
                                 (dg.indptr, dg.indices, dg.weights), in_csr, scale,
                                 CLUSTERING_WEDGES_PER_CHUNK, progress)
    return driver.clustering_result(diag.get(), pairs.get(), scale)
