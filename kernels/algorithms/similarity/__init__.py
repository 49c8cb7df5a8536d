"""Jaccard similarity of node pairs, CPU and GPU with the same answer.

``jaccard(u, v) = |N(u) ∩ N(v)| / |N(u) ∪ N(v)|`` over the undirected neighbourhoods (a node is
not its own neighbour), 0 when both nodes are isolated, as ``networkx.jaccard_coefficient``.
Either for the given ``pairs`` of original ids, in the order given, or (``pairs`` left out) for
every edge ``u < v`` in the order of the CSR rows. Each coefficient is one merge of the two sorted
rows and one IEEE division of the two integer counts, on either backend: the values are equal
bit for bit. Weights are ignored.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.similarity import cpu, driver, gpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import Algorithm, Backend, Estimate, register_algorithm

#: Row entries merged per second (estimates), CPU (per core, Numba) and GPU.
MERGES_PER_SECOND = {"cpu": 3e8, "gpu": 2e10}
#: Bytes per pair of the result (two int64 ids and a float64).
RESULT_BYTES_PER_PAIR = 24


class JaccardParams(BaseModel):
    """Parameters of ``jaccard``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{}, {"pairs": [[0, 1], [1, 2]]}]})

    pairs: list[tuple[int, int]] | None = Field(
        None, description="Pairs [u, v] of original node ids; left out: every edge.")


class JaccardSummary(BaseModel):
    """Summary of a ``jaccard`` result."""

    mode: Literal["pairs", "edges"] = Field(description="Given pairs or every edge.")
    pairs: int = Field(description="Number of coefficients (arrays u, v, jaccard).")
    mean: float = Field(description="Mean coefficient (0 with no pairs).")
    maximum: float = Field(description="Largest coefficient (0 with no pairs).")


def estimate_jaccard(graph: Graph, params: JaccardParams, backend: Backend) -> Estimate:
    """Row entries merged (exact, from the degrees) at a measured rate, and the result size."""
    us, vs = driver.pairs_of(graph, params)
    degrees = graph.degrees()
    merges = float(degrees[us].sum() + degrees[vs].sum())
    return Estimate(seconds=merges / MERGES_PER_SECOND[backend],
                    result_bytes=RESULT_BYTES_PER_PAIR * int(us.size),
                    detail=f"{us.size:,} pairs, {int(merges):,} row entries merged")


JACCARD = register_algorithm(Algorithm(
    name="jaccard", params_model=JaccardParams, result_model=JaccardSummary, cpu=cpu.jaccard,
    gpu=gpu.jaccard, node_params=("pairs",), estimate=estimate_jaccard,
    summary="Jaccard similarity |N(u) ∩ N(v)| / |N(u) ∪ N(v)| of given node pairs or of every "
            "edge."))
