"""Traversal on the GPU: direction-optimising BFS and connected components, CuPy ``RawKernel`` code.

Kernels: ``traversal.cu`` (BFS, here) and ``components.cu`` (driven by :mod:`.gpu_components`),
compiled once per process and device by :mod:`graphgpu.kernels.core.cuda`. All state stays on
the device; the host reads back a pair of counters per large BFS level (runs of small levels are
one persistent launch, read back once) and the component count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.traversal import driver
from graphgpu.kernels.algorithms.traversal.gpu_components import (
    DeviceComponents,
    components_device,
)
from graphgpu.kernels.core.cuda import grid_for, kernels, lanes_per_row, sm_count
from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("traversal.cu")

#: Direction-optimising BFS thresholds (Beamer et al., SC 2012): go bottom-up when the frontier's
#: arcs exceed the unexplored arcs / ALPHA, back to top-down when the frontier has fewer than
#: n / BETA vertices.
ALPHA = 14
BETA = 24
#: Top-down: a frontier vertex whose neighbours would take its lanes more than BIG_ROUNDS rounds
#: is expanded by a whole block instead; one with more than HUGE_DEGREE by the whole grid.
BIG_ROUNDS = 16
HUGE_DEGREE = 1 << 16
THREADS = 256
#: Block size of the kernels that give one block to each heavy (long-row) vertex.
HEAVY_THREADS = 512
#: Persistent BFS (``bfs_persistent``, small frontiers): threads per block (= PERSIST_THREADS of
#: traversal.cu; at most one block per multiprocessor, so that all are resident at once for its
#: grid barrier), frontier arcs per thread up to which it keeps a search to itself, and arcs of
#: the graph per block of its grid (a barrier costs more the more blocks arrive at it).
PERSIST_THREADS = 512
PERSIST_ARCS_PER_THREAD = 16
PERSIST_ARCS_PER_BLOCK = 8192
#: Counters of a frontier being built (traversal.cu's C_WORDS): size, degree sum, hub flag, and
#: the two lists of long rows set aside.
COUNTERS = 5
#: ``bfs_persistent``'s control words: three sets of per-depth counters and the barrier's word,
#: then the state it hands back from CTL_STATE on (traversal.cu's CTL_* defines).
CTL_STATE = 3 * COUNTERS + 1
CTL_WORDS = CTL_STATE + 8
BFS_KERNELS = ("bfs_top_down", "bfs_top_down_block", "bfs_top_down_grid", "bfs_bottom_up",
               "bfs_bottom_up_heavy", "bfs_persistent")


def _blocks(threads: int) -> tuple[int]:
    return grid_for(threads, THREADS)


def persist_limit() -> int:
    """Frontier arcs up to which ``bfs_persistent`` keeps expanding levels on the device."""
    return sm_count() * PERSIST_THREADS * PERSIST_ARCS_PER_THREAD


def persist_blocks(arcs: int) -> int:
    """Blocks of ``bfs_persistent``'s grid for a graph of ``arcs`` arcs: one per
    :data:`PERSIST_ARCS_PER_BLOCK`, at least one, at most one per multiprocessor."""
    return max(1, min(sm_count(), -(-arcs // PERSIST_ARCS_PER_BLOCK)))


def _core_graph(indptr: Any, indices: Any, n: int) -> DeviceGraph:
    """A pruned core's CSR as a :class:`DeviceGraph` (no weights)."""
    return DeviceGraph(indptr, indices, None, n, int(indices.shape[0]) // 2)


def bfs_device(graph: Graph, source: int, progress: ProgressFn) -> tuple[Any, Any]:
    """Direction-optimising BFS on the GPU from one internal id; see :func:`bfs_levels_parents`.
    The source goes to the kernel as an argument (no copy to the device)."""
    return _search(on_device(graph), None, int(source), progress)


def bfs_levels_parents(dg: DeviceGraph, sources: Any, progress: ProgressFn,
                       up: DeviceGraph | None = None) -> tuple[Any, Any]:
    """Direction-optimising BFS on the GPU; returns device ``(level, parent)``.

    Parameters
    ----------
    dg : DeviceGraph
        The graph (or a pruned core) on the device.
    sources : cupy.ndarray of int64
        Distinct internal ids of the sources (level 0, their own parents).
    progress : ProgressFn
        Called once per round of the host loop (a level, or a run of small levels).
    up : DeviceGraph, optional
        A directed graph's in-CSR, which bottom-up steps read (default: ``dg``, undirected).
        Top-down steps find a frontier vertex's parent in its out-row, so the parents of a
        directed search are not final: :func:`bfs` recomputes them.

    Returns
    -------
    level, parent : cupy.ndarray
        int32 levels and int64 deterministic parents, as the CPU backend defines them.

    Notes
    -----
    All state stays on the device. Small frontiers (at most :func:`persist_limit` arcs, no hub)
    are expanded by one persistent launch, level after level, that reads nothing back until the
    frontier grows past that or the search ends; larger ones level by level, top-down or
    bottom-up, each level reading back the next frontier's size and degree sum, which the host
    needs to size the next launch and to choose the direction. Parents are found during the
    search (traversal.cu says how), so a search that the persistent launch finishes is one
    launch and one read-back.
    """
    return _search(dg, sources.astype(cupy().int64, copy=False), -1, progress, up)


def _search(dg: DeviceGraph, sources: Any, source: int, progress: ProgressFn,
            up: DeviceGraph | None = None) -> tuple[Any, Any]:
    """:func:`bfs_levels_parents` from device ``sources``, or when None from ``source`` alone."""
    cp = cupy()
    k = kernels(CUDA_SOURCE, BFS_KERNELS)
    n = dg.n
    i32, i64 = np.int32, np.int64
    graph = (dg.indptr, dg.indices)
    rows_in = graph if up is None else (up.indptr, up.indices)  # what bottom-up steps read
    level = cp.empty(n, dtype=cp.int32)  # bfs_persistent's first launch fills both
    parent = cp.empty(n, dtype=cp.int64)
    queues = (cp.empty(n, dtype=cp.int32), cp.empty(n, dtype=cp.int32))
    big_queue = cp.empty(n, dtype=cp.int32)
    ctl = cp.zeros(CTL_WORDS, dtype=cp.uint64)
    counters = None  # the host loop's, made when it first runs
    nsources = 0 if sources is None else int(sources.shape[0])
    persist_grid = (persist_blocks(int(dg.indices.shape[0])),)
    full_grid = (sm_count() * 8,)
    limit = persist_limit()

    def persist(depth: int, size: int, arcs: int, parity: int, start: bool) -> list[int]:
        if not start:
            ctl.data.memset_async(0, ctl.nbytes)  # the first launch has the fresh zeros
        k["bfs_persistent"](persist_grid, (PERSIST_THREADS,), (
            *graph, level, parent, *queues, big_queue, ctl,
            level if sources is None else sources,  # unread when there are none
            i32(start), i32(nsources), i32(source), i32(n), i32(depth), i64(size), i64(arcs),
            i32(parity), i64(limit)))
        return ctl.get()[CTL_STATE:].tolist()  # the one sync of the run

    # depth, frontier size, frontier arcs, hub, parity, arcs expanded, reached, last arcs
    depth, size, arcs, hub, parity, expanded, reached, previous_arcs = persist(0, 0, 0, 0, True)
    unexplored_arcs = int(dg.indices.shape[0]) - expanded - arcs
    reached += max(nsources, 1)
    bottom = False
    # Whether the frontier was found top-down: then its parents are set when it is expanded,
    # top-down, or by the bottom-up step that searches from it (`fix`).
    found_top_down = True
    while size > 0:
        progress(min(0.95, reached / n), f"bfs: level {depth}, {reached} reached")
        # Beamer's switch, with "growing" judged by arcs: near the end of a search the unexplored
        # arcs are few, and bottom-up (a pass over all n vertices) would win on paper every step.
        if not bottom and arcs > max(unexplored_arcs / ALPHA, previous_arcs):
            bottom = True
        elif bottom and size < n / BETA:
            bottom = False
        if not bottom and arcs <= limit and not hub:
            entering = arcs
            depth, size, arcs, hub, parity, expanded, more, previous_arcs = persist(
                depth, size, arcs, parity, False)
            unexplored_arcs -= expanded - entering + arcs
            reached += more
            found_top_down = True
            continue
        if counters is None:
            counters = cp.empty(COUNTERS, dtype=cp.uint64)
        counters.data.memset_async(0, counters.nbytes)
        frontier, following = queues[parity], queues[1 - parity]
        if bottom:
            k["bfs_bottom_up"](_blocks(n), (THREADS,), (
                *rows_in, level, parent, i32(n), following, counters, big_queue, i32(depth),
                i32(found_top_down and depth > 0)))
            k["bfs_bottom_up_heavy"](full_grid, (HEAVY_THREADS,), (
                *rows_in, level, parent, big_queue, following, counters, i32(depth)))
        else:
            group = lanes_per_row(arcs / size)
            k["bfs_top_down"](_blocks(size * group), (THREADS,), (
                *graph, level, parent, frontier, i32(size), following, counters, big_queue,
                i32(n), i32(depth), i32(group), i64(BIG_ROUNDS * group), i64(HUGE_DEGREE)))
            k["bfs_top_down_block"](full_grid, (THREADS,), (
                *graph, level, parent, big_queue, following, counters, i32(depth)))
            k["bfs_top_down_grid"](full_grid, (THREADS,), (
                *graph, level, parent, big_queue, i32(n), following, counters, i32(depth)))
        found_top_down = not bottom
        previous_arcs = arcs
        size, arcs = counters.get()[:2].tolist()  # the one sync per level
        hub = 0  # not tracked level by level: a hub left in a small frontier gets a block
        unexplored_arcs -= arcs
        reached += size
        parity = 1 - parity
        depth += 1
    return level, parent


def bfs(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Breadth-first search on the GPU; same contract and answer as the CPU backend's."""
    return driver.bfs(
        graph, params, progress, cupy(),
        lambda ip, ix, n, s: bfs_levels_parents(_core_graph(ip, ix, n), s, progress),
        lambda oriented, sources: _whole(oriented, sources, progress))


def _whole(graph: Graph, sources: Any, progress: ProgressFn) -> tuple[Any, Any]:
    """BFS of a whole (undirected or oriented directed) graph: its out-rows are followed."""
    if not graph.directed:
        return bfs_levels_parents(on_device(graph), sources, progress)
    cp = cupy()
    up = DeviceGraph(cp.asarray(graph.in_indptr), cp.asarray(graph.in_indices), None, graph.n,
                     graph.m)
    level, _ = bfs_levels_parents(on_device(graph), sources, progress, up)
    return level, driver.directed_parents(cp, up.indptr, up.indices, level, sources)


def connected_components(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Connected components on the GPU; same contract and answer as the CPU backend's."""
    return driver.components(graph, params, progress, cupy(),
                             lambda ip, ix, n: DeviceComponents(_core_graph(ip, ix, n)).run(),
                             lambda: components_device(graph))
