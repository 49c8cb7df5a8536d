"""The result of ``critical_nodes``: the k check, the independent objective, the summary.

Both backends build their answers through :func:`make_result`, which recomputes the objective
with SciPy (no engine code involved) and refuses a set that is not exactly k distinct nodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from graphgpu.kernels.algorithms.critical_nodes.params import CndParams
from graphgpu.kernels.algorithms.critical_nodes.tuning import MAX_LISTED
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult


def check_k(graph: Graph, params: CndParams) -> None:
    """Refuse a k that leaves no node (the API calls this through the estimate).

    Raises
    ------
    InvalidInput
        ``k`` not below the number of nodes (``field="k"``).
    """
    if params.k >= graph.n:
        raise InvalidInput(f"k must be below the number of nodes ({graph.n}), got {params.k}",
                           field="k")


def objective_of(graph: Graph, removed: np.ndarray) -> tuple[int, np.ndarray]:
    """Pairs connected in ``graph`` without the ``removed`` nodes, and the components' sizes.

    Independent of the engines: SciPy's connected components of the induced subgraph.
    """
    keep = np.ones(graph.n, bool)
    keep[removed] = False
    adjacency = sp.csr_matrix((np.ones(graph.indices.shape[0], np.int8), graph.indices,
                               graph.indptr), shape=(graph.n, graph.n))
    residual = adjacency[keep][:, keep]
    count, labels = csgraph.connected_components(residual, directed=False)
    sizes = np.bincount(labels, minlength=count).astype(np.int64)
    return int((sizes * (sizes - 1) // 2).sum()), sizes


def histogram(sizes: np.ndarray) -> list[list[int]]:
    """[size, count] pairs, largest size first, at most :data:`MAX_LISTED`."""
    values, counts = np.unique(sizes, return_counts=True)
    return [[int(v), int(c)] for v, c in zip(values[::-1], counts[::-1], strict=True)][:MAX_LISTED]


def make_result(graph: Graph, params: CndParams, removed: np.ndarray, claimed: int,
                **fields: Any) -> AlgorithmResult:
    """The result of ``removed`` (internal ids), its objective checked against ``claimed``."""
    removed = np.sort(np.asarray(removed, dtype=np.int64))
    if removed.shape[0] != params.k or np.unique(removed).shape[0] != params.k:
        raise RuntimeError(f"critical_nodes: {removed.shape[0]} distinct nodes, not k={params.k}")
    objective, sizes = objective_of(graph, removed)
    if objective != claimed:
        raise RuntimeError(f"critical_nodes: engine claimed {claimed}, recomputed {objective}")
    flags = np.zeros(graph.n, np.uint8)
    flags[removed] = 1
    before, _ = objective_of(graph, np.empty(0, np.int64))
    summary = {"method": params.method, "k": params.k, "objective": objective,
               "objective_before": before, "components": int(sizes.shape[0]),
               "component_sizes": histogram(sizes), **fields}
    return AlgorithmResult(summary=summary, node_values={"removed": flags},
                           arrays={"critical": removed}, node_id_fields=("critical",))
