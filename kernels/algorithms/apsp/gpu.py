"""All-pairs shortest paths on the GPU: bit-parallel BFS, blocked Floyd-Warshall, Bellman-Ford.

Kernels: ``apsp.cu`` (one instantiation per dtype) and, for hop counts, the shared bit-parallel
BFS of :mod:`graphgpu.kernels.algorithms.common.bitset_bfs`; compiled once per process and device
by :mod:`graphgpu.kernels.core.cuda`.

Floyd-Warshall on integer weights (:func:`integer_kind`) runs on an integer matrix, phase 3 with
Hopper's fused add-min (DPX): int32, or two uint16 distances to a 32-bit word (twice the updates
per instruction) when every distance is provably below 0x7FFF. Entries saturate at the kind's
"no path" value, so every distance below it is exact; the kinds are taken only where the float
schedule (the CPU's) is exact too, so both backends return the same values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.apsp import driver
from graphgpu.kernels.algorithms.apsp.driver import TILE, Plan, initial_matrix
from graphgpu.kernels.algorithms.common import bitset_bfs
from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("apsp.cu")
THREADS = 256
#: Memory bound of the GPU's working sets (bit sets of a BFS batch, Bellman-Ford batch).
BATCH_BYTES = 1 << 30
#: Integer Floyd-Warshall matrices (``apsp.cu``), by dtype name: distances per 32-bit word, and
#: the entry standing for "no path" (two of them add without overflow).
INTEGER_KINDS = {"uint16": (2, 0x7FFF), "int32": (1, 2 ** 30 - 1)}
#: Bellman-Ford sweeps the uint16 check may take (its bound needs a settled one-source run).
ECCENTRICITY_SWEEPS = 64
#: The kernels of ``apsp.cu``: Floyd-Warshall's phases per matrix dtype, Bellman-Ford per float
#: dtype, the integer matrices' conversion to each float dtype, and the BFS level reduction.
FLOATS = ("float32", "float64")
NAMES = ("apsp_bfs_level",
         *(f"fw_{phase}_{kind}" for phase in ("diag", "panel", "rest")
           for kind in (*FLOATS, *INTEGER_KINDS)),
         *(f"apsp_bf_sweep_{dtype}" for dtype in FLOATS),
         *(f"fw_finish_{kind}_{dtype}" for kind in INTEGER_KINDS for dtype in FLOATS))


def panel_smem(dtype: np.dtype) -> int:
    """Dynamic shared memory of a Floyd-Warshall panel block: two padded tiles."""
    return 2 * TILE * (TILE + 1) * dtype.itemsize


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
    level_kernel = kernels(CUDA_SOURCE, NAMES)["apsp_bfs_level"]
    n = dg.n
    i32 = np.int32
    total, ecc = cp.zeros(n, cp.int64), cp.zeros(n, cp.int32)
    found = cp.zeros(1, cp.int32)
    write = dist is not None
    if write:
        nodes = cp.arange(n, dtype=cp.int32)
        dist.fill(-1)
        dist[nodes, nodes] = 0

    def level_done(start: int, count: int, words: int, following: Any, level: int) -> bool:
        rows = dist[start:] if write else total  # any device array: not read without write
        found.fill(0)
        level_kernel(grid_for(n * words, THREADS), (THREADS,),
                     (following, i32(n), i32(words), i32(level), i32(write), rows, np.int64(n),
                      total, ecc, found))
        return bool(int(found.get()[0]))  # the one sync per level

    words = min(-(-n // 64), bitset_bfs.batch_words(n, BATCH_BYTES))
    bitset_bfs.sweep_all_sources(dg, words, level_done, progress, "apsp: all-pairs BFS,")
    return total, ecc


def eccentricity(indptr: Any, indices: Any, weight: Any, n: int, p: Plan) -> float | None:
    """Largest distance from node 0 (inf when a node is unreached) by in-place Bellman-Ford
    sweeps; None when they have not settled within :data:`ECCENTRICITY_SWEEPS`."""
    cp = cupy()
    sweep = kernels(CUDA_SOURCE, NAMES)[f"apsp_bf_sweep_{p.dtype.name}"]
    dist = cp.full(n, cp.inf, dtype=p.dtype)
    dist[0] = 0
    changed = cp.zeros(1, cp.int32)
    for _ in range(ECCENTRICITY_SWEEPS):
        changed.fill(0)
        sweep(grid_for(n, THREADS), (THREADS,),
              (indptr, indices, weight, np.int32(n), np.int32(1), dist, changed))
        if not int(changed.get()[0]):
            return float(dist.max())
    return None


def integer_kind(indptr: Any, indices: Any, weight: Any, n: int, p: Plan) -> str | None:
    """The integer matrix Floyd-Warshall runs on (a key of :data:`INTEGER_KINDS`), or None.

    Integer weights only, with every distance below the kind's "no path" entry and exact in
    ``p.dtype`` (below 2**24 in float32), so that the result is the float schedule's. A shortest
    path has at most n - 1 edges: ``max weight * (n - 1)`` bounds every distance. uint16 also
    takes graphs that bound fails on when node 0 reaches every node: then any distance is at
    most ``d(i, 0) + d(0, j)``, twice node 0's eccentricity.
    """
    if n == 0:
        return None
    cp = cupy()
    top = 0.0
    if weight.shape[0]:
        if not reductions.all_true(weight == cp.floor(weight)):
            return None
        top = float(weight.max())
    longest = top * (n - 1)
    exact = 2.0 ** (np.finfo(p.dtype).nmant + 1)
    if longest >= min(exact, INTEGER_KINDS["int32"][1]):
        return None
    cap = INTEGER_KINDS["uint16"][1]
    if longest < cap:
        return "uint16"
    ecc = eccentricity(indptr, indices, weight, n, p)
    return "uint16" if ecc is not None and 2 * ecc < cap else "int32"


def floyd_warshall_device(dg: DeviceGraph, weight: Any, p: Plan, progress: ProgressFn) -> Any:
    """Blocked Floyd-Warshall on a matrix padded to whole tiles (padding: isolated nodes), on
    integers where :func:`integer_kind` allows."""
    cp = cupy()
    k = kernels(CUDA_SOURCE, NAMES)
    n = dg.n
    blocks = -(-n // TILE)
    size = blocks * TILE
    kind = integer_kind(dg.indptr, dg.indices, weight, n, p)
    if kind is None:
        lanes, suffix = 1, p.dtype.name
        d = initial_matrix(cp, dg.indptr, dg.indices, weight, n, p, size)
    else:
        (lanes, unreachable), suffix = INTEGER_KINDS[kind], kind
        clamped = cp.minimum(weight, unreachable).astype(kind)  # saturated like every entry
        d = initial_matrix(cp, dg.indptr, dg.indices, clamped, n, p, size, dtype=np.dtype(kind),
                           unreachable=unreachable)
    diag, panel, rest = (k[f"fw_{phase}_{suffix}"] for phase in ("diag", "panel", "rest"))
    # Phase 2 takes two tiles of dynamic shared memory, more than a kernel may by default.
    panel.max_dynamic_shared_size_bytes = panel_smem(d.dtype)
    stride = np.int64(size)
    for kb in range(blocks):
        if kb % max(1, blocks // 16) == 0:
            progress(kb / blocks, f"apsp: Floyd-Warshall block row {kb} of {blocks}")
        diag((1,), (THREADS,), (d, stride, np.int32(kb)))
        if blocks > 1:
            panel((blocks - 1, 2), (THREADS,), (d, stride, np.int32(kb)),
                  shared_mem=panel_smem(d.dtype))
            # Integer phase 3 works on 32-bit words, `lanes` distances each.
            rest((blocks - 1, blocks - 1), (THREADS // lanes,),
                 (d, np.int64(size // lanes), np.int32(kb)))
    if kind is None:
        return cp.ascontiguousarray(d[:n, :n])
    out = cp.empty((n, n), dtype=p.dtype)
    k[f"fw_finish_{kind}_{p.dtype.name}"](
        grid_for(n * n, THREADS), (THREADS,),
        (d, stride, np.int32(n), np.int32(unreachable), p.dtype.type(np.inf), out))
    return out


def bellman_ford_device(dg: DeviceGraph, weight: Any, p: Plan, progress: ProgressFn) -> Any:
    """Shortest paths from every source by batched in-place Bellman-Ford sweeps."""
    cp = cupy()
    n = dg.n
    sweep = kernels(CUDA_SOURCE, NAMES)[f"apsp_bf_sweep_{p.dtype.name}"]
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
            sweep(grid_for(n * per, THREADS), (THREADS,),
                  (dg.indptr, dg.indices, weight, np.int32(n), np.int32(per), work, changed))
            if not int(changed.get()[0]):
                break
        dist[start:start + count] = work[:, :count].T
    return dist


def solve(indptr: Any, indices: Any, weight: Any, n: int, p: Plan, progress: ProgressFn) -> Any:
    """Distance matrix of a CSR graph (device arrays) on the GPU."""
    dg = DeviceGraph(indptr, indices, None, n, int(indices.shape[0]) // 2)
    if p.method == "bfs":
        dist = cupy().empty((n, n), dtype=cupy().int32)
        bfs_sweep_device(dg, dist, progress)
        return dist
    if p.method == "floyd_warshall":
        return floyd_warshall_device(dg, weight, p, progress)
    return bellman_ford_device(dg, weight, p, progress)


def apsp(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """All-pairs shortest paths on the GPU; same contract and same answer as the CPU backend's."""

    def csr() -> tuple[Any, Any, Any]:
        dg = on_device(graph)
        return dg.indptr, dg.indices, dg.weights

    return driver.run(graph, params, progress, cupy(), csr, solve)
