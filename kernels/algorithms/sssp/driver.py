"""What an ``sssp`` job does on either backend: the source, the weights, the result.

:mod:`.cpu` and :mod:`.gpu` pass :func:`run` their solver, so both read the parameters and build
the summary the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: ``(graph, source, weight, progress) -> (distance, parent)``, host arrays.
Solve = Callable[[Graph, int, np.ndarray, ProgressFn], tuple[np.ndarray, np.ndarray]]


def arc_weights(graph: Graph, dtype: str) -> np.ndarray:
    """Arc weights in ``dtype``; ones for an unweighted graph; negative weights refused."""
    if graph.weights is None:
        return np.ones(graph.indices.shape[0], dtype=dtype)
    if graph.weights.size and graph.weights.min() < 0:
        raise InvalidInput("sssp needs non-negative weights", field="weights")
    return graph.weights.astype(dtype)


def run(graph: Graph, params: Any, progress: ProgressFn, solve: Solve) -> AlgorithmResult:
    """An ``sssp`` job (``params``: ``SsspParams``) with a backend's ``solve``."""
    source = int(graph.internal_ids(params.source)[0])
    dist, parent = solve(graph, source, arc_weights(graph, params.dtype), progress)
    finite = np.isfinite(dist)
    summary = {"source": int(params.source), "reached": int(np.count_nonzero(finite)),
               "max_distance": float(dist[finite].max())}
    progress(1.0, "sssp: done")
    return AlgorithmResult(summary=summary, node_values={"distance": dist, "parent": parent},
                           node_id_fields=("parent",))
