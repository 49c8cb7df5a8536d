"""GPU (CuPy) side of the counting family; the kernels are in ``kernels/cuda/counting.cu``.

Work is spread by persistent grids that fetch their next root (cliques: one warp each) or item
(connected sets: one thread per edge item) from a device counter, heaviest first, so a few heavy
roots never hold up a launch while other warps idle. Launches go in batches of roots/items, with
a progress report (and a chance to cancel) between batches.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from kernels.device import cupy, on_device
from kernels.errors import LimitExceeded
from kernels.graph import Graph
from kernels.registry import ProgressFn

CUDA_SOURCE = Path(__file__).with_name("cuda") / "counting.cu"
#: Lanes of a clique warp hold this many 32-bit words each at most (out-degree <= 1024 * 8).
CLIQUE_WORDS_PER_LANE = (1, 2, 4, 8)
#: Device scratch the per-warp bitmaps and per-thread ESU lists may take.
SCRATCH_BYTES = 2 << 30
THREADS = 256
#: Launches per run at most (progress granularity).
BATCHES = 32


@cache
def _module() -> Any:
    return cupy().RawModule(code=CUDA_SOURCE.read_text(), options=("-std=c++17",))


@cache
def _sm_count() -> int:
    cp = cupy()
    return int(cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["multiProcessorCount"])


def _wide(acc: Any, sizes: range) -> dict[int, int]:
    """Python integers of the 128-bit device totals ``acc`` for ``sizes``."""
    host = acc.get()
    return {s: (int(host[2 * s + 1]) << 64) + int(host[2 * s]) for s in sizes}


def _batched(total: int, launch: Callable[[int, int], None], progress: ProgressFn,
             what: str) -> None:
    """``launch(start, stop)`` over ``range(total)`` in at most :data:`BATCHES` pieces."""
    step = max(1, -(-total // BATCHES))
    for start in range(0, total, step):
        progress(start / max(total, 1), f"{what}: {start:,} of {total:,} done")
        launch(start, min(total, start + step))
    progress(1.0, f"{what}: {total:,} of {total:,} done")


def dag_counts(dptr: np.ndarray, dadj: np.ndarray, kmax: int, lo_size: int,
               progress: ProgressFn, what: str) -> dict[int, int]:
    """Cliques of sizes 3..kmax in the DAG of out-lists ``(dptr, dadj)`` on the GPU.

    Parameters
    ----------
    dptr, dadj : ndarray
        Sorted out-lists (CSR, int64 offsets, int32 targets) of an acyclic orientation.
    kmax : int
        Largest clique size counted.
    lo_size : int
        Sizes below it are not needed (their branches are pruned).
    progress : ProgressFn
    what : str
        Label for progress messages.

    Returns
    -------
    dict of int to int
        Count per size 3..kmax (exact; 128-bit device totals).

    Raises
    ------
    LimitExceeded
        An out-list longer than 8,192 (the warp bitmaps' width).
    """
    cp = cupy()
    n = dptr.shape[0] - 1
    acc = cp.zeros(2 * (kmax + 2), dtype=cp.uint64)
    outdeg = np.diff(dptr)
    dmax = int(outdeg.max()) if n else 0
    if kmax < 3 or dmax == 0:
        return _wide(acc, range(3, kmax + 1))
    per_lane = next((r for r in CLIQUE_WORDS_PER_LANE if dmax <= 1024 * r), None)
    if per_lane is None:
        raise LimitExceeded(f"an out-degree of {dmax:,} after degeneracy ordering is over the "
                            "GPU clique kernel's 8,192", field="k")
    kernel = _module().get_function(f"clique_count_r{per_lane}")
    row_words = -(-dmax // 32)
    warps = min(_sm_count() * 32, max(1, SCRATCH_BYTES // (dmax * row_words * 4)),
                int(np.count_nonzero(outdeg)))
    warps = -(-warps // (THREADS // 32)) * (THREADS // 32)  # whole blocks: every warp has rows
    scratch = cp.empty(warps * dmax * row_words, dtype=cp.uint32)
    # Heaviest roots first; roots without out-neighbours add nothing.
    order = np.argsort(-outdeg, kind="stable").astype(np.int32)
    order = order[outdeg[order] > 0]
    roots = cp.asarray(order)
    d_ptr, d_adj = cp.asarray(dptr), cp.asarray(dadj)
    counter = cp.zeros(1, dtype=cp.int32)

    def launch(start: int, stop: int) -> None:
        counter.fill(0)
        blocks = -(-min(warps, stop - start) * 32 // THREADS)
        kernel((blocks,), (THREADS,), (d_ptr, d_adj, roots[start:stop], np.int32(stop - start),
                                       np.int32(kmax), np.int32(lo_size), scratch,
                                       np.int32(row_words), np.int32(dmax), counter, acc))

    _batched(int(order.shape[0]), launch, progress, f"{what}: roots")
    return _wide(acc, range(3, kmax + 1))


def connected_counts(graph: Graph, kmax: int, progress: ProgressFn) -> dict[int, int]:
    """Connected induced sets of sizes 3..kmax on the GPU (one thread per edge item)."""
    cp = cupy()
    acc = cp.zeros(2 * (kmax + 2), dtype=cp.uint64)
    if kmax < 3 or graph.m == 0:
        return _wide(acc, range(3, kmax + 1))
    dg = on_device(graph)
    deg = np.diff(graph.indptr)
    src = np.repeat(np.arange(graph.n, dtype=np.int32), deg)
    arcs = np.flatnonzero(graph.indices > src)
    roots = src[arcs]
    # The pick's position among r's neighbours above r: those are the tail of r's sorted row.
    above = np.bincount(roots, minlength=graph.n)
    first = (arcs - (graph.indptr[roots + 1] - above[roots])).astype(np.int32)
    # Heaviest first: an item's search grows with the degrees around its two vertices.
    order = np.argsort(-(deg[roots] + deg[graph.indices[arcs]]), kind="stable")
    item_root, item_first = cp.asarray(roots[order]), cp.asarray(first[order])
    nitems = int(roots.shape[0])
    cap = kmax * int(deg.max())
    # Whole blocks, so that every launched thread has its list.
    threads = min(_sm_count() * 1024, max(THREADS, SCRATCH_BYTES // (cap * 4) // THREADS * THREADS),
                  -(-nitems // THREADS) * THREADS)
    scratch = cp.empty(threads * cap, dtype=cp.int32)
    counter = cp.zeros(1, dtype=cp.int32)
    kernel = _module().get_function("connected_items")

    def launch(start: int, stop: int) -> None:
        counter.fill(0)
        blocks = -(-min(threads, stop - start) // THREADS)
        kernel((blocks,), (THREADS,), (dg.indptr, dg.indices, item_root[start:stop],
                                       item_first[start:stop], np.int32(stop - start),
                                       np.int32(kmax), scratch, np.int64(cap), counter, acc))

    _batched(nitems, launch, progress, "connected subgraphs: edge items")
    return _wide(acc, range(3, kmax + 1))


def arc_triangles(graph: Graph) -> Any:
    """Device int64 array: triangles through each arc of ``graph``."""
    cp = cupy()
    dg = on_device(graph)
    arcs = graph.indices.shape[0]
    out = cp.zeros(arcs, dtype=cp.int64)
    if arcs:
        src = cp.asarray(np.repeat(np.arange(graph.n, dtype=np.int32), np.diff(graph.indptr)))
        _module().get_function("arc_triangles")(
            (-(-arcs // THREADS),), (THREADS,), (dg.indptr, dg.indices, src, np.int64(arcs), out))
    return out


def four_cycles(ptr: np.ndarray, adj: np.ndarray, split: np.ndarray) -> int:
    """4-cycles of the rank-relabelled graph (see ``counting_cpu.four_cycles``) on the GPU."""
    cp = cupy()
    n = ptr.shape[0] - 1
    acc = cp.zeros(2, dtype=cp.uint64)
    if n == 0:
        return 0
    blocks = min(_sm_count() * 4, max(1, SCRATCH_BYTES // (4 * n)))
    scratch = cp.zeros(blocks * n, dtype=cp.int32)
    counter = cp.zeros(1, dtype=cp.int32)
    _module().get_function("four_cycles")(
        (blocks,), (THREADS,), (cp.asarray(ptr), cp.asarray(adj), cp.asarray(split),
                                np.int32(n), scratch, counter, acc))
    return _wide(acc, range(0, 1))[0]
