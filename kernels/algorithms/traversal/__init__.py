"""Traversal family: breadth-first search and connected components, CPU and GPU side by side.

Both backends return the same answer bit for bit. BFS parents are made deterministic by a rule
rather than by the order of discovery: ``parent[v]`` is the smallest neighbour of ``v`` one level
closer to the source. Components are numbered ``0..count-1`` in order of their smallest internal
node id.

The CPU side is Numba: single-threaded queue sweeps, 3-6x faster than SciPy's csgraph (which first
converts the CSR to float data and int32 offsets). The GPU side is CuPy ``RawKernel`` code from
``kernels/cuda/traversal.cu``, compiled once per process on first use.

With ``prune`` on (or ``auto`` and enough pendants), both backends first remove pendant vertices
round by round, solve on the remaining core and extend the answer to the pruned vertices
(:mod:`graphgpu.kernels.algorithms.common.pruning`); the answer is the same as without pruning,
node for node.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numba
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphgpu.kernels.algorithms.common import pruning
from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    AlgorithmResult,
    ProgressFn,
    register_algorithm,
)

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
#: Vertices per tile when numbering components: roots are ranked within a tile (one block), then
#: a single block scans the tile counts.
CC_TILE = 512


PRUNE_DESCRIPTION = (
    "Remove pendant (degree-1) vertices round by round first, solve on the rest and extend the "
    "answer to them (same answer either way). 'auto' prunes when at least "
    f"{pruning.AUTO_MIN_PENDANT_SHARE:.0%} of the nodes have degree 1.")


class BfsParams(BaseModel):
    """Parameters of ``bfs``: exactly one of ``source`` and ``sources``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"source": 0}, {"sources": [0, 5], "prune": "auto"}]})

    source: int | None = Field(None, description="Original id of the node to start from.")
    sources: list[int] | None = Field(
        None, min_length=1, description="Original ids of several start nodes (multi-source BFS: "
        "levels are distances to the nearest one); instead of `source`.")
    prune: pruning.PruneMode = Field("off", description=PRUNE_DESCRIPTION)

    @model_validator(mode="after")
    def _exactly_one(self) -> BfsParams:
        if (self.source is None) == (self.sources is None):
            raise ValueError("give exactly one of source and sources")
        return self


class BfsSummary(BaseModel):
    """Summary of a ``bfs`` result."""

    source: int | None = Field(description="Original id of the source node (null: `sources`).")
    sources: int | None = Field(None, description="Number of distinct sources (multi-source).")
    reached: int = Field(description="Nodes reached, the sources included.")
    max_level: int = Field(description="Largest level: the source's eccentricity in its component.")
    pruned: int | None = Field(None, description="Vertices pruned (absent when prune is off).")
    prune_rounds: int | None = Field(None, description="Pruning rounds (absent when off).")


class ComponentsParams(BaseModel):
    """Parameters of ``connected_components``."""

    model_config = ConfigDict(extra="forbid")

    prune: pruning.PruneMode = Field("off", description=PRUNE_DESCRIPTION)


class ComponentsSummary(BaseModel):
    """Summary of a ``connected_components`` result."""

    count: int = Field(description="Number of connected components.")
    largest: int = Field(description="Nodes in the largest component.")
    isolated: int = Field(description="Components of a single node.")
    pruned: int | None = Field(None, description="Vertices pruned (absent when prune is off).")
    prune_rounds: int | None = Field(None, description="Pruning rounds (absent when off).")


# ------------------------------------------------------------------------------------------------
# CPU
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _bfs_levels_numba(indptr: np.ndarray, indices: np.ndarray, sources: np.ndarray,
                      n: int) -> np.ndarray:
    level = np.full(n, -1, np.int32)
    queue = np.empty(n, np.int32)
    tail = 0
    for s in sources:
        level[s] = 0
        queue[tail] = s
        tail += 1
    head = 0
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
                       sources: np.ndarray) -> np.ndarray:
    parent = np.full(level.shape[0], -1, np.int64)
    for v in range(level.shape[0]):
        wanted = level[v] - 1
        if wanted >= 0:
            # Rows are sorted ascending, so the first neighbour one level up is the smallest.
            for j in range(indptr[v], indptr[v + 1]):
                if level[indices[j]] == wanted:
                    parent[v] = indices[j]
                    break
    for s in sources:
        parent[s] = s
    return parent


