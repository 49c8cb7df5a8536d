"""What a ``jaccard`` job does on either backend: the pairs to score and the result.

:mod:`.cpu` and :mod:`.gpu` compute the coefficients of the pairs from :func:`pairs_of`, and
hand them to :func:`result`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphgpu.kernels.core.graph import INDEX_DTYPE, Graph
from graphgpu.kernels.core.registry import AlgorithmResult


def pairs_of(graph: Graph, params: Any) -> tuple[np.ndarray, np.ndarray]:
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


def result(params: Any, us: np.ndarray, vs: np.ndarray,
            values: np.ndarray) -> AlgorithmResult:
    """The pairs, their coefficients and the summary (``JaccardSummary``)."""
    summary = {"mode": "edges" if params.pairs is None else "pairs", "pairs": int(values.size),
               "mean": float(values.mean()) if values.size else 0.0,
               "maximum": float(values.max()) if values.size else 0.0}
    return AlgorithmResult(summary=summary, arrays={"u": us, "v": vs, "jaccard": values},
                           node_id_fields=("u", "v"))
