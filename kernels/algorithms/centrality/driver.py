"""What a centrality job does on either backend: ranking, closeness values, rank agreement.

:mod:`.cpu` and :mod:`.gpu` compute volumes and closeness sums (NumPy or CuPy arrays) and pass
them to :func:`daccer` and :func:`closeness`, which turn them into the results the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn, progress_part

#: ``(graph, radius, max_batch_bytes, progress) -> volume`` per node, in the backend's arrays.
VolumesFn = Callable[[Graph, int, int, ProgressFn], Any]
#: ``(graph, max_batch_bytes, progress) -> (total, reached, harmonic)`` per node, likewise.
SumsFn = Callable[[Graph, int, ProgressFn], tuple[Any, Any, Any]]


def ranking(values: np.ndarray) -> np.ndarray:
    """Internal ids by value, largest first; ties by id, smallest first."""
    return np.argsort(-values, kind="stable").astype(np.int64)


def closeness_values(total: np.ndarray, reached: np.ndarray, n: int) -> np.ndarray:
    """Wasserman-Faust closeness from distance sums and reached counts (NetworkX's operations)."""
    out = np.zeros(n, dtype=np.float64)
    ok = total > 0
    if n > 1:
        r = reached[ok].astype(np.float64)
        out[ok] = (r / total[ok]) * (r / (n - 1))
    return out


def rank_agreement(volume: np.ndarray, closeness: np.ndarray) -> dict[str, float | None]:
    """Spearman, Kendall tau-b and top-1 % / top-10 % overlap of two per-node scores."""
    from scipy import stats

    n = volume.shape[0]
    defined = n > 1 and np.ptp(volume) > 0 and np.ptp(closeness) > 0
    out: dict[str, float | None] = {
        "spearman": float(stats.spearmanr(volume, closeness).statistic) if defined else None,
        "kendall": float(stats.kendalltau(volume, closeness).statistic) if defined else None}
    by_volume, by_closeness = ranking(volume), ranking(closeness)
    for name, share in (("top1pct_overlap", 0.01), ("top10pct_overlap", 0.10)):
        k = max(1, math.ceil(share * n))
        out[name] = np.intersect1d(by_volume[:k], by_closeness[:k]).size / k
    return out


def daccer(graph: Graph, params: Any, progress: ProgressFn, volumes: VolumesFn,
           closeness_sums: SumsFn, host: Callable[[Any], np.ndarray]) -> AlgorithmResult:
    """A ``daccer`` job (``params``: ``DaccerParams``) with a backend's functions; ``host``
    copies their arrays to NumPy."""
    split = 0.5 if params.compare_closeness else 1.0
    volume = host(volumes(graph, params.radius, params.max_batch_bytes,
                          progress_part(progress, 0.0, split)))
    order = ranking(volume)
    summary: dict[str, Any] = {"radius": params.radius, "top_volume": int(volume[order[0]])}
    if params.compare_closeness:
        total, reached, _ = closeness_sums(graph, params.max_batch_bytes,
                                           progress_part(progress, split, 1.0))
        summary.update(rank_agreement(volume, closeness_values(host(total), host(reached),
                                                               graph.n)))
    progress(1.0, "daccer: done")
    return AlgorithmResult(summary=summary, node_values={"volume": volume},
                           arrays={"ranking": order, "top": order[:params.top]},
                           node_id_fields=("ranking", "top"))


def closeness(graph: Graph, params: Any, progress: ProgressFn, closeness_sums: SumsFn,
              host: Callable[[Any], np.ndarray]) -> AlgorithmResult:
    """A ``closeness`` job (``params``: ``ClosenessParams``), as :func:`daccer`."""
    total, reached, harmonic = (host(a) for a in closeness_sums(graph, params.max_batch_bytes,
                                                                progress))
    values = harmonic if params.harmonic else closeness_values(total, reached, graph.n)
    progress(1.0, "closeness: done")
    return AlgorithmResult(
        summary={"harmonic": params.harmonic, "max": float(values.max()),
                 "mean": float(values.mean())},
        node_values={"closeness": values})
