"""Betweenness centrality (Brandes), exact or from ``k`` sampled sources, CPU and GPU.

Brandes' algorithm on hop distances (weights are ignored, as NetworkX's ``weight=None``): from each
source a BFS counts shortest paths (``sigma``), then the dependencies ``delta[v] = sum over
successors w of sigma[v] / sigma[w] * (1 + delta[w])`` are summed back level by level. Both
backends compute every source's path counts and dependencies by pulling from the neighbours in
CSR order, so the per-source values agree bit for bit; only the order in which the sources'
contributions are added differs (the scores agree to rounding, ~1e-15 relative).

The CPU spreads the sources over the cores (Numba); the GPU runs a batch of sources at once, one
thread per (source, node) for each BFS level (``betweenness.cu``).

Scores are rescaled exactly as ``networkx.betweenness_centrality(G, k, normalized, weight=None,
endpoints, seed)`` does for an undirected graph, including its treatment of sampled sources when
endpoints are excluded. ``k`` sources are drawn with ``random.Random(seed).sample`` from the node
ids in ascending order: a NetworkX graph whose nodes were added in ascending order gets the same
sources from NetworkX with the same ``seed`` (hence the same scores). Or the sample is given as
``sources`` (the NetworkX backend draws it as NetworkX does, from any node order and seed).
"""

from __future__ import annotations

import math
import os
import random

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.betweenness.cpu import brandes_numba
from graphgpu.kernels.algorithms.common.declare import declare
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import INDEX_DTYPE, Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Backend, Estimate, ProgressFn

#: Arc visits per second (three passes over every arc per source), for estimates: measured on
#: the H100 machine (16 cores) on ca-CondMat exact (bench/results/communities.md).
ARCS_PER_SECOND = {"cpu": 1.7e9, "gpu": 3e10}


class BetweennessParams(BaseModel):
    """Parameters of ``betweenness_centrality``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{}, {"k": 16, "seed": 7, "endpoints": True}]})

    k: int | None = Field(None, ge=1, description="Sample this many sources (approximation); "
                                                  "left out: every node (exact).")
    seed: int = Field(0, description="Seed of the source sample (Python's random.Random).")
    sources: list[int] | None = Field(
        None, description="Original ids of the sampled sources, instead of k and seed (scores "
                          "rescaled as NetworkX's for that sample).")
    normalized: bool = Field(True, description="Rescale as NetworkX's normalized=True.")
    endpoints: bool = Field(False, description="Count the end nodes of each path.")


class BetweennessSummary(BaseModel):
    """Summary of a ``betweenness_centrality`` result."""

    sources: int = Field(description="Sources the paths were counted from.")
    exact: bool = Field(description="Every node was a source.")
    normalized: bool
    endpoints: bool
    top_node: int = Field(description="Original id of a node of highest score (smallest id on "
                                      "ties to within 1e-9 relative).")


def sources_of(graph: Graph, params: BetweennessParams) -> tuple[np.ndarray, bool]:
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


def _result(graph: Graph, params: BetweennessParams, sources: np.ndarray, exact: bool,
            raw: np.ndarray) -> AlgorithmResult:
    scores = rescale(raw, graph.n, sources, exact, params.normalized, params.endpoints)
    finite = np.where(np.isnan(scores), -np.inf, scores)
    best = float(finite.max())
    # the first node within rounding of the best, so both backends name the same one
    top = int(np.flatnonzero(finite >= best - 1e-9 * max(abs(best), 1.0))[0])
    summary = {"sources": int(sources.shape[0]), "exact": exact,
               "normalized": params.normalized, "endpoints": params.endpoints,
               "top_node": int(graph.node_ids[top])}
    return AlgorithmResult(summary=summary, node_values={"betweenness": scores})


def betweenness_cpu(graph: Graph, params: BetweennessParams,
                    progress: ProgressFn) -> AlgorithmResult:
    """Betweenness on the CPU (Numba Brandes, sources over the cores).

    Parameters
    ----------
    graph : Graph
    params : BetweennessParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``betweenness`` (float64) per node, rescaled as NetworkX; summary per
        :class:`BetweennessSummary`.

    Raises
    ------
    InvalidInput
        ``k`` larger than the number of nodes.
    """
    sources, exact = sources_of(graph, params)
    progress(0.0, f"betweenness: {sources.shape[0]:,} sources")
    workers = max(1, min(len(os.sched_getaffinity(0)), int(sources.shape[0])))
    raw = brandes_numba(graph.indptr, graph.indices, sources, params.endpoints, workers)
    progress(1.0, "betweenness: done")
    return _result(graph, params, sources, exact, raw)


def betweenness_gpu(graph: Graph, params: BetweennessParams,
                    progress: ProgressFn) -> AlgorithmResult:
    """Betweenness on the GPU (batched Brandes); same contract as :func:`betweenness_cpu`."""
    from graphgpu.kernels.algorithms.betweenness.gpu import brandes_device

    sources, exact = sources_of(graph, params)
    raw = brandes_device(graph, sources, params.endpoints, progress)
    progress(1.0, "betweenness: done")
    return _result(graph, params, sources, exact, raw)


def estimate_betweenness(graph: Graph, params: BetweennessParams, backend: Backend) -> Estimate:
    """Three passes over every arc per source, at a measured rate; one float per node."""
    sources = graph.n if params.k is None else min(params.k, graph.n)
    if params.sources is not None:
        sources = len(params.sources)
    arcs = 3.0 * sources * (2 * graph.m + graph.n)
    return Estimate(seconds=arcs / ARCS_PER_SECOND[backend], result_bytes=8 * graph.n,
                    detail=f"{sources:,} sources x {2 * graph.m:,} arcs")


BETWEENNESS = declare(
    "betweenness_centrality", "Betweenness centrality (Brandes), exact or from k sampled sources, "
    "normalized as NetworkX.", (BetweennessParams, BetweennessSummary),
    (betweenness_cpu, betweenness_gpu), node_params=("sources",), estimate=estimate_betweenness)
