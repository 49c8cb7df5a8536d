"""Triangles: per-node triangle counts, local clustering and global transitivity, CPU and GPU.

Every edge is oriented from the lower to the higher ``(degree, id)`` rank
(:func:`graphgpu.kernels.algorithms.common.dag.degree_dag`, the clique searches' orientation:
every out-degree stays below ``sqrt(2 m)``). A triangle ``a < b < c`` (in rank) is then found
exactly once, on the arc ``a -> b``, as a common out-neighbour ``c`` of ``a`` and ``b`` (a merge
of two sorted rows), and counts once for each of its three nodes. The CPU (:mod:`.cpu`) walks
the arcs in Numba; the GPU (:mod:`.gpu`), on a DAG built on the device, takes a block per chunk
of rows (counts in shared memory), a thread per arc whose shorter list is short (a merge or
binary searches) and a warp per arc whose lists are both long. Both hand their counts to
:mod:`.driver`.

From the counts ``t`` and degrees ``d`` (as NetworkX defines them):

* ``clustering[v] = 2 t[v] / (d[v] (d[v] - 1))`` (0 when ``d[v] < 2``),
* ``transitivity = 3 T / sum(d (d - 1) / 2)`` with ``T = sum(t) / 3`` the triangles (0 if none),
* ``average_clustering`` = the mean of ``clustering`` over all nodes.

Integer counts are exact; the clustering values are single correctly rounded divisions of exact
integers on both backends, so CPU and GPU agree bit for bit. Weights are ignored. Directed graphs
run on the symmetrised view.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

from graphgpu.kernels.algorithms.common.declare import NoParams
from graphgpu.kernels.algorithms.triangles import cpu, gpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    Backend,
    Estimate,
    register_algorithm,
)

#: Seconds per merge step (estimates; a step per entry of the two rows of an arc).
SECONDS_PER_STEP = {"cpu": 3e-9, "gpu": 2e-12}


class TrianglesParams(NoParams):
    """Parameters of ``triangles`` (none)."""


class TrianglesSummary(BaseModel):
    """Summary of a ``triangles`` result."""

    triangles: int = Field(description="Triangles in the graph.")
    transitivity: float = Field(description="3 x triangles / connected triples.")
    average_clustering: float = Field(description="Mean local clustering over all nodes.")


def estimate(graph: Graph, params: TrianglesParams, backend: Backend) -> Estimate:
    """Cost of ``triangles``: merge steps bounded by the squared degrees capped at
    ``sqrt(2 m)`` (the DAG's largest out-degree)."""
    cap = max(1.0, float(np.sqrt(2 * max(graph.m, 1))))
    deg = np.minimum(graph.degrees().astype(np.float64), cap)
    steps = float((deg * deg).sum())
    return Estimate(seconds=steps * SECONDS_PER_STEP[backend], result_bytes=16 * graph.n,
                    detail=f"about {steps:,.0f} merge steps at most")


TRIANGLES = register_algorithm(Algorithm(
    name="triangles", params_model=TrianglesParams, result_model=TrianglesSummary,
    cpu=cpu.triangles, gpu=gpu.triangles, estimate=estimate, directed="symmetrise",
    summary="Triangles per node, local clustering and global transitivity (degree-ordered DAG, "
            "merge intersections); directed graphs symmetrised."))
