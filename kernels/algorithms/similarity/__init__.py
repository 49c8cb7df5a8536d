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

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.common.declare import declare
from graphgpu.kernels.algorithms.similarity.cpu import jaccard_numba
from graphgpu.kernels.core.graph import INDEX_DTYPE, Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Backend, Estimate, ProgressFn

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


def pairs_of(graph: Graph, params: JaccardParams) -> tuple[np.ndarray, np.ndarray]:
    """Internal ids of the pairs to score: the given ones, or each edge ``u < v``."""
    if params.pairs is not None:
        flat = np.asarray(params.pairs, dtype=np.int64).reshape(-1, 2)
        if not flat.size:
            return np.zeros(0, INDEX_DTYPE), np.zeros(0, INDEX_DTYPE)
        ids = graph.internal_ids(flat.ravel()).reshape(-1, 2)
        return ids[:, 0].copy(), ids[:, 1].copy()
    rows = np.repeat(np.arange(graph.n, dtype=INDEX_DTYPE), graph.degrees())
    upper = graph.indices > rows
    return rows[upper], graph.indices[upper]


def _result(params: JaccardParams, us: np.ndarray, vs: np.ndarray,
            values: np.ndarray) -> AlgorithmResult:
    summary = {"mode": "edges" if params.pairs is None else "pairs", "pairs": int(values.size),
               "mean": float(values.mean()) if values.size else 0.0,
               "maximum": float(values.max()) if values.size else 0.0}
    return AlgorithmResult(summary=summary, arrays={"u": us, "v": vs, "jaccard": values},
                           node_id_fields=("u", "v"))


def jaccard_cpu(graph: Graph, params: JaccardParams, progress: ProgressFn) -> AlgorithmResult:
    """Jaccard coefficients on the CPU (Numba, a merge per pair).

    Parameters
    ----------
    graph : Graph
    params : JaccardParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        Arrays ``u``, ``v`` (internal ids, translated to original ones by the worker) and
        ``jaccard`` (float64), one entry per pair; summary per :class:`JaccardSummary`.

    Raises
    ------
    InvalidInput
        A pair names a node that is not in the graph.
    """
    us, vs = pairs_of(graph, params)
    progress(0.0, f"jaccard: {us.size:,} pairs")
    values = jaccard_numba(graph.indptr, graph.indices, us, vs)
    progress(1.0, "jaccard: done")
    return _result(params, us, vs, values)


def jaccard_gpu(graph: Graph, params: JaccardParams, progress: ProgressFn) -> AlgorithmResult:
    """Jaccard coefficients on the GPU; same contract and bit-identical values as the CPU."""
    from graphgpu.kernels.algorithms.similarity.gpu import jaccard_device

    us, vs = pairs_of(graph, params)
    progress(0.0, f"jaccard: {us.size:,} pairs")
    values = jaccard_device(graph, us, vs).get()
    progress(1.0, "jaccard: done")
    return _result(params, us, vs, values)


def estimate_jaccard(graph: Graph, params: JaccardParams, backend: Backend) -> Estimate:
    """Row entries merged (exact, from the degrees) at a measured rate, and the result size."""
    us, vs = pairs_of(graph, params)
    degrees = graph.degrees()
    merges = float(degrees[us].sum() + degrees[vs].sum())
    return Estimate(seconds=merges / MERGES_PER_SECOND[backend],
                    result_bytes=RESULT_BYTES_PER_PAIR * int(us.size),
                    detail=f"{us.size:,} pairs, {int(merges):,} row entries merged")


JACCARD = declare(
    "jaccard", "Jaccard similarity |N(u) ∩ N(v)| / |N(u) ∪ N(v)| of given node pairs or of every "
    "edge.", (JaccardParams, JaccardSummary), (jaccard_cpu, jaccard_gpu), node_params=("pairs",),
    estimate=estimate_jaccard)
