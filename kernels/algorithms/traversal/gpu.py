"""Traversal on the GPU: direction-optimising BFS and ECL-CC components, CuPy ``RawKernel`` code.

Kernels: ``traversal.cu`` (BFS) and ``components.cu`` (ECL-CC), compiled once per process and
device by :mod:`graphgpu.kernels.core.cuda`. All state stays on the device; the host reads back
a pair of counters per large BFS level (runs of small levels are one persistent launch, read back
once) and the component count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.traversal import driver
from graphgpu.kernels.core.cuda import grid_for, kernels, lanes_per_row, sm_count
from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("traversal.cu")
CC_SOURCE = Path(__file__).with_name("components.cu")

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
#: Vertices per tile when numbering components: roots are ranked within a tile (one block), then
#: a single block scans the tile counts.
CC_TILE = 512
#: Persistent BFS (``bfs_persistent``, small frontiers): threads per block (= PERSIST_THREADS of
#: traversal.cu; one block per multiprocessor, so that all are resident at once for its grid
#: barrier), and frontier arcs per thread up to which it keeps a search to itself.
PERSIST_THREADS = 512
PERSIST_ARCS_PER_THREAD = 16
#: ``bfs_persistent``'s control words: three quads of per-depth counters and the barrier's two
#: words, then the state it hands back from CTL_STATE on (traversal.cu's CTL_* defines).
CTL_STATE = 14
CTL_WORDS = CTL_STATE + 8
BFS_KERNELS = ("bfs_top_down", "bfs_top_down_block", "bfs_top_down_grid", "bfs_bottom_up",
               "bfs_bottom_up_heavy", "bfs_parent", "bfs_parent_heavy",
               "bfs_persistent")
CC_KERNELS = ("cc_init", "cc_compute_thread", "cc_compute_warp", "cc_compute_block", "cc_flatten",
              "cc_root_ranks", "cc_scan_tiles", "cc_label", "cc_sizes")


def _blocks(threads: int) -> tuple[int]:
    return grid_for(threads, THREADS)


def persist_limit() -> int:
    """Frontier arcs up to which ``bfs_persistent`` keeps expanding levels on the device."""
    return sm_count() * PERSIST_THREADS * PERSIST_ARCS_PER_THREAD


def _core_graph(indptr: Any, indices: Any, n: int) -> DeviceGraph:
    """A pruned core's CSR as a :class:`DeviceGraph` (no weights)."""
    return DeviceGraph(indptr, indices, None, n, int(indices.shape[0]) // 2)


def bfs_device(graph: Graph, source: int, progress: ProgressFn) -> tuple[Any, Any]:
    """Direction-optimising BFS on the GPU from one internal id; see :func:`bfs_levels_parents`."""
    return bfs_levels_parents(on_device(graph), cupy().asarray([source], dtype=np.int64),
                              progress)


def bfs_levels_parents(dg: DeviceGraph, sources: Any, progress: ProgressFn) -> tuple[Any, Any]:
    """Direction-optimising BFS on the GPU; returns device ``(level, parent)``.

    Parameters
    ----------
    dg : DeviceGraph
        The graph (or a pruned core) on the device.
    sources : cupy.ndarray of int64
        Distinct internal ids of the sources (level 0, their own parents).
    progress : ProgressFn
        Called once per round of the host loop (a level, or a run of small levels).

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
    needs to size the next launch and to choose the direction.
    """
    cp = cupy()
    k = kernels(CUDA_SOURCE, BFS_KERNELS)
    n = dg.n
    i32, i64 = np.int32, np.int64
    sources = sources.astype(cp.int64, copy=False)
    level = cp.empty(n, dtype=cp.int32)  # bfs_persistent's first launch fills it
    queues = (cp.empty(n, dtype=cp.int32), cp.empty(n, dtype=cp.int32))
    big_queue = cp.empty(n, dtype=cp.int32)
    big_count = cp.zeros(2, dtype=cp.int32)
    counters = cp.zeros(2, dtype=cp.uint64)
    ctl = cp.zeros(CTL_WORDS, dtype=cp.uint64)
    top_down, top_down_block, top_down_grid = (
        k["bfs_top_down"], k["bfs_top_down_block"], k["bfs_top_down_grid"])
    bottom_up, bottom_up_heavy = k["bfs_bottom_up"], k["bfs_bottom_up_heavy"]
    full_grid = (sm_count() * 8,)
    # A full grid even for small graphs: a single block took 0.29 ms on a 5k-node graph, its
    # threads walking the rows of a level one after another; a barrier's arrivals cost little.
    persist_grid = (sm_count(),)
    limit = persist_limit()

    def persist(depth: int, size: int, arcs: int, parity: int, start: bool) -> list[int]:
        ctl.data.memset_async(0, ctl.nbytes)
        k["bfs_persistent"](persist_grid, (PERSIST_THREADS,), (
            dg.indptr, dg.indices, level, *queues, big_queue, ctl, sources,
            i32(sources.shape[0] if start else 0), i32(n), i32(depth), i64(size), i64(arcs),
            i32(parity), i64(limit)))
        return [int(x) for x in ctl[CTL_STATE:].get()]  # the one sync of the run

    # depth, frontier size, frontier arcs, hub, parity, arcs expanded, reached, last arcs
    depth, size, arcs, hub, parity, expanded, reached, previous_arcs = persist(0, 0, 0, 0, True)
    unexplored_arcs = 2 * dg.m - expanded - arcs
    reached += int(sources.shape[0])
    bottom = False
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
            continue
        frontier, following = queues[parity], queues[1 - parity]
        counters.data.memset_async(0, counters.nbytes)
        big_count.data.memset_async(0, big_count.nbytes)
        if bottom:
            bottom_up(_blocks(n), (THREADS,), (dg.indptr, dg.indices, level, i32(n), following,
                                               counters, big_queue, big_count, i32(depth)))
            bottom_up_heavy(full_grid, (HEAVY_THREADS,), (dg.indptr, dg.indices, level, big_queue,
                                                          big_count, following, counters,
                                                          i32(depth)))
        else:
            group = lanes_per_row(arcs / size)
            top_down(_blocks(size * group), (THREADS,),
                     (dg.indptr, dg.indices, level, frontier, i32(size), following,
                      counters, big_queue, big_count, i32(n), i32(depth), i32(group),
                      np.int64(BIG_ROUNDS * group), np.int64(HUGE_DEGREE)))
            top_down_block(full_grid, (THREADS,), (dg.indptr, dg.indices, level, big_queue,
                                                   big_count, following, counters, i32(depth)))
            top_down_grid(full_grid, (THREADS,), (dg.indptr, dg.indices, level, big_queue,
                                                  big_count, i32(n), following, counters,
                                                  i32(depth)))
        previous_arcs = arcs
        size, arcs = (int(x) for x in counters.get())  # the one sync per level
        hub = 0  # not tracked level by level: a hub left in a small frontier gets a block
        unexplored_arcs -= arcs
        reached += size
        parity = 1 - parity
        depth += 1

    parent = cp.empty(n, dtype=cp.int64)
    big_count.data.memset_async(0, big_count.nbytes)
    k["bfs_parent"](_blocks(n), (THREADS,), (dg.indptr, dg.indices, level, i32(n), i32(-1),
                                             parent, big_queue, big_count))
    k["bfs_parent_heavy"](full_grid, (HEAVY_THREADS,), (dg.indptr, dg.indices, level, big_queue,
                                                       big_count, parent))
    parent[sources] = sources  # the kernel was told of none (-1): sources are set here
    return level, parent


class DeviceComponents:
    """One ECL-CC connected-components run on the GPU, phase by phase.

    Each phase is a method that only queues kernels (none waits for the host), so the bench can
    time them one by one with CUDA events; :meth:`run` calls them in order and :meth:`result`
    reads the component count back, the only host sync.

    * ``init``: every vertex points at its first smaller neighbour, or itself.
    * ``compute``: hooking with intermediate pointer jumping, by degree tier (thread, warp,
      block per vertex: three launches).
    * ``flatten``: every vertex points at its root, the smallest member of its component.
    * ``number``: components numbered by root id, i.e. by smallest member: root ranks within
      tiles of :data:`CC_TILE` vertices, one single-block scan of the tile counts, a gather.
    * ``sizes``: vertices per component (warp-aggregated atomics).

    The first three are ECL-CC's kernels (Jaiganesh & Burtscher, HPDC 2018) and what its
    published times cover.

    Parameters
    ----------
    dg : DeviceGraph
        The graph (or a pruned core) on the device.
    """

    PHASES = ("init", "compute", "flatten", "number", "sizes")

    def __init__(self, dg: DeviceGraph) -> None:
        cp = cupy()
        self.dg = dg
        self.n = np.int32(dg.n)
        self.nstat = cp.empty(dg.n, dtype=cp.int32)
        # The tiers' worklist while hooking; afterwards each root's rank within its tile.
        self.worklist = cp.empty(dg.n, dtype=cp.int32)
        # Medium tier length, high tier start, component count.
        self.counts = cp.empty(3, dtype=cp.int32)
        self.tiles = np.int32(max(1, -(-dg.n // CC_TILE)))
        self.tile_offset = cp.empty(int(self.tiles), dtype=cp.int32)
        self.label = cp.empty(dg.n, dtype=cp.int32)
        # Only the first `count` entries are used (zeroed by the numbering's last kernel).
        self.component_size = cp.empty(dg.n, dtype=cp.int64)
        self.full_grid = (sm_count() * 8,)
        self.by_vertex = _blocks(dg.n)
        # Looked up once: a phase then costs only its launches.
        self.k = kernels(CC_SOURCE, CC_KERNELS)

    def init(self) -> None:
        """Point each vertex at its first smaller neighbour; reset the worklist counters."""
        self.k["cc_init"](self.by_vertex, (THREADS,),
                          (self.dg.indptr, self.dg.indices, self.n, self.nstat, self.counts))

    def compute(self) -> None:
        """Hook every edge once, from its larger endpoint, by degree tier."""
        graph = (self.dg.indptr, self.dg.indices)
        self.k["cc_compute_thread"](self.by_vertex, (THREADS,),
                                    (*graph, self.n, self.nstat, self.worklist, self.counts))
        self.k["cc_compute_warp"](self.full_grid, (THREADS,),
                                  (*graph, self.nstat, self.worklist, self.counts))
        self.k["cc_compute_block"](self.full_grid, (THREADS,),
                                   (*graph, self.n, self.nstat, self.worklist, self.counts))

    def flatten(self) -> None:
        """Point every vertex straight at its root."""
        self.k["cc_flatten"](self.by_vertex, (THREADS,), (self.n, self.nstat))

    def number(self) -> None:
        """Label each vertex with the rank of its root among all roots (the CPU's numbering)."""
        self.k["cc_root_ranks"]((int(self.tiles),), (CC_TILE,),
                                (self.n, self.nstat, self.worklist, self.tile_offset))
        self.k["cc_scan_tiles"]((1,), (1024,), (self.tiles, self.tile_offset, self.counts))
        self.k["cc_label"](self.by_vertex, (THREADS,),
                           (self.n, np.int32(CC_TILE), self.nstat, self.worklist,
                            self.tile_offset, self.counts, self.label, self.component_size))

    def sizes(self) -> None:
        """Count the vertices of each component."""
        self.k["cc_sizes"](self.by_vertex, (THREADS,), (self.n, self.label, self.component_size))

    def result(self) -> tuple[Any, Any]:
        """Device ``(label, sizes)``: int32 per node, int64 per component (reads the count)."""
        return self.label, self.component_size[:int(self.counts[2])]

    def run(self) -> tuple[Any, Any]:
        """All phases, then :meth:`result`."""
        for phase in self.PHASES:
            getattr(self, phase)()
        return self.result()


def components_device(graph: Graph) -> tuple[Any, Any]:
    """ECL-CC connected components of a graph on the GPU; see :class:`DeviceComponents`."""
    return DeviceComponents(on_device(graph)).run()


def bfs(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Breadth-first search on the GPU; same contract and answer as the CPU backend's."""
    return driver.bfs(
        graph, params, progress, cupy(),
        lambda ip, ix, n, s: bfs_levels_parents(_core_graph(ip, ix, n), s, progress),
        lambda sources: bfs_levels_parents(on_device(graph), sources, progress))


def connected_components(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Connected components on the GPU; same contract and answer as the CPU backend's."""
    return driver.components(graph, params, progress, cupy(),
                             lambda ip, ix, n: DeviceComponents(_core_graph(ip, ix, n)).run(),
                             lambda: components_device(graph))
