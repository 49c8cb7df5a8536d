"""Triangles: per-node triangle counts, local clustering and global transitivity, CPU and GPU.

Every edge is oriented from the lower to the higher ``(degree, id)`` rank
(:func:`graphgpu.kernels.algorithms.common.dag.degree_dag`, the clique searches' orientation:
every out-degree stays below ``sqrt(2 m)``). A triangle ``a < b < c`` (in rank) is then found
exactly once, on the arc ``a -> b``, as a common out-neighbour ``c`` of ``a`` and ``b`` (a merge
of two sorted rows), and counts once for each of its three nodes. The CPU walks the arcs in
Numba; the GPU takes a thread per arc (atomics for the counts) on a DAG built on the device.

From the counts ``t`` and degrees ``d`` (as NetworkX defines them):

* ``clustering[v] = 2 t[v] / (d[v] (d[v] - 1))`` (0 when ``d[v] < 2``),
* ``transitivity = 3 T / sum(d (d - 1) / 2)`` with ``T = sum(t) / 3`` the triangles (0 if none),
* ``average_clustering`` = the mean of ``clustering`` over all nodes.

Integer counts are exact; the clustering values are single correctly rounded divisions of exact
integers on both backends, so CPU and GPU agree bit for bit. Weights are ignored. Directed graphs
run on the symmetrised view.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from graphgpu.kernels.algorithms.common.dag import degree_dag
from graphgpu.kernels.algorithms.common.declare import NoParams, declare
from graphgpu.kernels.algorithms.triangles import cpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Backend, Estimate, ProgressFn

#: Seconds per merge step (estimates; a step per entry of the two rows of an arc).
SECONDS_PER_STEP = {"cpu": 3e-9, "gpu": 2e-12}


class TrianglesParams(NoParams):
    """Parameters of ``triangles`` (none)."""


class TrianglesSummary(BaseModel):
    """Summary of a ``triangles`` result."""

    triangles: int = Field(description="Triangles in the graph.")
    transitivity: float = Field(description="3 x triangles / connected triples.")
    average_clustering: float = Field(description="Mean local clustering over all nodes.")


def degree_rank(xp: Any, indptr: Any) -> Any:
    """Rank of every vertex in the ``(degree, id)`` order of :func:`degree_dag`."""
    n = indptr.shape[0] - 1
    deg = xp.diff(indptr)
    order = xp.argsort(deg * n + xp.arange(n, dtype=deg.dtype))
    rank = xp.empty(n, dtype=xp.int64)
    rank[order] = xp.arange(n, dtype=xp.int64)
    return rank


def clustering(xp: Any, triangles: Any, degrees: Any) -> Any:
    """Local clustering from per-node triangles and degrees (NetworkX's definition)."""
    pairs = (degrees * (degrees - 1)).astype(xp.int64)
    return xp.where(pairs > 0, (2 * triangles).astype(xp.float64)
                    / xp.maximum(pairs, 1).astype(xp.float64), 0.0)


def _result(triangles: np.ndarray, local: np.ndarray, degrees: np.ndarray) -> AlgorithmResult:
    total = int(triangles.sum()) // 3
    triads = int((degrees.astype(np.int64) * (degrees - 1)).sum()) // 2
    summary = {"triangles": total,
               "transitivity": 3 * total / triads if total else 0.0,
               "average_clustering": float(local.mean()) if local.size else 0.0}
    return AlgorithmResult(summary=summary,
                           node_values={"triangles": triangles, "clustering": local})


def triangles_cpu(graph: Graph, params: TrianglesParams, progress: ProgressFn
                  ) -> AlgorithmResult:
    """Triangle counts, clustering and transitivity on the CPU (Numba merges on the DAG).

    Parameters
    ----------
    graph : Graph
        Undirected (directed graphs are symmetrised by the worker).
    params : TrianglesParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``triangles`` (int64) and ``clustering`` (float64) per node; summary per
        :class:`TrianglesSummary`.
    """
    progress(0.0, "triangles: orienting")
    dptr, dadj = degree_dag(np, graph.indptr, graph.indices)
    progress(0.2, "triangles: counting")
    triangles = cpu.dag_triangles(dptr, dadj)[degree_rank(np, graph.indptr)]
    degrees = graph.degrees()
    progress(1.0, "triangles: done")
    return _result(triangles, clustering(np, triangles, degrees), degrees)


def triangles_gpu(graph: Graph, params: TrianglesParams, progress: ProgressFn
                  ) -> AlgorithmResult:
    """Triangle counts, clustering and transitivity on the GPU (a thread per DAG arc); same
    answer as :func:`triangles_cpu`, bit for bit."""
    from graphgpu.kernels.algorithms.triangles import gpu
    from graphgpu.kernels.core.device import cupy, on_device

    cp = cupy()
    progress(0.0, "triangles: orienting and counting")
    indptr = on_device(graph).indptr
    triangles = gpu.rank_triangles(graph)[degree_rank(cp, indptr)]
    local = clustering(cp, triangles, cp.diff(indptr))
    progress(1.0, "triangles: done")
    return _result(triangles.get(), local.get(), graph.degrees())


def estimate(graph: Graph, params: TrianglesParams, backend: Backend) -> Estimate:
    """Cost of ``triangles``: merge steps bounded by the squared degrees capped at
    ``sqrt(2 m)`` (the DAG's largest out-degree)."""
    cap = max(1.0, float(np.sqrt(2 * max(graph.m, 1))))
    deg = np.minimum(graph.degrees().astype(np.float64), cap)
    steps = float((deg * deg).sum())
    return Estimate(seconds=steps * SECONDS_PER_STEP[backend], result_bytes=16 * graph.n,
                    detail=f"about {steps:,.0f} merge steps at most")


TRIANGLES = declare(
    "triangles", "Triangles per node, local clustering and global transitivity (degree-ordered "
    "DAG, merge intersections); directed graphs symmetrised.", (TrianglesParams, TrianglesSummary),
    (triangles_cpu, triangles_gpu), estimate=estimate, directed="symmetrise")
