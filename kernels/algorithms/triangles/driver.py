"""What a ``triangles`` job does on either backend: DAG ranks, clustering, the result.

The functions take the array module (NumPy or CuPy) so that :mod:`.cpu` and :mod:`.gpu` share
them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.common.dag import degree_rank
from graphgpu.kernels.core.registry import AlgorithmResult

__all__ = ["clustering", "degree_rank", "result"]


def clustering(xp: Any, triangles: Any, degrees: Any) -> Any:
    """Local clustering from per-node triangles and degrees (NetworkX's definition)."""
    pairs = (degrees * (degrees - 1)).astype(xp.int64)
    return xp.where(pairs > 0, (2 * triangles).astype(xp.float64)
                    / xp.maximum(pairs, 1).astype(xp.float64), 0.0)


def result(triangles: np.ndarray, local: np.ndarray, degrees: np.ndarray) -> AlgorithmResult:
    """The ``triangles`` result from per-node counts, clustering and degrees (host arrays)."""
    total = int(triangles.sum()) // 3
    triads = int((degrees.astype(np.int64) * (degrees - 1)).sum()) // 2
    summary = {"triangles": total,
               "transitivity": 3 * total / triads if total else 0.0,
               "average_clustering": float(local.mean()) if local.size else 0.0}
    return AlgorithmResult(summary=summary,
                           node_values={"triangles": triangles, "clustering": local})
