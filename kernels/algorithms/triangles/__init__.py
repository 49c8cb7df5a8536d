"""Triangles: per-node triangle counts, local clustering and global transitivity, CPU and GPU.

Every edge is oriented from the lower to the higher ``(degree, id)`` rank
(:func:`graphgpu.kernels.algorithms.common.dag.degree_dag`, the clique searches' orientation:
every out-degree stays below ``sqrt(2 m)``). A triangle ``a < b < c`` (in rank) is then found
exactly once, on the arc ``a -> b``, as a common out-neighbour ``c`` of ``a`` and ``b``, and counts
once for each of its three nodes. The CPU (:mod:`.cpu`) walks the arcs in Numba, merging two
sorted rows. The GPU (:mod:`.gpu`) keeps the out-lists unsorted, filtered in place of the CSR on
the device (:func:`~graphgpu.kernels.algorithms.common.dag.device_degree_out_lists`), and takes
each arc at its endpoint with the longer out-list: that node's list goes in a hash table in
shared memory (a warp or a block per node) and the shorter list is probed in it, one probe per
entry (``triangles.cu``); counts, clustering and the summary's sums stay on the device. Both hand
their counts to :mod:`.driver`.

From the counts ``t`` and degrees ``d`` (as NetworkX defines them):

* ``clustering[v] = 2 t[v] / (d[v] (d[v] - 1))`` (0 when ``d[v] < 2``),
* ``transitivity = 3 T / sum(d (d - 1) / 2)`` with ``T = sum(t) / 3`` the triangles (0 if none),
* ``average_clustering`` = the mean of ``clustering`` over all nodes.

Integer counts are exact; the clustering values are single correctly rounded divisions of exact
integers on both backends, and their mean is summed exactly (fixed-point limbs,
:func:`.driver.mean_limbs`) and rounded once, so CPU and GPU agree bit for bit. Weights are
ignored. Directed graphs run on the symmetrised view.

``clustering`` computes NetworkX's clustering of the other kinds, which ``triangles`` does not:
of a directed graph (Fagiolo's, on in- and out-arcs) and weighted (the geometric mean of the
weights divided by the largest). With ``C`` the arc values (``cbrt(w / max w)``, or 1) and ``S``
= ``C`` (undirected) or ``C + C^T`` (directed), a node's weighted triangles are
``diag(S^3) / 2`` and

* undirected: ``clustering[v] = diag(S^3)[v] / (d (d - 1))``,
* directed: ``clustering[v] = diag(S^3)[v] / (2 (dt (dt - 1) - 2 db))`` (``dt`` = in + out
  degree, ``db`` = reciprocated arcs),

as NetworkX's ``clustering`` (``average_clustering`` is their mean). Both backends compute the
diagonal as row sums of ``(S[R] @ S) * S[R]`` over chunks of rows ``R`` (SciPy sparse, or cuSPARSE
through ``cupyx.scipy.sparse``), a chunk's product bounded by its wedges (two-step paths).
Unweighted, the diagonal is an exact integer: the values are NetworkX's bit for bit, on both
backends; weighted, sums of cube roots in another order than NetworkX's (and the GPU's than the
CPU's) agree to rounding.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

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
#: Seconds per wedge of ``clustering``'s sparse products (estimates). Measured on an H100 host
#: (2026-11-26): 1M nodes, 10M uniform edges (420M wedges) 27.5 s on the CPU (SciPy), 0.11-0.16 s
#: on the GPU; 20k nodes, 240k skewed edges (2.1G wedges, heavy rows) 0.38-0.41 s on the GPU.
SECONDS_PER_WEDGE = {"cpu": 7e-8, "gpu": 5e-10}


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


class ClusteringParams(BaseModel):
    """Parameters of ``clustering``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{}, {"weighted": True}]})

    weighted: bool = Field(False, description="NetworkX's weighted clustering: the geometric "
                                              "mean of each triangle's weights divided by the "
                                              "largest weight (an unweighted graph: every arc "
                                              "1).")


class ClusteringSummary(BaseModel):
    """Summary of a ``clustering`` result."""

    average_clustering: float = Field(description="Mean local clustering over all nodes.")
    max_weight: float | None = Field(description="The largest weight, by which the weights "
                                                 "were divided (None: unweighted).")


def clustering_estimate(graph: Graph, params: ClusteringParams, backend: Backend) -> Estimate:
    """Cost of ``clustering``: the wedges of the sparse product, at most the sum of the squared
    (in + out) degrees; the product is computed in chunks of rows of bounded size."""
    degree = graph.degrees().astype(np.float64)
    if graph.directed:
        degree = degree + graph.in_degrees()
    wedges = float((degree * degree).sum())
    # The matrices S (and its pattern), the degrees and diagonal; a chunk's product.
    chunk = (cpu if backend == "cpu" else gpu).CLUSTERING_WEDGES_PER_CHUNK
    working = 4 * graph.nbytes() + 48 * graph.n + 36 * min(wedges, chunk)
    return Estimate(seconds=wedges * SECONDS_PER_WEDGE[backend], result_bytes=16 * graph.n,
                    device_bytes=working if backend == "gpu" else None, host_bytes=working,
                    detail=f"about {wedges:,.0f} wedges at most")


TRIANGLES = register_algorithm(Algorithm(
    name="triangles", params_model=TrianglesParams, result_model=TrianglesSummary,
    cpu=cpu.triangles, gpu=gpu.triangles, estimate=estimate, directed="symmetrise",
    summary="Triangles per node, local clustering and global transitivity (degree-ordered DAG, "
            "merge intersections); directed graphs symmetrised."))

CLUSTERING = register_algorithm(Algorithm(
    name="clustering", params_model=ClusteringParams, result_model=ClusteringSummary,
    cpu=cpu.clustering, gpu=gpu.clustering, estimate=clustering_estimate, directed="native",
    summary="NetworkX's local clustering of directed (Fagiolo) and weighted (geometric mean) "
            "graphs: diag(S^3) by sparse products in chunks of rows."))
