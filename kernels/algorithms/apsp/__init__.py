"""All-pairs shortest paths: the n x n distance matrix, CPU and GPU with the same answer.

Three methods, picked from the graph alone (so both backends, and pruning on or off, use the
same one):

* ``bfs`` (unweighted graph, or ``weighted=false``): hop counts, int32, ``-1`` unreachable.
  CPU: one Numba BFS per source, sources in parallel. GPU: the bit-parallel multi-source BFS of
  :mod:`graphgpu.kernels.algorithms.centrality` (64 sources per machine word, pull levels that skip
  nodes every
  source of a word has reached), its kernels reused; ``apsp_bfs_level`` writes each level's new
  bits into the rows of their sources.
* ``floyd_warshall`` (weighted, dense: average degree >= n / :data:`FW_DEGREE_RATIO`): blocked
  Floyd-Warshall in :data:`TILE`-wide blocks, three phases per block row (pivot block, its row
  and column panels, then every other block as a min-plus product in shared memory on the GPU).
  Each update is one rounded addition and an exact minimum, and the CPU (Numba) follows the same
  block schedule, so the two backends agree bit for bit.
* ``sssp`` (weighted, sparse): Dijkstra from every source on the CPU (the ``sssp`` kernel),
  batched Bellman-Ford on the GPU (one thread per (node, source), sources contiguous, in place
  until a sweep changes nothing). Both compute, per source, the smallest over paths of the path's
  weights added left to right in the dtype (the least fixpoint; see
  :mod:`graphgpu.kernels.algorithms.sssp`), so
  they agree bit for bit.

Weighted distances are ``dtype`` (float32 or float64), ``inf`` unreachable; weights are cast to
the dtype first. Row ``i`` holds the distances from node ``i`` (internal ids, ascending original
ids).

Pruning (the paper's Phase I-III for APSP): pendant vertices are peeled round by round
(:mod:`graphgpu.kernels.algorithms.common.pruning`), the core is solved, and Phase III fills the
pruned vertices' rows and
columns, latest round first: a vertex ``p`` removed towards ``w`` over an edge of weight ``h``
(1 for hop counts) has ``dist(p, x) = h + dist(w, x)`` and ``dist(x, p) = dist(x, w) + h`` for
every ``x`` filled before it (the core and later rounds: none of them is in ``p``'s pendant
tree, so their paths to ``p`` go through ``w``). Nodes of ``p``'s own tree come later and fill
their entries towards ``p`` the same way, so tree distances come out right too. For hop counts
and for weights whose sums are exact in the dtype (e.g. integers below 2**24 in float32) the
result is identical with and without pruning; for other float weights the sums are associated
differently and agree to rounding. Both backends run the same Phase III, so they agree exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numba
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.centrality import _last_mask, batch_words
from graphgpu.kernels.algorithms.centrality import _module as _centrality_module
from graphgpu.kernels.algorithms.common import pruning
from graphgpu.kernels.algorithms.sssp import _dijkstra_numba
from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    AlgorithmResult,
    Estimate,
    ProgressFn,
    register_algorithm,
)

CUDA_SOURCE = Path(__file__).with_name("apsp.cu")
THREADS = 256
#: Floyd-Warshall block width (the CUDA kernels' TILE).
TILE = 64
#: ``auto`` uses Floyd-Warshall when the average degree is at least n / FW_DEGREE_RATIO: its
#: n**3 min-plus steps then cost less than ~20 Bellman-Ford sweeps of n * 2m relaxations each
#: (an H100 does both at roughly 1e13 and 5e11 per second).
FW_DEGREE_RATIO = 400
#: ``auto`` prunes Floyd-Warshall runs when at least this share of the nodes has degree 1: its
#: n**3 work shrinks with the cube of the core, while Phase III costs two gathers of length n
#: per pruned vertex. The BFS and Bellman-Ford methods prune only at the traversal family's
#: share (:data:`graphgpu.kernels.algorithms.common.pruning.AUTO_MIN_PENDANT_SHARE`): they are
#: cheap enough that filling
#: the matrix in Phase III costs as much as it saves (H100, bench/results/traversal.md,
#: ca-CondMat with 9.5% pruned: Floyd-Warshall 2.80 s -> 2.35 s pruned, Bellman-Ford 0.91 s
#: vs 0.88 s, hop counts 0.80 s -> 0.94 s).
AUTO_MIN_PENDANT_SHARE = 0.05
#: Memory bound of the GPU's working sets (bit sets of a BFS batch, Bellman-Ford batch).
BATCH_BYTES = 1 << 30
#: Rough rates of the cost estimate (operations per second; the CPU's per thread).
RATES = {"gpu": {"bfs": 1e11, "floyd_warshall": 1e13, "sssp": 5e11, "write": 5e11},
         "cpu": {"bfs": 2e8, "floyd_warshall": 1e9, "sssp": 3e7, "write": 1e9}}

Method = Literal["bfs", "floyd_warshall", "sssp"]


class ApspParams(BaseModel):
    """Parameters of ``apsp``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"prune": "auto"}, {"weighted": True, "dtype": "float32",
                                          "method": "floyd_warshall"}]})

    weighted: bool = Field(
        True, description="Use the edge weights when the graph has them (float distances); "
        "false: hop counts (int32) even on a weighted graph.")
    dtype: Literal["float32", "float64"] = Field(
        "float64", description="Precision of weighted distances (weights are cast to it).")
    method: Literal["auto", "floyd_warshall", "sssp"] = Field(
        "auto", description="Weighted method: blocked Floyd-Warshall, or shortest paths from "
        "every source; 'auto' takes Floyd-Warshall when the average degree is at least "
        f"n / {FW_DEGREE_RATIO}. Unweighted distances always use the all-pairs BFS.")
    prune: pruning.PruneMode = Field(
        "auto", description="Remove pendant vertices round by round, solve the rest and fill "
        "their rows and columns from their neighbours' (same distances). 'auto' prunes when at "
        f"least {AUTO_MIN_PENDANT_SHARE:.0%} (Floyd-Warshall) or "
        f"{pruning.AUTO_MIN_PENDANT_SHARE:.0%} (other methods) of the nodes have degree 1.")


