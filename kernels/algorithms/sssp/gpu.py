"""Single-source shortest paths on the GPU: frontier Bellman-Ford, then the parent rule.

Kernels: ``sssp.cu`` (one instantiation per dtype), compiled once per process and device by
:mod:`graphgpu.kernels.core.cuda`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.sssp import driver
from graphgpu.kernels.core.cuda import grid_for, kernels, lanes_per_row
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("sssp.cu")
THREADS = 256
#: The kernels of ``sssp.cu``: each step, once per distance dtype.
NAMES = tuple(f"sssp_{step}_{dtype}" for step in ("relax", "hops", "parent")
              for dtype in ("float32", "float64"))


def _frontier_loop(kernel: Any, args_before: tuple, args_after: tuple, start: Any, n: int,
                   avg_degree: float, progress: ProgressFn, what: str) -> int:
    """Run ``kernel`` over a frontier until it is empty; returns the number of steps.

    The kernel takes ``(*args_before, frontier, size, next, count, *args_after, step, group)``;
    one host read per step (the next frontier's size) sizes the next launch.
    """
    cp = cupy()
    frontier = cp.empty(n, dtype=cp.int32)
    following = cp.empty(n, dtype=cp.int32)
    frontier[:start.shape[0]] = start
    count = cp.zeros(1, dtype=cp.int32)
    size, step = int(start.shape[0]), 0
    group = lanes_per_row(avg_degree)
    while size > 0:
        progress(0.0 if what == "relax" else 0.7, f"sssp: {what} step {step}, frontier {size}")
        count.fill(0)
        kernel(grid_for(size * group, THREADS), (THREADS,),
               (*args_before, frontier, np.int32(size), following, count, *args_after,
                np.int32(step), np.int32(group)))
        size = int(count.get()[0])
        frontier, following = following, frontier
        step += 1
    return step


def distances_parents(graph: Graph, source: int, weight: np.ndarray, progress: ProgressFn,
                      in_weight: np.ndarray | None = None) -> tuple[Any, Any]:
    """Shortest paths on the GPU from internal id ``source``; device ``(distance, parent)``.

    Frontier Bellman-Ford: each step relaxes the arcs of the vertices whose distance dropped in
    the previous one, with an atomic minimum on the distances' bit patterns; then a BFS over the
    tight arcs for the hop counts and one pass for the parents (the family's notes). Distances
    are in ``weight``'s dtype (float32 or float64). Paths follow the out-rows; a directed
    graph's parents are found in its in-rows, weighted by ``in_weight``.
    """
    cp = cupy()
    k = kernels(CUDA_SOURCE, NAMES)
    dg = on_device(graph)
    n = graph.n
    weight = cp.asarray(weight)
    suffix = weight.dtype.name
    dist = cp.full(n, cp.inf, dtype=weight.dtype)
    dist[source] = 0
    stamp = cp.full(n, -1, dtype=cp.int32)
    start = cp.asarray([source], dtype=cp.int32)
    avg = int(graph.indices.shape[0]) / max(n, 1)  # arcs per row, either kind of graph
    _frontier_loop(k[f"sssp_relax_{suffix}"], (dg.indptr, dg.indices, weight, dist), (stamp,),
                   start, n, avg, progress, "relax")
    hops = cp.full(n, -1, dtype=cp.int32)
    hops[source] = 0
    _frontier_loop(k[f"sssp_hops_{suffix}"], (dg.indptr, dg.indices, weight, dist, hops), (),
                   start, n, avg, progress, "hops")
    parent = cp.empty(n, dtype=cp.int64)
    rows_in = (dg.indptr, dg.indices, weight) if not graph.directed else (
        cp.asarray(graph.in_indptr), cp.asarray(graph.in_indices), cp.asarray(in_weight))
    k[f"sssp_parent_{suffix}"](
        grid_for(n, THREADS), (THREADS,),
        (*rows_in, dist, hops, np.int32(n), np.int32(source), parent))
    return dist, parent


def sssp_device(graph: Graph, source: int, dtype: str, progress: ProgressFn) -> tuple[Any, Any]:
    """:func:`distances_parents` with the graph's weights cast to ``dtype`` (the bench's entry)."""
    return distances_parents(graph, source, driver.arc_weights(graph, dtype), progress)


def _solve(graph: Graph, source: int, weight: np.ndarray, in_weight: np.ndarray,
           progress: ProgressFn) -> tuple[np.ndarray, np.ndarray]:
    dist, parent = distances_parents(graph, source, weight, progress, in_weight)
    return dist.get(), parent.get()


def sssp(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Shortest paths on the GPU; same contract and same answer as the CPU backend's."""
    return driver.run(graph, params, progress, _solve)
