"""GPU backend of the counting family (CuPy); the kernels are in ``counting.cu`` beside it.

Work is spread by persistent grids that fetch their next item from a device counter (cliques: a
warp per item, heaviest first; connected sets: a thread per item). Items redistribute skewed work:
clique search nodes with many candidates are split into their children (up to three levels, on
the device: :func:`clique_items`), and the connected-set search is cut at the depth where there
are enough nodes for every thread, the host counting the nodes above
(:func:`graphgpu.kernels.algorithms.counting.esu.connected_items`). Launches go in batches of
items, with a progress report (and a chance to cancel) between batches. Cliques run on the
``(degree, id)``-ordered DAG built on the device (:func:`clique_dag`).

CuPy is imported on first use (:func:`graphgpu.kernels.core.device.cupy`), so this module imports
on machines without it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.common import dag
from graphgpu.kernels.algorithms.counting import driver
from graphgpu.kernels.algorithms.counting.esu import connected_items
from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.cuda import kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.errors import LimitExceeded
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("counting.cu")
#: Lanes of a clique warp hold this many 32-bit words each at most (out-degree <= 1024 * 8): one
#: kernel each, every root going to the narrowest that fits (fewer registers, smaller rows).
CLIQUE_WORDS_PER_LANE = (1, 2, 4, 8)
MAX_OUT_DEGREE = 1024 * CLIQUE_WORDS_PER_LANE[-1]
#: Device scratch the per-warp bitmaps and per-thread ESU lists may take.
SCRATCH_BYTES = 2 << 30
THREADS = 256
#: Launches per run at most (progress granularity).
BATCHES = 32
#: Clique search nodes with this many candidates are split into their children (down to level
#: CLIQUE_DEPTH), so that no warp is left with a giant clique's whole search; the threshold is
#: halved while there are fewer than TARGET_ITEMS items (small graphs, deep searches).
CLIQUE_SPLIT = 32
CLIQUE_DEPTH = 3
#: Work items wanted: enough for every warp/thread of the GPU several times over.
TARGET_ITEMS = 1 << 16
#: The kernels of ``counting.cu``.
NAMES = (*(f"clique_{kind}_r{r}" for kind in ("count", "cut") for r in CLIQUE_WORDS_PER_LANE),
         "connected_items", "arc_triangles", "four_cycles")


def device_totals(acc: Any, sizes: range) -> dict[int, int]:
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


def clique_dag(graph: Graph, xp: Any = None) -> tuple[Any, Any]:
    """The DAG the GPU's clique search runs on: out-lists ``(dptr, dadj)``.

    The ``(degree, id)`` order, built with array passes (on the device; with ``xp=numpy`` on the
    host, for estimates), unless an out-degree would pass :data:`MAX_OUT_DEGREE`; then the
    degeneracy order, which bounds it better
    (:func:`graphgpu.kernels.algorithms.common.dag.bounded_degree_dag`).
    """
    return dag.bounded_degree_dag(graph, MAX_OUT_DEGREE, xp)


def _root_class(outdeg: Any) -> Any:
    """Index into :data:`CLIQUE_WORDS_PER_LANE` of the kernel that fits each out-degree."""
    return sum((outdeg > 1024 * r).astype(outdeg.dtype) for r in CLIQUE_WORDS_PER_LANE[:-1])


def _launch_clique(kind: str, cls: int, d_ptr: Any, d_adj: Any, items: Any, dmax: int,
                   kmax: int, lo_size: int, acc: Any, progress: ProgressFn | None,
                   what: str, *cut_args: Any) -> None:
    """Run ``clique_{kind}`` over ``items`` (roots of out-degree <= ``dmax``, one class)."""
    cp = cupy()
    kernel = kernels(CUDA_SOURCE, NAMES)[f"clique_{kind}_r{CLIQUE_WORDS_PER_LANE[cls]}"]
    nitems = int(items.shape[0])
    row_words = -(-dmax // 32)
    warps = min(sm_count() * 32, max(1, SCRATCH_BYTES // (dmax * row_words * 4)), nitems)
    warps = -(-warps // (THREADS // 32)) * (THREADS // 32)  # whole blocks: every warp has rows
    scratch = cp.empty(warps * dmax * row_words, dtype=cp.uint32)
    counter = cp.zeros(1, dtype=cp.int32)

    def launch(start: int, stop: int) -> None:
        counter.fill(0)
        blocks = -(-min(warps, stop - start) * 32 // THREADS)
        kernel((blocks,), (THREADS,), (d_ptr, d_adj, items[start:stop], np.int32(items.shape[1]),
                                       np.int32(stop - start), np.int32(kmax), np.int32(lo_size),
                                       scratch, np.int32(row_words), np.int32(dmax), counter,
                                       acc, *cut_args))

    if progress is None:
        launch(0, nitems)
    else:
        _batched(nitems, launch, progress, what)


def clique_items(d_ptr: Any, d_adj: Any, kmax: int, lo_size: int, split: int, depth: int,
                 acc: Any) -> Any:
    """Work items of the clique search, cut on the device.

    Roots with fewer than ``split`` out-neighbours are items as they are; the others are cut
    into their children, one level per round down to level ``depth``, by the ``clique_cut``
    kernels (a warp per node cut): a node with ``split`` or more candidates is counted into
    ``acc`` exactly as the search would count it, and its children become the next round's
    nodes.

    Parameters
    ----------
    d_ptr, d_adj : cupy.ndarray
        Device out-lists of the DAG.
    kmax, lo_size : int
        Largest size counted; smallest size needed.
    split, depth : int
        Candidates from which a node is cut; deepest level cut.
    acc : cupy.ndarray
        128-bit totals per size (``2 * (kmax + 2)`` words) the cut nodes are added to.

    Returns
    -------
    cupy.ndarray
        int32 rows ``(root, weight, p_1, ..., p_depth)`` (``-1`` padded): a search node by its
        root and the local indices it chose, ``weight`` its candidates.
    """
    cp = cupy()
    outdeg = cp.diff(d_ptr)
    roots = cp.flatnonzero((outdeg > 0) & (outdeg + 1 >= lo_size)).astype(cp.int32)
    level = cp.full((roots.shape[0], depth + 2), -1, dtype=cp.int32)
    level[:, 0] = roots
    level[:, 1] = outdeg[roots]
    parts = []
    for t in range(depth):
        cut = level[:, 1] >= split
        parts.append(level[~cut])
        level = _children(d_ptr, d_adj, outdeg, level[cut], kmax, lo_size, split, t + 1, acc)
    return cp.concatenate([*parts, level])


def _children(d_ptr: Any, d_adj: Any, outdeg: Any, items: Any, kmax: int, lo_size: int,
              split: int, depth: int, acc: Any) -> Any:
    """The children (at level ``depth``) of ``items``, nodes of ``split`` or more candidates at
    level ``depth - 1``, which are counted into ``acc``."""
    cp = cupy()
    cols = items.shape[1]
    classes = _root_class(outdeg[items[:, 0]])
    parts = [cp.empty((0, cols), dtype=cp.int32)]
    for cls in range(len(CLIQUE_WORDS_PER_LANE)):
        mine = items[classes == cls]
        if mine.shape[0] == 0:
            continue
        cap = int(mine[:, 1].sum(dtype=cp.int64))  # a child per candidate at most
        out = cp.empty((cap, cols), dtype=cp.int32)
        found = cp.zeros(1, dtype=cp.int32)
        _launch_clique("cut", cls, d_ptr, d_adj, mine, int(outdeg[mine[:, 0]].max()), kmax,
                       lo_size, acc, None, "", np.int32(split), np.int32(depth), out,
                       np.int32(cols), np.int32(cap), found)
        parts.append(out[:int(found.get()[0])])
    return cp.concatenate(parts)


def dag_counts(dptr: Any, dadj: Any, kmax: int, lo_size: int, progress: ProgressFn,
               what: str) -> dict[int, int]:
    """Cliques of sizes 3..kmax in the DAG of out-lists ``(dptr, dadj)`` on the GPU.

    Parameters
    ----------
    dptr, dadj : ndarray or cupy.ndarray
        Sorted out-lists (CSR, int64 offsets, int32 targets) of an acyclic orientation, on the
        host or the device.
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
    d_ptr, d_adj = cp.asarray(dptr), cp.asarray(dadj)
    acc = cp.zeros(2 * (kmax + 2), dtype=cp.uint64)
    outdeg = cp.diff(d_ptr)
    dmax = int(outdeg.max()) if outdeg.shape[0] else 0
    if kmax < 3 or dmax == 0:
        return device_totals(acc, range(3, kmax + 1))
    if dmax > MAX_OUT_DEGREE:
        raise LimitExceeded(f"an out-degree of {dmax:,} after ordering is over the GPU clique "
                            f"kernel's {MAX_OUT_DEGREE:,}", field="k")
    # Nodes at level kmax - 2 only count their candidates: cutting there would buy nothing.
    depth, split = min(CLIQUE_DEPTH, kmax - 3), CLIQUE_SPLIT
    progress(0.0, f"{what}: cutting work items")
    while True:
        acc.fill(0)
        items = clique_items(d_ptr, d_adj, kmax, lo_size, split, depth, acc)
        if items.shape[0] >= TARGET_ITEMS or split == 1 or depth == 0:
            break
        split //= 2
    # Kernel class (words per lane) first, the heaviest items of a class first.
    classes = _root_class(outdeg[items[:, 0]])
    order = cp.argsort((classes.astype(cp.int64) << 32) + items[:, 1])[::-1]
    items = items[order]
    sizes = reductions.bincount(classes, len(CLIQUE_WORDS_PER_LANE)).get()
    stop, stop_all = 0, int(items.shape[0])
    for cls in reversed(range(len(CLIQUE_WORDS_PER_LANE))):
        start, stop = stop, stop + int(sizes[cls])
        if start == stop:
            continue
        mine = items[start:stop]

        def overall(fraction: float, message: str, start: int = start, stop: int = stop) -> None:
            progress((start + fraction * (stop - start)) / stop_all, message)

        _launch_clique("count", cls, d_ptr, d_adj, mine, int(outdeg[mine[:, 0]].max()), kmax,
                       lo_size, acc, overall, f"{what}: work items")
    return device_totals(acc, range(3, kmax + 1))


