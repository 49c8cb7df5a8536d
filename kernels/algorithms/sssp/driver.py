"""What an ``sssp`` job does on either backend: the source, the weights, the result.

:mod:`.cpu` and :mod:`.gpu` pass :func:`run` their solver, so both read the parameters and build
the summary the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.common import direction
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: ``(graph, source, weight, in_weight, progress) -> (distance, parent)``, host arrays: paths
#: follow the out-rows (weights ``weight``), parents are found in the in-rows (``in_weight``).
Solve = Callable[[Graph, int, np.ndarray, np.ndarray, ProgressFn], tuple[np.ndarray, np.ndarray]]


def arc_weights(graph: Graph, dtype: str) -> np.ndarray:
    """Arc weights in ``dtype``; ones for an unweighted graph; negative weights refused."""
    return _cast(graph.weights, graph.indices.shape[0], dtype)


def in_arc_weights(graph: Graph, weight: np.ndarray, dtype: str) -> np.ndarray:
    """The weights of the in-rows (:func:`..common.direction.backward`) in ``dtype``:
    ``weight`` itself for an undirected graph."""
    if not graph.directed:
        return weight
    return _cast(graph.in_weights, graph.in_indices.shape[0], dtype)


def _cast(weights: np.ndarray | None, arcs: int, dtype: str) -> np.ndarray:
    if weights is None:
        return np.ones(arcs, dtype=dtype)
    if weights.size and weights.min() < 0:
        raise InvalidInput("sssp needs non-negative weights", field="weights")
    return weights.astype(dtype)


def run(graph: Graph, params: Any, progress: ProgressFn, solve: Solve) -> AlgorithmResult:
    """An ``sssp`` job (``params``: ``SsspParams``) with a backend's ``solve``."""
    source = int(graph.internal_ids(params.source)[0])
    graph = direction.oriented(graph, params.direction)
    weight = arc_weights(graph, params.dtype)
    dist, parent = solve(graph, source, weight, in_arc_weights(graph, weight, params.dtype),
                         progress)
    finite = np.isfinite(dist)
    summary = {"source": int(params.source), "reached": int(np.count_nonzero(finite)),
               "max_distance": float(dist[finite].max())}
    progress(1.0, "sssp: done")
    return AlgorithmResult(summary=summary, node_values={"distance": dist, "parent": parent},
                           node_id_fields=("parent",))