class ApspSummary(BaseModel):
    """Summary of an ``apsp`` result (the matrix is the ``distance`` array)."""

    n: int = Field(description="Rows and columns of the distance matrix.")
    method: Method = Field(description="Method used.")
    dtype: str = Field(description="dtype of the distances (int32 hop counts, or float).")
    reachable_pairs: int = Field(description="Ordered pairs (i, j), i != j, at finite distance.")
    diameter: float = Field(description="Largest finite distance (0 with no reachable pair).")
    pruned: int | None = Field(None, description="Vertices pruned (absent when prune is off).")
    prune_rounds: int | None = Field(None, description="Pruning rounds (absent when off).")


@dataclass(frozen=True)
class Plan:
    """What a run will do, decided from the graph and the parameters only."""

    method: Method
    dtype: np.dtype

    @property
    def weighted(self) -> bool:
        return self.method != "bfs"

    @property
    def unreachable(self) -> float:
        return math.inf if self.weighted else -1


def plan(graph: Graph, params: ApspParams) -> Plan:
    """The method and dtype of a run; refuses negative weights (``field="weights"``)."""
    if not (params.weighted and graph.weights is not None):
        return Plan("bfs", np.dtype(np.int32))
    if graph.weights.size and graph.weights.min() < 0:
        raise InvalidInput("apsp needs non-negative weights", field="weights")
    method = params.method
    if method == "auto":
        method = "floyd_warshall" if 2 * graph.m * FW_DEGREE_RATIO >= graph.n ** 2 else "sssp"
    return Plan(method, np.dtype(params.dtype))


