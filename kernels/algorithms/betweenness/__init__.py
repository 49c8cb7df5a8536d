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

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.betweenness import cpu, gpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import Algorithm, Backend, Estimate, register_algorithm

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


def estimate_betweenness(graph: Graph, params: BetweennessParams, backend: Backend) -> Estimate:
    """Three passes over every arc per source, at a measured rate; one float per node."""
    sources = graph.n if params.k is None else min(params.k, graph.n)
    if params.sources is not None:
        sources = len(params.sources)
    arcs = 3.0 * sources * (2 * graph.m + graph.n)
    return Estimate(seconds=arcs / ARCS_PER_SECOND[backend], result_bytes=8 * graph.n,
                    detail=f"{sources:,} sources x {2 * graph.m:,} arcs")


BETWEENNESS = register_algorithm(Algorithm(
    name="betweenness_centrality", params_model=BetweennessParams,
    result_model=BetweennessSummary, cpu=cpu.betweenness, gpu=gpu.betweenness,
    node_params=("sources",), estimate=estimate_betweenness,
    summary="Betweenness centrality (Brandes), exact or from k sampled sources, normalized as "
            "NetworkX."))
