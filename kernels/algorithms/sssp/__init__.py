"""Single-source shortest paths on non-negative weights, CPU and GPU with the same answer.

Distances are computed in the requested ``dtype`` on both backends (weights are cast to it
first; an unweighted graph counts every edge as 1): a node's distance is the smallest, over
paths, of the path's weights added left to right in that dtype. Dijkstra (CPU, Numba) and the
GPU's frontier Bellman-Ford fixpoint agree on that exactly, because adding a non-negative weight
never makes a distance smaller and rounding is monotone.

Parents are deterministic: an arc ``u -> v`` is *tight* when ``dist[u] + w(u, v) == dist[v]``
exactly in the dtype; ``hops[v]`` is the fewest tight arcs from the source to ``v``; and
``parent[v]`` is the smallest-id ``u`` with a tight arc ``u -> v`` and ``hops[u] == hops[v] - 1``.
The hop condition keeps the parents a tree where zero weights (or weights below a distance's
rounding step) make neighbours' distances equal; otherwise two such nodes could name each other.
"""

from __future__ import annotations

import heapq
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numba
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    AlgorithmResult,
    ProgressFn,
    register_algorithm,
)

CUDA_SOURCE = Path(__file__).with_name("sssp.cu")
THREADS = 256


class SsspParams(BaseModel):
    """Parameters of ``sssp``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"source": 0}]})

    source: int = Field(description="Original id of the node to start from.")
    dtype: Literal["float32", "float64"] = Field(
        "float64", description="Precision of the distances (weights are cast to it).")


class SsspSummary(BaseModel):
    """Summary of an ``sssp`` result."""

    source: int = Field(description="Original id of the source node.")
    reached: int = Field(description="Nodes at a finite distance, the source included.")
    max_distance: float = Field(description="Largest finite distance.")


def _weights(graph: Graph, dtype: str) -> np.ndarray:
    """Arc weights in ``dtype``; ones for an unweighted graph; negative weights refused."""
    if graph.weights is None:
        return np.ones(graph.indices.shape[0], dtype=dtype)
    if graph.weights.size and graph.weights.min() < 0:
        raise InvalidInput("sssp needs non-negative weights", field="weights")
    return graph.weights.astype(dtype)


# ------------------------------------------------------------------------------------------------
# CPU
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _dijkstra_numba(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray,
                    source: int) -> np.ndarray:
    n = indptr.shape[0] - 1
    dist = np.full(n, np.inf, dtype=weight.dtype)
    dist[source] = 0
    done = np.zeros(n, np.bool_)
    heap = [(dist[source], np.int64(source))]
    while heap:
        d, u = heapq.heappop(heap)
        if done[u]:
            continue  # a stale entry: u was settled at a smaller distance
        done[u] = True
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            nd = d + weight[j]  # in the weight dtype: float32 stays float32
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, np.int64(v)))
    return dist


@numba.njit(cache=True, nogil=True)
def _tight_tree_numba(indptr: np.ndarray, indices: np.ndarray, weight: np.ndarray,
                      dist: np.ndarray, source: int) -> np.ndarray:
    """Fewest-hop BFS over tight arcs, then the parent rule of the module notes."""
    n = indptr.shape[0] - 1
    hops = np.full(n, -1, np.int32)
    queue = np.empty(n, np.int32)
    hops[source] = 0
    queue[0] = source
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if hops[v] < 0 and dist[u] + weight[j] == dist[v]:
                hops[v] = hops[u] + 1
                queue[tail] = v
                tail += 1
    parent = np.full(n, -1, np.int64)
    parent[source] = source
    for v in range(n):
        if hops[v] > 0:
            for j in range(indptr[v], indptr[v + 1]):
                u = indices[j]
                if hops[u] == hops[v] - 1 and dist[u] + weight[j] == dist[v]:
                    parent[v] = u
                    break
    return parent


def sssp_cpu(graph: Graph, params: SsspParams, progress: ProgressFn) -> AlgorithmResult:
    """Dijkstra from ``params.source`` on the CPU (Numba, binary heap).

    Parameters
    ----------
    graph : Graph
        Weights must be non-negative; an unweighted graph counts each edge as 1.
    params : SsspParams
    progress : ProgressFn
        Called at start, between distances and parents, and at the end; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``distance`` (``params.dtype``, inf unreachable) and ``parent`` (int64 internal ids, -1
        unreachable, the source its own parent) per node; summary per :class:`SsspSummary`.

    Raises
    ------
    InvalidInput
        A negative weight (``field="weights"``) or an unknown source.
    """
    source = int(graph.internal_ids(params.source)[0])
    weight = _weights(graph, params.dtype)
    progress(0.0, "sssp: distances")
    dist = _dijkstra_numba(graph.indptr, graph.indices, weight, source)
    progress(0.7, "sssp: parents")
    parent = _tight_tree_numba(graph.indptr, graph.indices, weight, dist, source)
    progress(1.0, "sssp: done")
    return _result(params.source, dist, parent)


def _result(source: int, dist: np.ndarray, parent: np.ndarray) -> AlgorithmResult:
    finite = np.isfinite(dist)
    summary = {"source": int(source), "reached": int(np.count_nonzero(finite)),
               "max_distance": float(dist[finite].max())}
    return AlgorithmResult(summary=summary, node_values={"distance": dist, "parent": parent},
                           node_id_fields=("parent",))


# ------------------------------------------------------------------------------------------------
# GPU
# ------------------------------------------------------------------------------------------------


@cache
def _module() -> Any:
    return cupy().RawModule(code=CUDA_SOURCE.read_text(), options=("-std=c++17",))


def _group(frontier_arcs: float) -> int:
    """Lanes per frontier vertex: the power of two covering the average degree, 1 to 32."""
    group = 1
    while group < 32 and group < frontier_arcs:
        group *= 2
    return group


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
    group = _group(avg_degree)
    while size > 0:
        progress(0.0 if what == "relax" else 0.7, f"sssp: {what} step {step}, frontier {size}")
        count.fill(0)
        blocks = (max(1, -(-size * group // THREADS)),)
        kernel(blocks, (THREADS,), (*args_before, frontier, np.int32(size), following, count,
                                    *args_after, np.int32(step), np.int32(group)))
        size = int(count.get()[0])
        frontier, following = following, frontier
        step += 1
    return step


def sssp_device(graph: Graph, source: int, dtype: str, progress: ProgressFn
                ) -> tuple[Any, Any]:
    """Shortest paths on the GPU from internal id ``source``; device ``(distance, parent)``.

    Frontier Bellman-Ford: each step relaxes the arcs of the vertices whose distance dropped in
    the previous one, with an atomic minimum on the distances' bit patterns; then a BFS over the
    tight arcs for the hop counts and one pass for the parents (module notes).
    """
    cp = cupy()
    mod = _module()
    dg = on_device(graph)
    n = graph.n
    weight = cp.asarray(_weights(graph, dtype))
    suffix = dtype
    dist = cp.full(n, cp.inf, dtype=dtype)
    dist[source] = 0
    stamp = cp.full(n, -1, dtype=cp.int32)
    start = cp.asarray([source], dtype=cp.int32)
    avg = 2 * graph.m / max(n, 1)
    _frontier_loop(mod.get_function(f"sssp_relax_{suffix}"), (dg.indptr, dg.indices, weight,
                                                              dist), (stamp,), start, n, avg,
                   progress, "relax")
    hops = cp.full(n, -1, dtype=cp.int32)
    hops[source] = 0
    _frontier_loop(mod.get_function(f"sssp_hops_{suffix}"), (dg.indptr, dg.indices, weight,
                                                             dist, hops), (), start, n, avg,
                   progress, "hops")
    parent = cp.empty(n, dtype=cp.int64)
    mod.get_function(f"sssp_parent_{suffix}")(
        (max(1, -(-n // THREADS)),), (THREADS,),
        (dg.indptr, dg.indices, weight, dist, hops, np.int32(n), np.int32(source), parent))
    return dist, parent


def sssp_gpu(graph: Graph, params: SsspParams, progress: ProgressFn) -> AlgorithmResult:
    """Shortest paths on the GPU; same contract and same answer as :func:`sssp_cpu`."""
    source = int(graph.internal_ids(params.source)[0])
    dist, parent = sssp_device(graph, source, params.dtype, progress)
    result = _result(params.source, dist.get(), parent.get())
    progress(1.0, "sssp: done")
    return result


SSSP = register_algorithm(Algorithm(
    name="sssp",
    summary="Single-source shortest paths (non-negative weights; unweighted edges count 1): "
            "distance and deterministic parent of every node.",
    params_model=SsspParams,
    result_model=SsspSummary,
    cpu=sssp_cpu,
    gpu=sssp_gpu,
    node_params=("source",),
))
