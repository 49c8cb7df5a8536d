"""What a ``betweenness_centrality`` job does on either backend: the sources (NetworkX's
sample), NetworkX's rescaling of the raw sums, and the result.

:mod:`.cpu` and :mod:`.gpu` compute the raw sums of dependencies over the sources; both call
:func:`sources_of` before and :func:`result` after.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import INDEX_DTYPE, Graph
from graphgpu.kernels.core.registry import AlgorithmResult


def sources_of(graph: Graph, params: Any) -> tuple[np.ndarray, bool]:
    """Internal ids of the sources and whether they are all nodes (NetworkX's sampling)."""
    if params.sources is not None:
        if params.k is not None:
            raise InvalidInput("give k or sources, not both", field="sources")
        if len(set(params.sources)) != len(params.sources) or not params.sources:
            raise InvalidInput("sources must be distinct and not empty", field="sources")
        chosen = graph.internal_ids(params.sources)
        return chosen, len(params.sources) == graph.n
    k = params.k
    if k is not None and k > graph.n:
        raise InvalidInput(f"k={k} is larger than the number of nodes ({graph.n})", field="k")
    if k is None or k == graph.n:
        return np.arange(graph.n, dtype=INDEX_DTYPE), True
    chosen = random.Random(params.seed).sample(graph.node_ids.tolist(), k)
    return graph.internal_ids(chosen), False


def rescale(raw: np.ndarray, n: int, sources: np.ndarray, exact: bool, normalized: bool,
            endpoints: bool) -> np.ndarray:
    """NetworkX's ``_rescale`` for an undirected graph, on an array.

    Parameters
    ----------
    raw : ndarray of float64
        Sums of dependencies over the sources (ordered pairs).
    n : int
        Nodes in the graph.
    sources : ndarray of int
        Internal ids of the sources.
    exact : bool
        Every node was a source.
    normalized, endpoints : bool
    """
    out = raw.copy()
    big_n = n if endpoints else n - 1
    if big_n < 2:
        return out
    k_source = big_n if exact else int(sources.shape[0])
    if exact or endpoints:
        scale = 1 / (k_source * (big_n - 1)) if normalized else big_n / (k_source * 2)
        if scale != 1:
            out *= scale
        return out
    if normalized:
        source_scale = 1 / ((k_source - 1) * (big_n - 1)) if k_source > 1 else math.nan
        other_scale = 1 / (k_source * (big_n - 1))
    else:
        source_scale = big_n / ((k_source - 1) * 2) if k_source > 1 else math.nan
        other_scale = big_n / (k_source * 2)
    is_source = np.zeros(n, dtype=bool)
    is_source[sources] = True
    return out * np.where(is_source, source_scale, other_scale)

def result(graph: Graph, params: Any, sources: np.ndarray, exact: bool,
            raw: np.ndarray) -> AlgorithmResult:
    """The rescaled scores (``betweenness`` per node) and the summary (``BetweennessSummary``)."""
    scores = rescale(raw, graph.n, sources, exact, params.normalized, params.endpoints)
    finite = np.where(np.isnan(scores), -np.inf, scores)
    best = float(finite.max())
    # the first node within rounding of the best, so both backends name the same one
    top = int(np.flatnonzero(finite >= best - 1e-9 * max(abs(best), 1.0))[0])
    summary = {"sources": int(sources.shape[0]), "exact": exact,
               "normalized": params.normalized, "endpoints": params.endpoints,
               "top_node": int(graph.node_ids[top])}
    return AlgorithmResult(summary=summary, node_values={"betweenness": scores})
