"""CPU side of ``triangles``: merge intersections along the DAG's arcs (Numba); ``clustering``:
SciPy sparse products."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import scipy.sparse

from graphgpu.kernels.algorithms.common.dag import degree_dag, degree_rank
from graphgpu.kernels.algorithms.triangles import driver
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: Wedges (entries of the sparse product) per chunk of rows of ``clustering``: about 100 MB.
CLUSTERING_WEDGES_PER_CHUNK = 1 << 23


@numba.njit(cache=True, nogil=True)
def dag_triangles(dptr: np.ndarray, dadj: np.ndarray) -> np.ndarray:
    """Triangles at each vertex of an acyclic orientation (rank ids), each counted once.

    Parameters
    ----------
    dptr, dadj : ndarray
        Sorted out-lists of the DAG (``graphgpu.kernels.algorithms.common.dag``).

    Returns
    -------
    ndarray of int64
        Per rank, the triangles it belongs to.
    """
    n = dptr.shape[0] - 1
    count = np.zeros(n, np.int64)
    for a in range(n):
        for e in range(dptr[a], dptr[a + 1]):
            b = dadj[e]
            i, j = e + 1, dptr[b]
            found = 0
            while i < dptr[a + 1] and j < dptr[b + 1]:
                x, y = dadj[i], dadj[j]
                if x < y:
                    i += 1
                elif y < x:
                    j += 1
                else:
                    count[x] += 1
                    found += 1
                    i += 1
                    j += 1
            count[a] += found
            count[b] += found
    return count


def triangles(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
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
        ``TrianglesSummary``.
    """
    progress(0.0, "triangles: orienting")
    dptr, dadj = degree_dag(np, graph.indptr, graph.indices)
    progress(0.2, "triangles: counting")
    triangles = dag_triangles(dptr, dadj)[degree_rank(np, graph.indptr)]
    degrees = graph.degrees()
    progress(1.0, "triangles: done")
    return driver.result(np, triangles, driver.clustering(np, triangles, degrees), degrees)


def clustering(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """NetworkX's clustering of a directed or weighted graph on the CPU (SciPy sparse
    products in chunks of rows, :func:`.driver.fagiolo`).

    Parameters
    ----------
    graph : Graph
        Undirected or directed (the in-CSR gives ``C^T``).
    params : ClusteringParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``triangles`` (``diag(S^3) / 2``) and ``clustering`` (float64) per node; summary per
        ``ClusteringSummary``.
    """
    scale = driver.weight_scale(graph, params.weighted)
    in_csr = (graph.in_indptr, graph.in_indices, graph.in_weights) if graph.directed else None
    progress(0.0, "clustering: sparse products")
    diag, pairs = driver.fagiolo(np, scipy.sparse, graph.n,
                                 (graph.indptr, graph.indices, graph.weights), in_csr, scale,
                                 CLUSTERING_WEDGES_PER_CHUNK, progress)
    return driver.clustering_result(diag, pairs, scale)
