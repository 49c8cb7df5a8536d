"""PageRank by power iteration, CPU and GPU, with NetworkX's conventions.

The iteration is NetworkX's ``pagerank`` (its SciPy version) step for step::

    x <- alpha * (x P + (sum of x over dangling nodes) * d) + (1 - alpha) * p

where ``P`` is the row-stochastic transition matrix (an arc ``u -> v`` has probability
``w(u, v) / W(u)``, ``W(u)`` the total weight out of ``u``; unweighted graphs count every arc as
1; an undirected edge is an arc each way), ``p`` the personalization vector (uniform unless
given; nodes left out get 0), ``d`` the dangling distribution (``p`` unless given) and the start
``x = 1/n``. A node is dangling when ``W(u) == 0``.

It stops when the L1 change of an iteration is below ``tol`` itself (default 1e-6), and reports
that change (``residual``) and the iterations. The step is a contraction by ``alpha`` in L1, so
the change of iteration ``k + 1`` is at most ``2 alpha^k``: with the defaults (alpha 0.85,
tol 1e-6) at most 91 iterations, within ``max_iter`` (100). After ``max_iter`` iterations
without that, the ranks so far are returned with ``converged: false`` (NetworkX raises instead).

**Not NetworkX's default rule.** NetworkX stops when the change is below ``n * tol``: on a graph
of 326k nodes that is after 2 iterations, 6% off the converged ranks in the median (up to 69%),
and on 4M nodes after 1. Earlier versions of this service did the same; to get NetworkX's
answer, pass ``tol = n * tol_nx`` (the NetworkX backend, ``graphgpu.client.nx_backend``, does).

Both backends *pull* along the in-arcs: ``x'[v] = sum over u -> v of y[u] w(u, v)`` with
``y = x / W`` (0 for dangling nodes), the in-CSR of a directed graph (the CSR itself for an
undirected one). The CPU (:mod:`.cpu`) is a Numba ``prange`` over rows; the GPU (:mod:`.gpu`) a
kernel of lane groups per row (4..32 lanes by mean in-degree) that also writes the next ``y``,
the dangling mass and the L1 change (block sums, one atomic per block), so one launch and one
16-byte read per iteration. Both hand their iteration to :mod:`.driver`.
Both compute in float64; they agree to rounding (1e-12 relative in practice).

Directed graphs run natively.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.common.declare import arcs_and_nodes
from graphgpu.kernels.algorithms.pagerank import cpu, gpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    VOLATILE,
    Algorithm,
    Backend,
    Estimate,
    register_algorithm,
)

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
    tol: float = Field(1e-6, gt=0.0, description="Stop when the L1 change of an iteration is "
                                                  "below tol (NetworkX's rule: pass n * tol).")
    max_iter: int = Field(100, ge=1, le=100_000, description="Iterations at most.")


class PagerankSummary(BaseModel):
    """Summary of a ``pagerank`` result."""

    alpha: float
    iterations: int = Field(description="Iterations run.")
    converged: bool = Field(description="Whether the L1 change fell below tol (false: max_iter "
                                        "ran out).")
    # The backends sum the change in different orders: equal up to rounding, not bit for bit.
    residual: float = Field(description="L1 change of the last iteration.",
                            json_schema_extra=VOLATILE)
    dangling_nodes: int = Field(description="Nodes with no out-weight.")


def iteration_bound(params: PagerankParams) -> int:
    """Iterations at most: ``max_iter``, or fewer where the module notes' bound (the change of
    iteration ``k + 1`` is at most ``2 alpha^k``) falls below ``tol`` first."""
    if params.alpha >= 1.0:
        return params.max_iter
    if params.alpha == 0.0 or params.tol >= 2.0:
        return 1
    bound = math.ceil(math.log(params.tol / 2) / math.log(params.alpha)) + 1
    return max(1, min(params.max_iter, bound))


def estimate(graph: Graph, params: PagerankParams, backend: Backend) -> Estimate:
    """Cost of ``pagerank``: a pull over every arc per iteration, :func:`iteration_bound`
    iterations at most."""
    arcs = arcs_and_nodes(graph)
    iterations = iteration_bound(params)
    return Estimate(seconds=iterations * arcs * SECONDS_PER_ARC[backend],
                    result_bytes=16 * graph.n,
                    device_bytes=graph.nbytes() + 6 * 8 * graph.n,
                    detail=f"at most {iterations} iterations over {arcs:,} arcs and nodes")


PAGERANK = register_algorithm(Algorithm(
    name="pagerank", params_model=PagerankParams, result_model=PagerankSummary,
    cpu=cpu.pagerank, gpu=gpu.pagerank, estimate=estimate, directed="native",
    summary="PageRank by power iteration (NetworkX conventions: alpha, personalization, "
            "weights, dangling nodes), run until the L1 change is below tol (converged by "
            "default; NetworkX's rule is tol = n * its tol); directed graphs natively."))
