"""Traversal family: breadth-first search and connected components, CPU and GPU side by side.

Both backends return the same answer bit for bit. BFS parents are made deterministic by a rule
rather than by the order of discovery: ``parent[v]`` is the smallest neighbour of ``v`` one level
closer to the source. Components are numbered ``0..count-1`` in order of their smallest internal
node id.

The CPU side is Numba: single-threaded queue sweeps, 3-6x faster than SciPy's csgraph (which first
converts the CSR to float data and int32 offsets). The GPU side is CuPy ``RawKernel`` code from
``kernels/cuda/traversal.cu``, compiled once per process on first use.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numba
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kernels.device import cupy, on_device
from kernels.graph import Graph
from kernels.registry import Algorithm, AlgorithmResult, ProgressFn, register_algorithm

CUDA_SOURCE = Path(__file__).with_name("cuda") / "traversal.cu"

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


class BfsParams(BaseModel):
    """Parameters of ``bfs``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"source": 0}]})

    source: int = Field(description="Original id of the node to start from.")


class BfsSummary(BaseModel):
    """Summary of a ``bfs`` result."""

    source: int = Field(description="Original id of the source node.")
    reached: int = Field(description="Nodes reached, the source included.")
    max_level: int = Field(description="Largest level: the source's eccentricity in its component.")


class ComponentsParams(BaseModel):
    """``connected_components`` takes no parameters."""

    model_config = ConfigDict(extra="forbid")


class ComponentsSummary(BaseModel):
    """Summary of a ``connected_components`` result."""

    count: int = Field(description="Number of connected components.")
    largest: int = Field(description="Nodes in the largest component.")
    isolated: int = Field(description="Components of a single node.")


# ------------------------------------------------------------------------------------------------
# CPU
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _bfs_levels_numba(indptr: np.ndarray, indices: np.ndarray, source: int, n: int) -> np.ndarray:
    level = np.full(n, -1, np.int32)
    queue = np.empty(n, np.int32)
    queue[0] = source
    level[source] = 0
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        next_level = level[u] + 1
        for j in range(indptr[u], indptr[u + 1]):
            w = indices[j]
            if level[w] < 0:
                level[w] = next_level
                queue[tail] = w
                tail += 1
    return level


@numba.njit(cache=True, nogil=True)
def _bfs_parents_numba(indptr: np.ndarray, indices: np.ndarray, level: np.ndarray,
                       source: int) -> np.ndarray:
    parent = np.full(level.shape[0], -1, np.int64)
    for v in range(level.shape[0]):
        wanted = level[v] - 1
        if wanted >= 0:
            # Rows are sorted ascending, so the first neighbour one level up is the smallest.
            for j in range(indptr[v], indptr[v + 1]):
                if level[indices[j]] == wanted:
                    parent[v] = indices[j]
                    break
    parent[source] = source
    return parent


def bfs_cpu(graph: Graph, params: BfsParams, progress: ProgressFn) -> AlgorithmResult:
    """Breadth-first search from ``params.source`` on the CPU.

    Parameters
    ----------
    graph : Graph
    params : BfsParams
        ``source`` is an original node id.
    progress : ProgressFn
        Called at start and end; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``level`` (int32, -1 unreachable) and ``parent`` (int64 internal ids, -1 unreachable, the
        source its own parent) per node; summary per :class:`BfsSummary`.
    """
    source = int(graph.internal_ids(params.source)[0])
    progress(0.0, "bfs: searching")
    level = _bfs_levels_numba(graph.indptr, graph.indices, source, graph.n)
    progress(0.7, "bfs: computing parents")
    parent = _bfs_parents_numba(graph.indptr, graph.indices, level, source)
    progress(1.0, "bfs: done")
    return _bfs_result(params.source, level, parent)


def _bfs_result(source: int, level: np.ndarray, parent: np.ndarray) -> AlgorithmResult:
    reached = int(np.count_nonzero(level >= 0))
    summary = {"source": int(source), "reached": reached, "max_level": int(level.max())}
    return AlgorithmResult(summary=summary, node_values={"level": level, "parent": parent},
                           node_id_fields=("parent",))


