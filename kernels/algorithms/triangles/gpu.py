"""GPU side of ``triangles``: hash probes along the degree-ordered DAG's arcs, a warp or a block
per pivot node (``triangles.cu``), out-lists filtered in place on the device
(:func:`~graphgpu.kernels.algorithms.common.dag.device_degree_out_lists`), results and summary
on the device; ``clustering``: cuSPARSE products."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from graphgpu.kernels.algorithms.common.dag import device_degree_out_lists
from graphgpu.kernels.algorithms.common.in_csr import device_in_csr
from graphgpu.kernels.algorithms.triangles import driver
from graphgpu.kernels.core.cuda import concurrently, grid_for, kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("triangles.cu")
#: The kernels of ``triangles.cu``.
NAMES = ("triangles_warps", "triangles_blocks4", "triangles_blocks8", "triangles_summary")
#: Entries a lane loads before probing them (loads in flight at once). rmat22 (H100):
#: device_triangles 64.8 ms with 2, 55.7 with 4, 71.9 with 8.
UNROLL = 4
#: Pivots of out-degree up to WARP_OUT (and rows up to WARP_ROW: a warp walks the row for
#: partners) take a warp each, with a table of WARP_SLOTS slots; up to SMALL_OUT a block of 4
#: warps (SMALL_SLOTS); the rest a block of 8 warps (LARGE_SLOTS, 32 KB: out-lists over a
#: quarter of it are hashed in pieces). rmat22: 2.0 M, 0.31 M and 0.035 M pivots, out-degrees at
#: most 1023. rmat22 (H100, the three kernels launched together, pivot lists included):
#: SMALL_OUT 128 (512 slots) 47.2 ms, 256 45.0, 512 45.2; the large pivots by blocks of 4 warps
#: 60.5 ms for their kernel instead of 42.1.
WARP_OUT, WARP_ROW, WARP_SLOTS, WARPS_PER_BLOCK = 32, 1024, 128, 8
SMALL_OUT, SMALL_SLOTS = 256, 1024
LARGE_SLOTS = 4096  # 8 bytes a slot; over 48 KB a launch would need the opt-in attribute
#: Blocks of the warp-per-pivot kernel per multiprocessor (grid-stride over its pivots).
BLOCKS_PER_SM = 8
#: Wedges (entries of the sparse product) per chunk of rows of ``clustering``: cuSPARSE's
#: SpGEMM buffers take a few times the product's 12 bytes an entry.
CLUSTERING_WEDGES_PER_CHUNK = 1 << 25


def device_triangles(graph: Graph) -> Any:
    """Triangles at every node (device int64, node ids): each arc of the ``(degree, id)`` DAG
    probed once, the shorter out-list in a hash table of the longer (``triangles.cu``)."""
    cp = cupy()
    dg = on_device(graph)
    out, outdeg = device_degree_out_lists(graph)
    count = cp.zeros(graph.n, dtype=cp.uint64)
    if graph.n == 0 or not int(outdeg.max()):
        return count.astype(cp.int64)
    deg = cp.diff(dg.indptr).astype(cp.int32)
    k = kernels(CUDA_SOURCE, NAMES, (f"-DUNROLL={UNROLL}",))
    warp = (outdeg > 0) & (outdeg <= WARP_OUT) & (deg <= WARP_ROW)
    small = (outdeg > 0) & (outdeg <= SMALL_OUT) & ~warp
    common = (dg.indptr, dg.indices, out, outdeg, deg)
    launches = []
    for name, threads, slots, chosen in (("triangles_blocks8", 256, LARGE_SLOTS,
                                          outdeg > SMALL_OUT),
                                         ("triangles_blocks4", 128, SMALL_SLOTS, small)):
        # Pivots by degree, the longest rows first: blocks running together then walk rows of
        # like lengths (partners in id order) at like rates, so they read the same partners'
        # lists about together, while these are in L2, and no long row starts last. rmat22
        # (H100): device_triangles 55.1 -> 49.5 ms (pivots in id order before).
        pivots = cp.flatnonzero(chosen)
        pivots = pivots[cp.argsort(-deg[pivots])]
        if pivots.size:
            launches.append(partial(k[name], (int(pivots.size),), (threads,),
                                    (*common, pivots, cp.int32(slots), count),
                                    shared_mem=8 * slots))
    pivots = cp.flatnonzero(warp)
    if pivots.size:
        threads = 32 * WARPS_PER_BLOCK
        grid = min(sm_count() * BLOCKS_PER_SM, -(-int(pivots.size) // WARPS_PER_BLOCK))
        launches.append(partial(k["triangles_warps"], (grid,), (threads,), (
            *common, pivots, cp.int64(pivots.size), cp.int32(WARP_SLOTS), count),
            shared_mem=8 * WARP_SLOTS * WARPS_PER_BLOCK))
    # The three classes at once: each kernel's tail (its last, longest blocks) leaves most of
    # the GPU to the others. rmat22 (H100): kernels 46.5 -> 45.0 ms.
    concurrently(*launches)
    return count.view(cp.int64)  # counts < 2^63: the same bits


def triangles(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Triangle counts, clustering and transitivity on the GPU (hash probes per pivot); same
    answer as :func:`.cpu.triangles`, bit for bit. The per-node arrays stay on the device."""
    cp = cupy()
    progress(0.0, "triangles: orienting and counting")
    counts = device_triangles(graph)
    degrees = cp.diff(on_device(graph).indptr)
    local, sums = device_summary(counts, degrees)
    result = driver.result(cp, counts, local, degrees, sums)
    progress(1.0, "triangles: done")
    return result


def device_summary(counts: Any, degrees: Any) -> tuple[Any, Any]:
    """Per-node clustering (float64) and :func:`.driver.result`'s ``sums`` (uint64: the counts,
    the ``d (d - 1)``, the limbs of the clustering values) of int64 ``counts`` and ``degrees``
    on the device, in one pass (``triangles_summary``): the same values as the driver's NumPy
    steps, which took ~25 launches (1.2 ms on rmat22, H100)."""
    cp = cupy()
    n = int(counts.shape[0])
    local = cp.empty(n, dtype=cp.float64)
    sums = cp.zeros(2 + driver.LIMBS, dtype=cp.uint64)
    kernels(CUDA_SOURCE, NAMES, (f"-DUNROLL={UNROLL}",))["triangles_summary"](
        (min(sm_count() * BLOCKS_PER_SM, grid_for(n, 256)[0]),), (256,),
        (counts, degrees, cp.int64(n), local, sums))
    return local, sums


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
