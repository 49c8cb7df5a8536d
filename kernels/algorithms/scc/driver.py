"""What a ``strongly_connected_components`` job does on either backend: number the components
by smallest member and build the result.

:mod:`.cpu` and :mod:`.gpu` label every node with the smallest id of its component; both number
the labels with :func:`number_components` (NumPy or CuPy) and hand them to :func:`result`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.registry import AlgorithmResult


def number_components(xp: Any, smallest: Any) -> tuple[Any, Any]:
    """Component numbers ``0..count-1`` in order of smallest member, and the sizes.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``.
    smallest : array of int
        Per node, the smallest node id of its component.
    """
    n = smallest.shape[0]
    is_root = smallest == xp.arange(n, dtype=smallest.dtype)
    number = (xp.cumsum(is_root, dtype=xp.int64) - 1)[smallest]
    count = reductions.count_true(is_root)
    sizes = reductions.bincount(number, count) if n else xp.zeros(0, xp.int64)
    return number, sizes


def result(number: np.ndarray, sizes: np.ndarray) -> AlgorithmResult:
    """Component numbers per node, the sizes, and the summary (``SccSummary``)."""
    summary = {"count": int(sizes.shape[0]), "largest": int(sizes.max()) if sizes.size else 0,
               "singletons": int((sizes == 1).sum())}
    return AlgorithmResult(summary=summary, node_values={"component": number},
                           arrays={"sizes": sizes.astype(np.int64)})