@numba.njit(cache=True, nogil=True)
def _components_numba(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Sweeping start vertices in id order numbers components by their smallest member directly.
    n = indptr.shape[0] - 1
    label = np.full(n, -1, np.int32)
    sizes = np.zeros(n, np.int64)
    queue = np.empty(n, np.int32)
    count = 0
    for start in range(n):
        if label[start] >= 0:
            continue
        label[start] = count
        queue[0] = start
        head, tail = 0, 1
        while head < tail:
            u = queue[head]
            head += 1
            for j in range(indptr[u], indptr[u + 1]):
                w = indices[j]
                if label[w] < 0:
                    label[w] = count
                    queue[tail] = w
                    tail += 1
        sizes[count] = tail
        count += 1
    return label, sizes[:count].copy()


def components_cpu(graph: Graph, params: ComponentsParams,
                   progress: ProgressFn) -> AlgorithmResult:
    """Connected components on the CPU (Numba BFS sweep), numbered by smallest member.

    Parameters
    ----------
    graph : Graph
    params : ComponentsParams
    progress : ProgressFn
        Called at start and end; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``label`` (int32) per node, ``sizes`` (int64) per component; summary per
        :class:`ComponentsSummary`.
    """
    progress(0.0, "connected_components: labelling")
    label, sizes = _components_numba(graph.indptr, graph.indices)
    progress(1.0, "connected_components: done")
    return _components_result(label, sizes)


def _components_result(label: np.ndarray, sizes: np.ndarray) -> AlgorithmResult:
    summary = {"count": int(sizes.shape[0]), "largest": int(sizes.max()),
               "isolated": int(np.count_nonzero(sizes == 1))}
    return AlgorithmResult(summary=summary, node_values={"label": label}, arrays={"sizes": sizes})


# ------------------------------------------------------------------------------------------------
# GPU
# ------------------------------------------------------------------------------------------------


@cache
def _module() -> Any:
    """The compiled CUDA module (NVRTC, current device's arch), built once per process."""
    cp = cupy()
    return cp.RawModule(code=CUDA_SOURCE.read_text(), options=("-std=c++17",))


@cache
def _sm_count(device_id: int) -> int:
    return int(cupy().cuda.Device(device_id).attributes["MultiProcessorCount"])


def _blocks(threads: int) -> tuple[int]:
    return (max(1, -(-threads // THREADS)),)


def _group_size(avg_degree: float) -> int:
    """Lanes per frontier vertex: the power of two covering the average degree, 1 to 32."""
    group = 1
    while group < 32 and group < avg_degree:
        group *= 2
    return group


def bfs_device(graph: Graph, source: int, progress: ProgressFn) -> tuple[Any, Any]:
    """Direction-optimising BFS on the GPU; returns device ``(level, parent)``.

    Parameters
    ----------
    graph : Graph
    source : int
        Internal id of the source.
    progress : ProgressFn
        Called once per level.

    Returns
    -------
    level, parent : cupy.ndarray
        int32 levels and int64 deterministic parents, as :func:`bfs_cpu` defines them.

    Notes
    -----
    All state stays on the device; each level reads back one pair of counters (the next
    frontier's size and degree sum), which the host needs to size the next launch and to choose
    between top-down and bottom-up.
    """
    cp = cupy()
    mod = _module()
    dg = on_device(graph)
    n = graph.n
    i32 = np.int32
    level = cp.full(n, -1, dtype=cp.int32)
    level[source] = 0
    frontier = cp.empty(n, dtype=cp.int32)
    frontier[0] = source
    following = cp.empty(n, dtype=cp.int32)
    big_queue = cp.empty(n, dtype=cp.int32)
    big_count = cp.zeros(2, dtype=cp.int32)
    counters = cp.zeros(2, dtype=cp.uint64)
    top_down = mod.get_function("bfs_top_down")
    top_down_block = mod.get_function("bfs_top_down_block")
    top_down_grid = mod.get_function("bfs_top_down_grid")
    bottom_up = mod.get_function("bfs_bottom_up")
    bottom_up_heavy = mod.get_function("bfs_bottom_up_heavy")
    full_grid = (_sm_count(cp.cuda.Device().id) * 8,)

    frontier_size = 1
    frontier_arcs = int(graph.indptr[source + 1] - graph.indptr[source])
    unexplored_arcs = 2 * graph.m - frontier_arcs
    reached, depth, bottom, previous_arcs = 1, 0, False, 0
    while frontier_size > 0:
        progress(min(0.95, reached / n), f"bfs: level {depth}, {reached} reached")
        # Beamer's switch, with "growing" judged by arcs: near the end of a search the unexplored
        # arcs are few, and bottom-up (a pass over all n vertices) would win on paper every step.
        if not bottom and frontier_arcs > max(unexplored_arcs / ALPHA, previous_arcs):
            bottom = True
        elif bottom and frontier_size < n / BETA:
            bottom = False
        counters.data.memset_async(0, counters.nbytes)
        big_count.data.memset_async(0, big_count.nbytes)
        if bottom:
            bottom_up(_blocks(n), (THREADS,), (dg.indptr, dg.indices, level, i32(n), following,
                                               counters, big_queue, big_count, i32(depth)))
            bottom_up_heavy(full_grid, (HEAVY_THREADS,), (dg.indptr, dg.indices, level, big_queue,
                                                          big_count, following, counters,
                                                          i32(depth)))
        else:
            group = _group_size(frontier_arcs / frontier_size)
            top_down(_blocks(frontier_size * group), (THREADS,),
                     (dg.indptr, dg.indices, level, frontier, i32(frontier_size), following,
                      counters, big_queue, big_count, i32(n), i32(depth), i32(group),
                      np.int64(BIG_ROUNDS * group), np.int64(HUGE_DEGREE)))
            top_down_block(full_grid, (THREADS,), (dg.indptr, dg.indices, level, big_queue,
                                                   big_count, following, counters, i32(depth)))
            top_down_grid(full_grid, (THREADS,), (dg.indptr, dg.indices, level, big_queue,
                                                  big_count, i32(n), following, counters,
                                                  i32(depth)))
        previous_arcs = frontier_arcs
        frontier_size, frontier_arcs = (int(x) for x in counters.get())  # the one sync per level
        unexplored_arcs -= frontier_arcs
        reached += frontier_size
        frontier, following = following, frontier
        depth += 1

    parent = cp.empty(n, dtype=cp.int64)
    big_count.data.memset_async(0, big_count.nbytes)
    mod.get_function("bfs_parent")(_blocks(n), (THREADS,), (dg.indptr, dg.indices, level, i32(n),
                                                           i32(source), parent, big_queue,
                                                           big_count))
    mod.get_function("bfs_parent_heavy")(full_grid, (HEAVY_THREADS,),
                                         (dg.indptr, dg.indices, level, big_queue, big_count,
                                          parent))
    return level, parent


def bfs_gpu(graph: Graph, params: BfsParams, progress: ProgressFn) -> AlgorithmResult:
    """Breadth-first search on the GPU; same contract and same answer as :func:`bfs_cpu`."""
    source = int(graph.internal_ids(params.source)[0])
    level, parent = bfs_device(graph, source, progress)
    result = _bfs_result(params.source, level.get(), parent.get())
    progress(1.0, "bfs: done")
    return result


def components_device(graph: Graph) -> tuple[Any, Any]:
    """ECL-CC connected components on the GPU; returns device ``(label, sizes)``.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    label : cupy.ndarray of int32
        Component of each node, components numbered by smallest member.
    sizes : cupy.ndarray of int64
        Nodes per component.
    """
    cp = cupy()
    mod = _module()
    dg = on_device(graph)
    n = np.int32(graph.n)
    nstat = cp.empty(graph.n, dtype=cp.int32)
    worklist = cp.empty(graph.n, dtype=cp.int32)
    counts = cp.empty(2, dtype=cp.int32)
    is_root = cp.empty(graph.n, dtype=cp.int32)
    label = cp.empty(graph.n, dtype=cp.int32)
    full_grid = (_sm_count(cp.cuda.Device().id) * 8,)
    by_vertex = _blocks(graph.n)

    mod.get_function("cc_init")(by_vertex, (THREADS,), (dg.indptr, dg.indices, n, nstat, counts))
    mod.get_function("cc_compute_thread")(by_vertex, (THREADS,),
                                          (dg.indptr, dg.indices, n, nstat, worklist, counts))
    mod.get_function("cc_compute_warp")(full_grid, (THREADS,),
                                        (dg.indptr, dg.indices, nstat, worklist, counts))
    mod.get_function("cc_compute_block")(full_grid, (THREADS,),
                                         (dg.indptr, dg.indices, n, nstat, worklist, counts))
    mod.get_function("cc_finalize")(by_vertex, (THREADS,), (n, nstat, is_root))
    # Roots are the smallest members; numbering roots in id order gives the CPU's numbering.
    root_rank = cp.cumsum(is_root, dtype=cp.int32)
    mod.get_function("cc_label")(by_vertex, (THREADS,), (n, nstat, root_rank, label))
    count = int(root_rank[-1])
    sizes = cp.bincount(label, minlength=count).astype(cp.int64, copy=False)
    return label, sizes


def components_gpu(graph: Graph, params: ComponentsParams,
                   progress: ProgressFn) -> AlgorithmResult:
    """Connected components on the GPU; same contract and answer as :func:`components_cpu`."""
    progress(0.0, "connected_components: labelling")
    label, sizes = components_device(graph)
    result = _components_result(label.get(), sizes.get())
    progress(1.0, "connected_components: done")
    return result


BFS = register_algorithm(Algorithm(
    name="bfs",
    summary="Breadth-first search: level and deterministic parent of every node from a source.",
    params_model=BfsParams,
    result_model=BfsSummary,
    cpu=bfs_cpu,
    gpu=bfs_gpu,
    node_params=("source",),
))

CONNECTED_COMPONENTS = register_algorithm(Algorithm(
    name="connected_components",
    summary="Connected components, numbered by smallest member, with their sizes.",
    params_model=ComponentsParams,
    result_model=ComponentsSummary,
    cpu=components_cpu,
    gpu=components_gpu,
))