def _bfs_csr_cpu(indptr: np.ndarray, indices: np.ndarray, n: int,
                 sources: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    level = _bfs_levels_numba(indptr, indices, sources, n)
    return level, _bfs_parents_numba(indptr, indices, level, sources)


def _sources(graph: Graph, params: BfsParams) -> np.ndarray:
    """Distinct internal ids of the sources, ascending."""
    if params.source is not None:
        return graph.internal_ids(params.source).astype(np.int64)
    try:
        return np.unique(graph.internal_ids(params.sources)).astype(np.int64)
    except InvalidInput as exc:
        raise InvalidInput(str(exc), field="sources") from None


def _bfs(graph: Graph, params: BfsParams, progress: ProgressFn, backend: str
         ) -> AlgorithmResult:
    """The two backends' shared BFS driver: pruning (or not), solve, copy back."""
    sources = _sources(graph, params)
    progress(0.0, "bfs: searching")
    if backend == "cpu":
        xp, solve = np, _bfs_csr_cpu
    else:
        xp = cupy()
        solve = lambda ip, ix, n, s: _bfs_on_device(  # noqa: E731
            DeviceGraph(ip, ix, None, n, int(ix.shape[0]) // 2), s, progress)
    pruned = None
    if pruning.decide(graph, params.prune):
        pruned = pruning.prune(graph, backend, sources)
        level, parent = pruning.bfs_pruned(xp, pruned, graph.n, xp.asarray(sources), solve)
    elif backend == "cpu":
        level, parent = solve(graph.indptr, graph.indices, graph.n, sources)
    else:
        level, parent = _bfs_on_device(on_device(graph), xp.asarray(sources), progress)
    result = _bfs_result(graph, params, sources, xp.asnumpy(level) if backend == "gpu" else level,
                         xp.asnumpy(parent) if backend == "gpu" else parent, pruned)
    progress(1.0, "bfs: done")
    return result


def bfs_cpu(graph: Graph, params: BfsParams, progress: ProgressFn) -> AlgorithmResult:
    """Breadth-first search from ``params.source`` (or ``params.sources``) on the CPU.

    Parameters
    ----------
    graph : Graph
    params : BfsParams
        ``source`` or ``sources`` are original node ids; ``prune`` as :data:`PRUNE_DESCRIPTION`.
    progress : ProgressFn
        Called at start and end; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``level`` (int32, -1 unreachable: the distance to the nearest source) and ``parent``
        (int64 internal ids, -1 unreachable, sources their own parent) per node; summary per
        :class:`BfsSummary`.
    """
    return _bfs(graph, params, progress, "cpu")


def _bfs_result(graph: Graph, params: BfsParams, sources: np.ndarray, level: np.ndarray,
                parent: np.ndarray, pruned: pruning.Pruned | None) -> AlgorithmResult:
    reached = int(np.count_nonzero(level >= 0))
    summary: dict[str, Any] = {"source": params.source}
    if params.sources is not None:
        summary["sources"] = int(sources.shape[0])
    summary.update(reached=reached, max_level=int(level.max()))
    if params.prune != "off":
        summary.update(pruned.summary() if pruned else {"pruned": 0, "prune_rounds": 0})
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
    return _components(graph, params, progress, "cpu")


def _components(graph: Graph, params: ComponentsParams, progress: ProgressFn, backend: str
                ) -> AlgorithmResult:
    """The two backends' shared components driver: pruning (or not), solve, copy back."""
    progress(0.0, "connected_components: labelling")
    if backend == "cpu":
        xp, solve = np, lambda ip, ix, n: _components_numba(ip, ix)
    else:
        xp = cupy()
        solve = lambda ip, ix, n: DeviceComponents(  # noqa: E731
            DeviceGraph(ip, ix, None, n, int(ix.shape[0]) // 2)).run()
    pruned = None
    if pruning.decide(graph, params.prune):
        pruned = pruning.prune(graph, backend, None)
        label, sizes = pruning.components_pruned(xp, pruned, graph.n, solve)
    elif backend == "cpu":
        label, sizes = solve(graph.indptr, graph.indices, graph.n)
    else:
        label, sizes = components_device(graph)
    if backend == "gpu":
        label, sizes = label.get(), sizes.get()
    progress(1.0, "connected_components: done")
    return _components_result(params, label, sizes, pruned)


def _components_result(params: ComponentsParams, label: np.ndarray, sizes: np.ndarray,
                       pruned: pruning.Pruned | None) -> AlgorithmResult:
    summary = {"count": int(sizes.shape[0]), "largest": int(sizes.max()),
               "isolated": int(np.count_nonzero(sizes == 1))}
    if params.prune != "off":
        summary.update(pruned.summary() if pruned else {"pruned": 0, "prune_rounds": 0})
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
    """Direction-optimising BFS on the GPU from one internal id; see :func:`_bfs_on_device`."""
    return _bfs_on_device(on_device(graph), cupy().asarray([source], dtype=np.int64), progress)


def _bfs_on_device(dg: DeviceGraph, sources: Any, progress: ProgressFn) -> tuple[Any, Any]:
    """Direction-optimising BFS on the GPU; returns device ``(level, parent)``.

    Parameters
    ----------
    dg : DeviceGraph
        The graph (or a pruned core) on the device.
    sources : cupy.ndarray of int64
        Distinct internal ids of the sources (level 0, their own parents).
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
    n = dg.n
    i32 = np.int32
    level = cp.full(n, -1, dtype=cp.int32)
    level[sources] = 0
    frontier = cp.empty(n, dtype=cp.int32)
    frontier[:sources.shape[0]] = sources
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

    frontier_size = int(sources.shape[0])
    frontier_arcs = int((dg.indptr[sources + 1] - dg.indptr[sources]).sum())
    unexplored_arcs = 2 * dg.m - frontier_arcs
    reached, depth, bottom, previous_arcs = frontier_size, 0, False, 0
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
                                                           i32(-1), parent, big_queue,
                                                           big_count))
    mod.get_function("bfs_parent_heavy")(full_grid, (HEAVY_THREADS,),
                                         (dg.indptr, dg.indices, level, big_queue, big_count,
                                          parent))
    parent[sources] = sources  # the kernel was told of none (-1): sources are set here
    return level, parent


def bfs_gpu(graph: Graph, params: BfsParams, progress: ProgressFn) -> AlgorithmResult:
    """Breadth-first search on the GPU; same contract and same answer as :func:`bfs_cpu`."""
    return _bfs(graph, params, progress, "gpu")


def components_device(graph: Graph) -> tuple[Any, Any]:
    """ECL-CC connected components of a graph on the GPU; see :class:`DeviceComponents`."""
    return DeviceComponents(on_device(graph)).run()


@cache
def _kernel(name: str) -> Any:
    """One kernel of the compiled module, looked up once (a launch then costs only the launch)."""
    return _module().get_function(name)


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
        self.full_grid = (_sm_count(cp.cuda.Device().id) * 8,)
        self.by_vertex = _blocks(dg.n)

    def init(self) -> None:
        """Point each vertex at its first smaller neighbour; reset the worklist counters."""
        _kernel("cc_init")(self.by_vertex, (THREADS,),
                           (self.dg.indptr, self.dg.indices, self.n, self.nstat, self.counts))

    def compute(self) -> None:
        """Hook every edge once, from its larger endpoint, by degree tier."""
        graph = (self.dg.indptr, self.dg.indices)
        _kernel("cc_compute_thread")(self.by_vertex, (THREADS,),
                                     (*graph, self.n, self.nstat, self.worklist, self.counts))
        _kernel("cc_compute_warp")(self.full_grid, (THREADS,),
                                   (*graph, self.nstat, self.worklist, self.counts))
        _kernel("cc_compute_block")(self.full_grid, (THREADS,),
                                    (*graph, self.n, self.nstat, self.worklist, self.counts))

    def flatten(self) -> None:
        """Point every vertex straight at its root."""
        _kernel("cc_flatten")(self.by_vertex, (THREADS,), (self.n, self.nstat))

    def number(self) -> None:
        """Label each vertex with the rank of its root among all roots (the CPU's numbering)."""
        _kernel("cc_root_ranks")((int(self.tiles),), (CC_TILE,),
                                 (self.n, self.nstat, self.worklist, self.tile_offset))
        _kernel("cc_scan_tiles")((1,), (1024,), (self.tiles, self.tile_offset, self.counts))
        _kernel("cc_label")(self.by_vertex, (THREADS,),
                            (self.n, np.int32(CC_TILE), self.nstat, self.worklist,
                             self.tile_offset, self.counts, self.label, self.component_size))

    def sizes(self) -> None:
        """Count the vertices of each component."""
        _kernel("cc_sizes")(self.by_vertex, (THREADS,), (self.n, self.label, self.component_size))

    def result(self) -> tuple[Any, Any]:
        """Device ``(label, sizes)``: int32 per node, int64 per component (reads the count)."""
        return self.label, self.component_size[:int(self.counts[2])]

    def run(self) -> tuple[Any, Any]:
        """All phases, then :meth:`result`."""
        for phase in self.PHASES:
            getattr(self, phase)()
        return self.result()


def components_gpu(graph: Graph, params: ComponentsParams,
                   progress: ProgressFn) -> AlgorithmResult:
    """Connected components on the GPU; same contract and answer as :func:`components_cpu`."""
    return _components(graph, params, progress, "gpu")


BFS = register_algorithm(Algorithm(
    name="bfs",
    summary="Breadth-first search: level and deterministic parent of every node from one or "
            "more sources.",
    params_model=BfsParams,
    result_model=BfsSummary,
    cpu=bfs_cpu,
    gpu=bfs_gpu,
    node_params=("source", "sources"),
))

CONNECTED_COMPONENTS = register_algorithm(Algorithm(
    name="connected_components",
    summary="Connected components, numbered by smallest member, with their sizes.",
    params_model=ComponentsParams,
    result_model=ComponentsSummary,
    cpu=components_cpu,
    gpu=components_gpu,
))
