"""What a ``betweenness_centrality`` job does on either backend: the sources (NetworkX's
sample), the path lengths (hops or positive weights), NetworkX's rescaling of the raw sums, and
the result.

:mod:`.cpu` and :mod:`.gpu` compute the raw sums of dependencies over the sources; both call
:func:`sources_of` and :func:`lengths` before and :func:`result` after.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.common.direction import backward
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
    # random.sample picks positions of the population, so drawn from range(n) it gives the
    # positions NetworkX's draw from the ascending ids takes, which are our internal ids; no
    # list of n Python ints (rmat22: ~0.1 s of every call)
    chosen = random.Random(params.seed).sample(range(graph.n), k)
    return np.array(chosen, dtype=INDEX_DTYPE), False


def lengths(graph: Graph, params: Any) -> tuple[np.ndarray, np.ndarray]:
    """Arc lengths of the out-rows and of the in-rows (:func:`..common.direction.backward`), as
    float64; two empty arrays for hop counts (an unweighted graph, or ``weighted=False``).

    Raises
    ------
    InvalidInput
        A weight that is not positive (``field="weights"``): a zero-weight arc puts two nodes at
        one distance with a shortest path between them, where Brandes' counts (and NetworkX's,
        which then depend on its heap order) are not defined.
    """
    if not params.weighted or graph.weights is None:
        empty = np.empty(0, dtype=np.float64)
        return empty, empty
    if graph.weights.size and graph.weights.min() <= 0:
        raise InvalidInput("weighted betweenness needs positive weights (or weighted=false for "
                           "hop counts)", field="weights")
    _, _, in_weights = backward(graph)
    return graph.weights.astype(np.float64), in_weights.astype(np.float64)


def rescale(xp: Any, raw: Any, n: int, sources: np.ndarray, exact: bool, normalized: bool,
            endpoints: bool, directed: bool) -> Any:
    """NetworkX's ``_rescale``, on an array (one product per score on either backend).

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``: where ``raw`` lies (the scores stay there).
    raw : ndarray of float64
        Sums of dependencies over the sources (ordered pairs).
    n : int
        Nodes in the graph.
    sources : ndarray of int
        Internal ids of the sources.
    exact : bool
        Every node was a source.
    normalized, endpoints : bool
    directed : bool
        A directed graph's pairs are ordered: unnormalised sums are not halved.
    """
    big_n = n if endpoints else n - 1
    if big_n < 2:
        return raw.copy()
    k_source = big_n if exact else int(sources.shape[0])
    correction = 1 if directed else 2
    if exact or endpoints:
        scale = 1 / (k_source * (big_n - 1)) if normalized else big_n / (k_source * correction)
        return raw * scale
    if normalized:
        source_scale = 1 / ((k_source - 1) * (big_n - 1)) if k_source > 1 else math.nan
        other_scale = 1 / (k_source * (big_n - 1))
    else:
        source_scale = big_n / ((k_source - 1) * correction) if k_source > 1 else math.nan
        other_scale = big_n / (k_source * correction)
    out = raw * other_scale
    at = xp.asarray(sources)
    out[at] = raw[at] * source_scale
    return out


def result(xp: Any, graph: Graph, params: Any, sources: np.ndarray, exact: bool,
           raw: Any) -> AlgorithmResult:
    """The rescaled scores (``betweenness`` per node, on the device where ``xp`` is ``cupy``:
    the worker copies them out) and the summary (``BetweennessSummary``)."""
    scores = rescale(xp, raw, graph.n, sources, exact, params.normalized, params.endpoints,
                     graph.directed)
    finite = xp.where(xp.isnan(scores), -xp.inf, scores)
    best = float(finite.max())
    # the first node within rounding of the best, so both backends name the same one
    top = int(xp.flatnonzero(finite >= best - 1e-9 * max(abs(best), 1.0))[0])
    summary = {"sources": int(sources.shape[0]), "exact": exact,
               "normalized": params.normalized, "endpoints": params.endpoints,
               "weighted": bool(params.weighted and graph.weights is not None),
               "top_node": int(graph.node_ids[top])}
    return AlgorithmResult(summary=summary, node_values={"betweenness": scores})
