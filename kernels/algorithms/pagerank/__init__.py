"""PageRank by power iteration, CPU and GPU, with NetworkX's conventions.

The iteration is NetworkX's ``pagerank`` (its SciPy version) step for step::

    x <- alpha * (x P + (sum of x over dangling nodes) * d) + (1 - alpha) * p

where ``P`` is the row-stochastic transition matrix (an arc ``u -> v`` has probability
``w(u, v) / W(u)``, ``W(u)`` the total weight out of ``u``; unweighted graphs count every arc as
1; an undirected edge is an arc each way), ``p`` the personalization vector (uniform unless
given; nodes left out get 0), ``d`` the dangling distribution (``p`` unless given) and the start
``x = 1/n``. A node is dangling when ``W(u) == 0``. It stops when the L1 change of an iteration
is below ``n * tol``; after ``max_iter`` iterations without that, the ranks so far are returned
with ``converged: false`` (NetworkX raises instead).

Both backends *pull* along the in-arcs: ``x'[v] = sum over u -> v of y[u] w(u, v)`` with
``y = x / W`` (0 for dangling nodes), the in-CSR of a directed graph (the CSR itself for an
undirected one). The CPU is a Numba ``prange`` over rows; the GPU a kernel of lane groups per
row (4..32 lanes by mean in-degree) that also writes the next ``y``, the dangling mass and the
L1 change (block sums, one atomic per block), so one launch and one 16-byte read per iteration.
Both compute in float64; they agree to rounding (1e-12 relative in practice).

Directed graphs run natively.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.common.declare import arcs_and_nodes, declare
from graphgpu.kernels.core.device import cupy
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Backend, Estimate, ProgressFn

#: Seconds per arc and iteration (estimates), measured on the H100 machine
#: (bench/results/analytics.md), rounded up.
SECONDS_PER_ARC = {"cpu": 3e-9, "gpu": 2e-11}


class PagerankParams(BaseModel):
    """Parameters of ``pagerank``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{}, {"alpha": 0.9, "personalization": {"0": 1.0}, "tol": 1e-10}]})

    alpha: float = Field(0.85, ge=0.0, le=1.0, description="Damping factor.")
    personalization: dict[int, float] | None = Field(
        None, description="Original node id -> non-negative weight of the restart distribution "
                          "(normalised; nodes left out get 0). Default: uniform.")
    dangling: dict[int, float] | None = Field(
        None, description="Original node id -> non-negative weight of where dangling nodes "
                          "jump (normalised). Default: the personalization.")
    weighted: bool = Field(True, description="Use edge weights (an unweighted graph counts "
                                             "every arc as 1).")
    tol: float = Field(1e-6, gt=0.0, description="Stop when the L1 change is below n * tol.")
    max_iter: int = Field(100, ge=1, le=100_000, description="Iterations at most.")


class PagerankSummary(BaseModel):
    """Summary of a ``pagerank`` result."""

    alpha: float
    iterations: int = Field(description="Iterations run.")
    converged: bool = Field(description="Whether the L1 change fell below n * tol.")
    dangling_nodes: int = Field(description="Nodes with no out-weight.")


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


def prepare(graph: Graph, params: PagerankParams, arrays: dict[str, Any], xp: Any = np
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
        out_weight = xp.bincount(src, weights=weights, minlength=n).astype(xp.float64)
    dangling = out_weight == 0
    inv_out = xp.where(dangling, 0.0, 1.0 / xp.where(dangling, 1.0, out_weight))
    p = _distribution(graph, params.personalization, "personalization", xp)
    if p is None:
        p = xp.full(n, 1.0 / max(n, 1))
    d = _distribution(graph, params.dangling, "dangling", xp)
    return {"in_indptr": arrays["in_indptr"], "in_indices": arrays["in_indices"],
            "in_weights": in_weights, "inv_out": inv_out, "dangling": dangling, "p": p,
            "d": p if d is None else d}


def _run(graph: Graph, params: PagerankParams, progress: ProgressFn, backend: Backend
         ) -> AlgorithmResult:
    progress(0.0, "pagerank: preparing")
    if backend == "cpu":
        from graphgpu.kernels.algorithms.pagerank import cpu as impl
        state = prepare(graph, params, host_arrays(graph))
    else:
        from graphgpu.kernels.algorithms.pagerank import gpu as impl
        state = prepare(graph, params, impl.device_arrays(graph), cupy())
    rank, iterations, converged = impl.power_iteration(state, params, progress)
    progress(1.0, "pagerank: done")
    return AlgorithmResult(
        summary={"alpha": params.alpha, "iterations": iterations, "converged": converged,
                 "dangling_nodes": int(state["dangling"].sum())},
        node_values={"pagerank": rank})


def pagerank_cpu(graph: Graph, params: PagerankParams, progress: ProgressFn) -> AlgorithmResult:
    """PageRank on the CPU (Numba pull iteration over the in-CSR).

    Parameters
    ----------
    graph : Graph
        Directed or undirected; weights must be non-negative.
    params : PagerankParams
    progress : ProgressFn
        Called every iteration; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``pagerank`` (float64, sums to 1) per node; summary per :class:`PagerankSummary`.

    Raises
    ------
    InvalidInput
        A negative weight, an unknown node or no positive weight in a distribution.
    """
    return _run(graph, params, progress, "cpu")


def pagerank_gpu(graph: Graph, params: PagerankParams, progress: ProgressFn) -> AlgorithmResult:
    """PageRank on the GPU (one fused pull kernel per iteration); same contract as
    :func:`pagerank_cpu`, same ranks to rounding."""
    return _run(graph, params, progress, "gpu")


def estimate(graph: Graph, params: PagerankParams, backend: Backend) -> Estimate:
    """Cost of ``pagerank``: ``max_iter`` pulls over every arc at most."""
    arcs = arcs_and_nodes(graph)
    return Estimate(seconds=params.max_iter * arcs * SECONDS_PER_ARC[backend],
                    result_bytes=16 * graph.n,
                    device_bytes=graph.nbytes() + 6 * 8 * graph.n,
                    detail=f"at most {params.max_iter} iterations over {arcs:,} arcs and nodes")


PAGERANK = declare(
    "pagerank", "PageRank by power iteration (NetworkX conventions: alpha, personalization, "
    "weights, dangling nodes, tol); directed graphs natively.", (PagerankParams, PagerankSummary),
    (pagerank_cpu, pagerank_gpu), estimate=estimate, directed="native")
