"""Betweenness centrality (Brandes), exact or from ``k`` sampled sources, CPU and GPU.

Brandes' algorithm: from each source the shortest paths are counted (``sigma``) along the
*tight* arcs, then the dependencies ``delta[v] = sum over tight arcs v -> w of sigma[v] /
sigma[w] * (1 + delta[w])`` are summed back in reverse distance order. Path lengths are hop
counts (an unweighted graph, or ``weighted=false``: NetworkX's ``weight=None``) or the edge
weights, which must be positive (NetworkX's ``weight="weight"``). Directed graphs are served
natively: paths follow out-edges, as NetworkX's.

Ties (equal path lengths) are decided alike on both backends: a distance is the smallest, over
paths, of the path's weights added left to right in float64 (Dijkstra on the CPU, a
Bellman-Ford fixpoint on the GPU: both compute exactly that value), and an arc ``u -> v`` of
weight ``w`` is tight when ``dist[u] + w == dist[v]`` exactly in float64 and ``dist[u] <
dist[v]``. Integer weights (sums below 2**53) are exact, so the counts are NetworkX's; for other
floats the rule is NetworkX's own exact comparison of the same sums, except for an arc whose
weight vanishes in the rounding of ``dist[u]`` (never tight here; NetworkX's answer then depends
on its heap order). Zero weights are refused for the same reason.

Both backends pull every node's path count from its in-arcs and its dependency from its out-arcs
in CSR order (the GPU sums the rows of hub nodes in a fixed tree instead; path counts are
integers, exact either way), so the per-source values agree to rounding (the GPU may also fuse a
multiply-add), and the order in which the sources' contributions are added differs (the scores
agree to ~1e-15 relative).

The CPU spreads the sources over the cores (Numba); the GPU runs a batch of sources at once: by
hop counts a warp per node of each level's frontier list, up to 4 sources per lane (``hops.cu``;
the dependencies as ``sigma[v] * sum of (1 + delta[w]) / sigma[w]``, equal to rounding), with
weights a thread per (node, source) for each step, a block per entry of a hub's row
(``betweenness.cu``).

Scores are rescaled exactly as ``networkx.betweenness_centrality(G, k, normalized, weight,
endpoints, seed)`` does (a directed graph's unnormalised sums are not halved), including its
treatment of sampled sources when endpoints are excluded. ``k`` sources are drawn with
``random.Random(seed).sample`` from the node ids in ascending order: a NetworkX graph whose
nodes were added in ascending order gets the same sources from NetworkX with the same ``seed``
(hence the same scores). Or the sample is given as ``sources`` (the NetworkX backend draws it as
NetworkX does, from any node order and seed).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.betweenness import cpu, gpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    NODE_ID_VALUE,
    Algorithm,
    Backend,
    Estimate,
    register_algorithm,
)

#: Arc visits per second (three passes over every arc per source), for estimates: measured on
#: the H100 machine (16 cores) on ca-CondMat exact (bench/results/communities.md).
ARCS_PER_SECOND = {"cpu": 1.7e9, "gpu": 3e10}
#: Weighted paths (a heap on the CPU, relaxation rounds on the GPU) against hop counts: the CPU
#: measured 3.7x (ca-GrQc, weights 1..9, 400 sources, development host); the GPU not yet.
WEIGHTED_FACTOR = 4.0


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
    weighted: bool = Field(True, description="Path lengths are the edge weights (positive) "
                                             "when the graph has them; false: hop counts.")


class BetweennessSummary(BaseModel):
    """Summary of a ``betweenness_centrality`` result."""

    sources: int = Field(description="Sources the paths were counted from.")
    exact: bool = Field(description="Every node was a source.")
    normalized: bool
    endpoints: bool
    weighted: bool = Field(description="Paths were measured by the edge weights.")
    top_node: int = Field(description="Original id of a node of highest score (smallest id on "
                                      "ties to within 1e-9 relative).",
                          json_schema_extra=NODE_ID_VALUE)


def estimate_betweenness(graph: Graph, params: BetweennessParams, backend: Backend) -> Estimate:
    """Three passes over every arc per source, at a measured rate (weighted: times
    :data:`WEIGHTED_FACTOR`); one float per node; on the GPU, the graph and a batch's state
    (sources per batch grow with k, :func:`.gpu.state_bytes`)."""
    sources = graph.n if params.k is None else min(params.k, graph.n)
    if params.sources is not None:
        sources = len(params.sources)
    arcs = int(graph.indices.shape[0])
    work = 3.0 * sources * (arcs + graph.n)
    weighted = params.weighted and graph.weights is not None
    if weighted:
        work *= WEIGHTED_FACTOR
    device = graph.nbytes() + gpu.state_bytes(graph.n, arcs, sources, weighted) + 8 * graph.n
    return Estimate(seconds=work / ARCS_PER_SECOND[backend], result_bytes=8 * graph.n,
                    device_bytes=device if backend == "gpu" else None,
                    detail=f"{sources:,} sources x {arcs:,} arcs")


BETWEENNESS = register_algorithm(Algorithm(
    name="betweenness_centrality", params_model=BetweennessParams,
    result_model=BetweennessSummary, cpu=cpu.betweenness, gpu=gpu.betweenness,
    node_params=("sources",), estimate=estimate_betweenness, directed="native",
    summary="Betweenness centrality (Brandes; hops or positive weights; paths follow "
            "out-edges on directed graphs), exact or from k sampled sources, normalized as "
            "NetworkX."))