def connected_counts(graph: Graph, kmax: int, progress: ProgressFn) -> dict[int, int]:
    """Connected induced sets of sizes 3..kmax on the GPU (one thread per search-node item)."""
    cp = cupy()
    acc = cp.zeros(2 * (kmax + 2), dtype=cp.uint64)
    if kmax < 3 or graph.m == 0:
        return device_totals(acc, range(3, kmax + 1))
    dg = on_device(graph)
    # Cut deeper (the host searching the levels above) until there are items for every thread.
    depth = 0
    while True:
        depth += 1
        lo, hi = np.zeros(kmax + 2, np.int64), np.zeros(kmax + 2, np.int64)
        items = connected_items(graph.indptr, graph.indices, kmax, depth, lo, hi)
        if items.shape[0] >= TARGET_ITEMS or depth + 1 > kmax - 2:
            break
    nitems = int(items.shape[0])
    cap = kmax * int(np.diff(graph.indptr).max())
    # Whole blocks, so that every launched thread has its list.
    threads = min(sm_count() * 1024, max(THREADS, SCRATCH_BYTES // (cap * 4) // THREADS * THREADS),
                  -(-nitems // THREADS) * THREADS)
    scratch = cp.empty(threads * cap, dtype=cp.int32)
    d_items = cp.asarray(items)
    counter = cp.zeros(1, dtype=cp.int32)
    kernel = kernels(CUDA_SOURCE, NAMES)["connected_items"]

    def launch(start: int, stop: int) -> None:
        counter.fill(0)
        blocks = -(-min(threads, stop - start) // THREADS)
        kernel((blocks,), (THREADS,), (dg.indptr, dg.indices, d_items[start:stop],
                                       np.int32(depth), np.int32(stop - start), np.int32(kmax),
                                       scratch, np.int64(cap), counter, acc))

    _batched(nitems, launch, progress, f"connected subgraphs: items of size {depth + 1}")
    host = driver.wide_totals(lo, hi)
    return {s: c + host[s] for s, c in device_totals(acc, range(3, kmax + 1)).items()}


def arc_triangles(graph: Graph) -> Any:
    """Device int64 array: triangles through each arc of ``graph``."""
    cp = cupy()
    dg = on_device(graph)
    arcs = graph.indices.shape[0]
    out = cp.zeros(arcs, dtype=cp.int64)
    if arcs:
        src = cp.asarray(np.repeat(np.arange(graph.n, dtype=np.int32), np.diff(graph.indptr)))
        kernels(CUDA_SOURCE, NAMES)["arc_triangles"](
            (-(-arcs // THREADS),), (THREADS,), (dg.indptr, dg.indices, src, np.int64(arcs), out))
    return out


def four_cycles(ptr: np.ndarray, adj: np.ndarray, split: np.ndarray) -> int:
    """4-cycles of the rank-relabelled graph on the GPU (as
    :func:`graphgpu.kernels.algorithms.counting.cpu.four_cycles`)."""
    cp = cupy()
    n = ptr.shape[0] - 1
    acc = cp.zeros(2, dtype=cp.uint64)
    if n == 0:
        return 0
    blocks = min(sm_count() * 4, max(1, SCRATCH_BYTES // (4 * n)))
    scratch = cp.zeros(blocks * n, dtype=cp.int32)
    counter = cp.zeros(1, dtype=cp.int32)
    kernels(CUDA_SOURCE, NAMES)["four_cycles"](
        (blocks,), (THREADS,), (cp.asarray(ptr), cp.asarray(adj), cp.asarray(split),
                                np.int32(n), scratch, counter, acc))
    return device_totals(acc, range(0, 1))[0]


#: The GPU's pieces of the shared runs (CuPy is imported when a run first needs it).
OPS = driver.Ops(array_module=cupy, clique_dag=clique_dag, dag_counts=dag_counts,
               connected_counts=connected_counts, arc_triangles=arc_triangles,
               four_cycles=four_cycles)


def cliques_gpu(graph: Graph, params: driver.SizeParams, progress: ProgressFn) -> AlgorithmResult:
    """``count_cliques`` on the GPU (a warp per work item); the CPU's answer, exactly."""
    return driver.run_cliques(graph, params, progress, OPS)


def connected_gpu(graph: Graph, params: driver.SizeParams, progress: ProgressFn
                  ) -> AlgorithmResult:
    """``count_connected_subgraphs`` on the GPU (a thread per search-node item)."""
    return driver.run_connected(graph, params, progress, OPS)


def independent_gpu(graph: Graph, params: driver.RegimeParams, progress: ProgressFn
                    ) -> AlgorithmResult:
    """``count_independent_sets`` on the GPU: every local count on the device, or the clique
    kernels on the complement."""
    return driver.run_independent(graph, params, progress, OPS)