def should_prune(graph: Graph, mode: pruning.PruneMode, p: Plan) -> bool:
    """``on``/``off`` as given; ``auto`` from the share of degree-1 nodes and the method."""
    if mode == "auto":
        share = (AUTO_MIN_PENDANT_SHARE if p.method == "floyd_warshall"
                 else pruning.AUTO_MIN_PENDANT_SHARE)
        return pruning.pendant_share(graph) >= share
    return mode == "on"


def estimate(graph: Graph, params: ApspParams, backend: str) -> Estimate:
    """Closed-form cost of a run: the matrix size exactly, time and device memory roughly.

    Time assumes ~20 BFS levels or Bellman-Ford sweeps and ignores pruning (which only saves
    time). Device memory: the matrix twice (the summary's temporaries, or the core's matrix
    beside the whole one when pruning) plus the method's working set and the graph.
    """
    p = plan(graph, params)
    n, arcs = graph.n, 2 * graph.m
    item = p.dtype.itemsize
    matrix = n * n * item
    work = {"bfs": math.ceil(n / 64) * arcs * 20, "floyd_warshall": float(n) ** 3,
            "sssp": n * arcs * (20 if backend == "gpu" else max(1.0, math.log2(max(n, 2))))}
    rates = RATES[backend]
    threads = 1 if backend == "gpu" else numba.get_num_threads()
    seconds = (work[p.method] / rates[p.method] + n * n / rates["write"]) / threads
    extra = {"bfs": 3 * 8 * n * min(math.ceil(n / 64), batch_words(n, BATCH_BYTES)),
             "floyd_warshall": (-(-n // TILE) * TILE) ** 2 * item,
             "sssp": min(matrix, BATCH_BYTES)}[p.method]
    return Estimate(seconds=seconds, result_bytes=matrix + 8 * n,
                    device_bytes=2 * matrix + extra + graph.nbytes() if backend == "gpu"
                    else None,
                    detail=f"{p.method}: {n:,} x {n:,} {p.dtype.name} distances")


# ------------------------------------------------------------------------------------------------
# CPU
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True, parallel=True)
def _bfs_rows(indptr: np.ndarray, indices: np.ndarray, first: int, out: np.ndarray) -> None:
    n = indptr.shape[0] - 1
    for r in numba.prange(out.shape[0]):
        row = out[r]
        row[:] = -1
        queue = np.empty(n, np.int32)
        row[first + r] = 0
        queue[0] = first + r
        head, tail = 0, 1
        while head < tail:
            u = queue[head]
            head += 1
            for j in range(indptr[u], indptr[u + 1]):
                w = indices[j]
                if row[w] < 0:
                    row[w] = row[u] + 1
                    queue[tail] = w
                    tail += 1


@numba.njit(cache=True, nogil=True, parallel=True)
def _dijkstra_rows(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray, first: int,
                   out: np.ndarray) -> None:
    for r in numba.prange(out.shape[0]):
        out[r] = _dijkstra_numba(indptr, indices, weight, first + r)


@numba.njit(cache=True, nogil=True)
def _closure(d: np.ndarray, i0: int, i1: int, j0: int, j1: int, k0: int, k1: int) -> None:
    # One k at a time, as the GPU's steps between barriers: step k never changes row k or column
    # k (their diagonal entry is 0), so the loop order inside a step does not matter.
    for k in range(k0, k1):
        for i in range(i0, i1):
            aik = d[i, k]
            for j in range(j0, j1):
                cand = aik + d[k, j]
                if cand < d[i, j]:
                    d[i, j] = cand


@numba.njit(cache=True, nogil=True, parallel=True)
def _fw_round(d: np.ndarray, kb: int, tile: int) -> None:
    n = d.shape[0]
    blocks = (n + tile - 1) // tile
    k0, k1 = kb * tile, min(n, kb * tile + tile)
    _closure(d, k0, k1, k0, k1, k0, k1)
    for o in numba.prange(blocks - 1):
        ob = o if o < kb else o + 1
        o0, o1 = ob * tile, min(n, ob * tile + tile)
        _closure(d, k0, k1, o0, o1, k0, k1)  # pivot row panel
        _closure(d, o0, o1, k0, k1, k0, k1)  # pivot column panel
    for o in numba.prange(blocks - 1):
        ob = o if o < kb else o + 1
        for i in range(ob * tile, min(n, ob * tile + tile)):
            row = d[i]
            for k in range(k0, k1):
                aik = row[k]
                if aik == np.inf:
                    continue
                pivot = d[k]
                # Both sides of the pivot column panel, which is final for this round.
                for j in range(k0):
                    row[j] = min(row[j], aik + pivot[j])
                for j in range(k1, n):
                    row[j] = min(row[j], aik + pivot[j])


def _chunks(n: int) -> range:
    """Starts of the source chunks between progress reports (about 16)."""
    return range(0, n, max(64, -(-n // 16)))


def _solve_cpu(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray | None, n: int,
               p: Plan, progress: ProgressFn) -> np.ndarray:
    """Distance matrix of a CSR graph on the CPU."""
    if p.method == "floyd_warshall":
        d = _initial_matrix(np, indptr, indices, weight, n, p)
        blocks = -(-n // TILE)
        for kb in range(blocks):
            if kb % max(1, blocks // 16) == 0:
                progress(kb / blocks, f"apsp: Floyd-Warshall block row {kb} of {blocks}")
            _fw_round(d, kb, TILE)
        return d
    d = np.empty((n, n), dtype=p.dtype)
    for first in _chunks(n):
        progress(first / max(n, 1), f"apsp: sources {first} of {n}")
        rows = d[first:first + max(64, -(-n // 16))]
        if p.method == "bfs":
            _bfs_rows(indptr, indices, first, rows)
        else:
            _dijkstra_rows(indptr, indices, weight, first, rows)
    return d


def _arc_rows(xp: Any, indptr: Any, indices: Any) -> Any:
    """Row (source node) of every arc of a CSR."""
    return xp.searchsorted(indptr, xp.arange(indices.shape[0], dtype=indptr.dtype),
                           side="right") - 1


def _initial_matrix(xp: Any, indptr: Any, indices: Any, weight: Any, n: int, p: Plan,
                    size: int | None = None) -> Any:
    """``size`` x ``size`` (default n) matrix: 0 diagonal, arc weights, inf elsewhere."""
    size = size or n
    d = xp.full((size, size), xp.inf, dtype=p.dtype)
    d[_arc_rows(xp, indptr, indices), indices] = weight
    diagonal = xp.arange(size)
    d[diagonal, diagonal] = 0
    return d


# ------------------------------------------------------------------------------------------------
# GPU
# ------------------------------------------------------------------------------------------------


@cache
def _module() -> Any:
    """The compiled CUDA module (NVRTC, current device's arch), built once per process."""
    return cupy().RawModule(code=CUDA_SOURCE.read_text(), options=("-std=c++17",))


@cache
def _panel_kernel(suffix: str) -> Any:
    """Floyd-Warshall phase 2, allowed its two blocks of dynamic shared memory."""
    kernel = _module().get_function(f"fw_panel_{suffix}")
    kernel.max_dynamic_shared_size_bytes = _panel_smem(np.dtype(suffix))
    return kernel


def _panel_smem(dtype: np.dtype) -> int:
    return 2 * TILE * (TILE + 1) * dtype.itemsize


def _grid(items: int) -> tuple[int]:
    return (max(1, -(-items // THREADS)),)


def bfs_sweep_device(dg: DeviceGraph, dist: Any | None, progress: ProgressFn
                     ) -> tuple[Any, Any]:
    """All-pairs BFS on the GPU, 64 sources per word, batches within :data:`BATCH_BYTES`.

    Parameters
    ----------
    dg : DeviceGraph
    dist : cupy.ndarray of int32, shape (n, n), or None
        Filled with the hop counts (-1 unreachable). None: nothing is stored and each level is
        reduced to per-node sums instead (the same sweep, for graphs whose matrix would not fit).
    progress : ProgressFn
        Called once per batch.

    Returns
    -------
    total : cupy.ndarray of int64
        Per node, the sum of its finite distances (zeros when ``dist`` is given).
    eccentricity : cupy.ndarray of int32
        Per node, its largest finite distance (zeros when ``dist`` is given).
    """
    cp = cupy()
    bits, mine = _centrality_module(), _module()
    n = dg.n
    i32 = np.int32
    per = 64 * min(-(-n // 64), batch_words(n, BATCH_BYTES))
    size = n * -(-min(per, n) // 64)
    visited, frontier, following = (cp.empty(size, cp.uint64) for _ in range(3))
    total, ecc = cp.zeros(n, cp.int64), cp.zeros(n, cp.int32)
    found, unused = cp.zeros(1, cp.int32), cp.zeros(1, cp.uint32)
    nodes = cp.arange(n, dtype=cp.int32)
    write = dist is not None
    if write:
        dist.fill(-1)
        dist[nodes, nodes] = 0
    for start in range(0, n, per):
        progress(start / n, f"apsp: all-pairs BFS, sources {start} of {n}")
        count = min(per, n - start)
        words = -(-count // 64)
        vis, fro, fol = visited[:n * words], frontier[:n * words], following[:n * words]
        vis.fill(0)
        fol.fill(0)
        bits.get_function("ms_seed")(_grid(32 * count), (THREADS,),
                                     (dg.indptr, dg.indices, nodes[start:], i32(count),
                                      i32(words), vis, fol, unused, i32(0)))
        rows = dist[start:] if write else total  # any device array: not read without write
        level = 1
        while True:
            found.fill(0)
            mine.get_function("apsp_bfs_level")(
                _grid(n * words), (THREADS,), (fol, i32(n), i32(words), i32(level), i32(write),
                                               rows, np.int64(n), total, ecc, found))
            if not int(found.get()[0]):  # the one sync per level
                break
            fro, fol = fol, fro
            level += 1
            bits.get_function("ms_pull")(_grid(n * words), (THREADS,),
                                         (dg.indptr, dg.indices, i32(n), i32(words),
                                          _last_mask(count), fro, vis, fol, unused, i32(0)))
    return total, ecc


def _floyd_warshall_device(dg: DeviceGraph, weight: Any, p: Plan, progress: ProgressFn) -> Any:
    """Blocked Floyd-Warshall on a matrix padded to whole tiles (padding: isolated nodes)."""
    cp = cupy()
    mod = _module()
    n = dg.n
    blocks = -(-n // TILE)
    size = blocks * TILE
    d = _initial_matrix(cp, dg.indptr, dg.indices, weight, n, p, size)
    suffix = p.dtype.name
    diag, rest = mod.get_function(f"fw_diag_{suffix}"), mod.get_function(f"fw_rest_{suffix}")
    panel = _panel_kernel(suffix)
    stride = np.int64(size)
    for kb in range(blocks):
        if kb % max(1, blocks // 16) == 0:
            progress(kb / blocks, f"apsp: Floyd-Warshall block row {kb} of {blocks}")
        diag((1,), (THREADS,), (d, stride, np.int32(kb)))
        if blocks > 1:
            panel((blocks - 1, 2), (THREADS,), (d, stride, np.int32(kb)),
                  shared_mem=_panel_smem(p.dtype))
            rest((blocks - 1, blocks - 1), (THREADS,), (d, stride, np.int32(kb)))
    return cp.ascontiguousarray(d[:n, :n])


def _bellman_ford_device(dg: DeviceGraph, weight: Any, p: Plan, progress: ProgressFn) -> Any:
    """Shortest paths from every source by batched in-place Bellman-Ford sweeps."""
    cp = cupy()
    n = dg.n
    sweep = _module().get_function(f"apsp_bf_sweep_{p.dtype.name}")
    fit = BATCH_BYTES // (n * p.dtype.itemsize) // 32 * 32
    per = max(32, min(-(-n // 32) * 32, fit))
    work = cp.empty((n, per), dtype=p.dtype)
    changed = cp.zeros(1, cp.int32)
    dist = cp.empty((n, n), dtype=p.dtype)
    for start in range(0, n, per):
        progress(start / n, f"apsp: Bellman-Ford, sources {start} of {n}")
        count = min(per, n - start)
        work.fill(cp.inf)
        work[cp.arange(start, start + count), cp.arange(count)] = 0
        while True:
            changed.fill(0)
            sweep(_grid(n * per), (THREADS,), (dg.indptr, dg.indices, weight, np.int32(n),
                                               np.int32(per), work, changed))
            if not int(changed.get()[0]):
                break
        dist[start:start + count] = work[:, :count].T
    return dist


def _solve_gpu(indptr: Any, indices: Any, weight: Any, n: int, p: Plan,
               progress: ProgressFn) -> Any:
    """Distance matrix of a CSR graph (device arrays) on the GPU."""
    dg = DeviceGraph(indptr, indices, None, n, int(indices.shape[0]) // 2)
    if p.method == "bfs":
        dist = cupy().empty((n, n), dtype=cupy().int32)
        bfs_sweep_device(dg, dist, progress)
        return dist
    if p.method == "floyd_warshall":
        return _floyd_warshall_device(dg, weight, p, progress)
    return _bellman_ford_device(dg, weight, p, progress)


# ------------------------------------------------------------------------------------------------
# Both backends: pruning, Phase III, the result
# ------------------------------------------------------------------------------------------------


def extend_matrix(xp: Any, dist: Any, vertex: Any, neighbour: Any, step: Any,
                  bounds: np.ndarray, unreachable: float) -> None:
    """Phase III for APSP, in place: rows and columns of the pruned vertices, latest round first.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``, where ``dist`` lives.
    dist : array, shape (n, n)
        Filled on the core (and ``unreachable`` between core components); its other entries are
        overwritten.
    vertex, neighbour : array of int
        Pruned vertices and their neighbours at removal, ordered by round.
    step : array
        Length of each pruned vertex's edge to its neighbour, in ``dist``'s dtype.
    bounds : ndarray
        Offsets of each round's slice of ``vertex``.
    unreachable : float
        -1 (hop counts) or inf: it must stay unreachable when a length is added.
    """
    for r in range(len(bounds) - 2, -1, -1):
        sl = slice(int(bounds[r]), int(bounds[r + 1]))
        v, w, h = vertex[sl], neighbour[sl], step[sl]
        rows = dist[w] + h[:, None]
        if unreachable < 0:
            rows[dist[w] < 0] = -1
        dist[v] = rows
        cols = dist[:, w] + h[None, :]  # reads the rows just written: pairs within the round
        if unreachable < 0:
            cols[dist[:, w] < 0] = -1
        dist[:, v] = cols
        dist[v, v] = 0




def _pruned_solve(xp: Any, graph: Graph, backend: str, p: Plan, weight: Any, indptr: Any,
                  indices: Any, solve: Any, progress: ProgressFn) -> tuple[Any, pruning.Pruned]:
    """Phase I, Phase II on the core, Phase III: the whole matrix."""
    pruned = pruning.prune(graph, backend)
    n = graph.n
    rows = _arc_rows(xp, indptr, indices)
    core_weight = None
    if weight is not None:
        alive = xp.ones(n, dtype=xp.bool_)
        alive[pruned.vertex] = False
        core_weight = weight[alive[rows] & alive[indices]]  # core_csr keeps the arcs' order
    core = pruned.core_ids
    core_dist = solve(pruned.core_indptr, pruned.core_indices, core_weight, int(core.shape[0]),
                      p, progress)
    dist = xp.full((n, n), p.unreachable, dtype=p.dtype)
    dist[core[:, None], core[None, :]] = core_dist
    del core_dist
    vertex, neighbour = pruned.vertex, pruned.neighbour
    if weight is None:
        step = xp.ones(vertex.shape[0], dtype=p.dtype)
    else:
        key = rows * n + indices  # ascending: rows in order, sorted within each row
        arc = xp.searchsorted(key, vertex.astype(xp.int64) * n + neighbour)
        step = weight[arc]
    extend_matrix(xp, dist, vertex, neighbour, step, pruned.bounds, p.unreachable)
    return dist, pruned


def _apsp(graph: Graph, params: ApspParams, progress: ProgressFn, backend: str
          ) -> AlgorithmResult:
    """The two backends' shared driver: plan, pruning (or not), solve, summary, copy back."""
    p = plan(graph, params)
    progress(0.0, f"apsp: {p.method}")
    if backend == "cpu":
        xp, solve = np, _solve_cpu
        indptr, indices = graph.indptr, graph.indices
        weight = graph.weights.astype(p.dtype) if p.weighted else None
    else:
        xp, solve = cupy(), _solve_gpu
        dg = on_device(graph)
        indptr, indices = dg.indptr, dg.indices
        weight = dg.weights.astype(p.dtype) if p.weighted else None
    pruned = None
    if should_prune(graph, params.prune, p):
        dist, pruned = _pruned_solve(xp, graph, backend, p, weight, indptr, indices, solve,
                                     progress)
    else:
        dist = solve(indptr, indices, weight, graph.n, p, progress)
    reachable = dist >= 0 if p.unreachable < 0 else xp.isfinite(dist)
    summary: dict[str, Any] = {
        "n": graph.n, "method": p.method, "dtype": p.dtype.name,
        "reachable_pairs": int(xp.count_nonzero(reachable)) - graph.n,
        "diameter": float(xp.where(reachable, dist, 0).max())}
    del reachable
    if params.prune != "off":
        summary.update(pruned.summary() if pruned else {"pruned": 0, "prune_rounds": 0})
    matrix = dist if backend == "cpu" else xp.asnumpy(dist)
    progress(1.0, "apsp: done")
    return AlgorithmResult(summary=summary, arrays={"distance": matrix})


def apsp_cpu(graph: Graph, params: ApspParams, progress: ProgressFn) -> AlgorithmResult:
    """All-pairs shortest paths on the CPU (Numba, sources or blocks in parallel).

    Parameters
    ----------
    graph : Graph
        Weights, when used, must be non-negative.
    params : ApspParams
    progress : ProgressFn
        Called between source chunks or block rows; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``distance`` array of shape (n, n), row = source, in internal id order: int32 hop counts
        (-1 unreachable) or ``params.dtype`` (inf unreachable); summary per :class:`ApspSummary`.

    Raises
    ------
    InvalidInput
        A negative weight (``field="weights"``).
    """
    return _apsp(graph, params, progress, "cpu")


def apsp_gpu(graph: Graph, params: ApspParams, progress: ProgressFn) -> AlgorithmResult:
    """All-pairs shortest paths on the GPU; same contract and same answer as :func:`apsp_cpu`."""
    return _apsp(graph, params, progress, "gpu")


APSP = register_algorithm(Algorithm(
    name="apsp",
    summary="All-pairs shortest paths: the n x n distance matrix (hop counts by all-pairs BFS, "
            "or weighted by blocked Floyd-Warshall / shortest paths from every source).",
    params_model=ApspParams,
    result_model=ApspSummary,
    cpu=apsp_cpu,
    gpu=apsp_gpu,
    estimate=estimate,
))
