"""What a ``pagerank`` job does on either backend: the arrays it iterates with, the summary.

:mod:`.cpu` and :mod:`.gpu` pass :func:`run` their arrays and power iteration, so both read the
parameters and build the result the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: ``(state, params, progress) -> (rank, iterations, converged, residual)``: a backend's power
#: iteration over :func:`prepare`'s state; the ranks as an array of the backend (the GPU's stay on
#: the device: the worker hands them back through its pinned staging buffer).
Iterate = Callable[[dict[str, Any], Any, ProgressFn], tuple[Any, int, bool, float]]


def _distribution(graph: Graph, values: dict[int, float] | None, what: str, xp: Any
                  ) -> Any:
    """A node -> weight mapping as a normalised vector over internal ids; None if not given."""
    if values is None:
        return None
    ids = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
    weights = np.fromiter(values.values(), dtype=np.float64, count=len(values))
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise InvalidInput(f"{what} weights must be finite and non-negative", field=what)
    out = np.zeros(graph.n, np.float64)
    if ids.size:
        try:
            out[graph.internal_ids(ids)] = weights
        except InvalidInput as exc:
            raise InvalidInput(exc.message, field=what) from None
    total = out.sum()
    if total <= 0:
        raise InvalidInput(f"{what} must give some node a positive weight", field=what)
    return xp.asarray(out / total)


def host_arrays(graph: Graph) -> dict[str, Any]:
    """The out- and in-CSR with weights (the CSR twice for an undirected graph)."""
    if graph.directed:
        return {"indptr": graph.indptr, "weights": graph.weights, "in_indptr": graph.in_indptr,
                "in_indices": graph.in_indices, "in_weights": graph.in_weights}
    return {"indptr": graph.indptr, "weights": graph.weights, "in_indptr": graph.indptr,
            "in_indices": graph.indices, "in_weights": graph.weights}


def prepare(graph: Graph, params: Any, arrays: dict[str, Any], xp: Any = np
            ) -> dict[str, Any]:
    """What both backends iterate with, as arrays of ``xp`` (``arrays``: :func:`host_arrays`
    or their device copies): the in-CSR and its weights (None: unweighted), ``1 / W`` (0 when
    dangling), the dangling mask, ``p`` and ``d`` (see the module notes).

    Raises
    ------
    InvalidInput
        A negative weight, or a bad personalization / dangling mapping.
    """
    n = graph.n
    weights = arrays["weights"] if params.weighted else None
    in_weights = arrays["in_weights"] if params.weighted else None
    indptr = arrays["indptr"]
    if weights is not None and weights.size and float(weights.min()) < 0:
        raise InvalidInput("pagerank needs non-negative weights", field="weights")
    if weights is None:
        out_weight = xp.diff(indptr).astype(xp.float64)
    else:
        src = xp.searchsorted(indptr, xp.arange(weights.shape[0]), side="right") - 1
        out_weight = reductions.bincount(src, n, weights)
    dangling = out_weight == 0
    inv_out = xp.where(dangling, 0.0, 1.0 / xp.where(dangling, 1.0, out_weight))
    p = _distribution(graph, params.personalization, "personalization", xp)
    if p is None:
        p = xp.full(n, 1.0 / max(n, 1))
    d = _distribution(graph, params.dangling, "dangling", xp)
    return {"in_indptr": arrays["in_indptr"], "in_indices": arrays["in_indices"],
            "in_weights": in_weights, "inv_out": inv_out, "dangling": dangling, "p": p,
            "d": p if d is None else d}


def run(graph: Graph, params: Any, progress: ProgressFn, arrays: dict[str, Any], xp: Any,
        iterate: Iterate) -> AlgorithmResult:
    """A ``pagerank`` job (``params``: ``PagerankParams``) on ``arrays`` (:func:`host_arrays` or
    their device copies, arrays of ``xp``) with a backend's power iteration ``iterate``.

    Raises
    ------
    InvalidInput
        A negative weight, an unknown node or no positive weight in a distribution.
    """
    progress(0.0, "pagerank: preparing")
    state = prepare(graph, params, arrays, xp)
    rank, iterations, converged, residual = iterate(state, params, progress)
    progress(1.0, "pagerank: done")
    return AlgorithmResult(
        summary={"alpha": params.alpha, "iterations": iterations, "converged": converged,
                 "residual": residual,
                 "dangling_nodes": reductions.count_true(state["dangling"])},
        node_values={"pagerank": rank})
