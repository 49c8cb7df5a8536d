"""Louvain and Leiden community detection, CPU and GPU with the same partition.

Both maximise modularity ``Q = sum_c [L_c / m - resolution * (d_c / 2m)^2]`` (NetworkX's
definition; ``L_c`` the weight inside community c, ``d_c`` its total degree) by levels of local
moving and aggregation (Blondel et al. 2008), Leiden adding a refinement (Traag et al. 2019).

Local moving is parallel, synchronous and deterministic (as GPU Louvain implementations do it,
without the colouring that an earlier version ran: its hundreds of colour classes per sweep, each
waiting for its slowest node, took 90% of the time on R-MAT graphs). In a sweep the awake nodes
of a hashed half (``mix32(i ^ seed salt ^ sweep)``; the other half rests, so fewer neighbours
trade places back and forth) each choose, from the state at the sweep's start, the neighbouring
community of largest gain ``k_iC - resolution * k_i * Sigma_C / 2m`` (ties: the smaller community
id) and move when it beats staying, two singletons only towards the smaller id (Lu et al. 2015);
then all moves apply at once. The next sweep wakes only the movers, their neighbours and the
resting half (vertex pruning, as GVE-Louvain). Sweeps stop when fewer than one node in 100 moved
on the first level, one in 1,000 on the later ones (threshold scaling), or after 20; aggregation
stops when a level would keep over 95% of its nodes. On the GPU an awake node is decided by a
warp, a hub (over 1024 arcs) by a block of its own, each with a hash table (in shared memory for
rows of up to 64 arcs, else in scratch memory).
Weights are scaled to 64-bit fixed-point integers (unweighted: 1 per edge) so that every total is
exact in any order, and the GPU kernels are compiled without fused multiply-adds, so both
backends evaluate the same IEEE expressions and make the same moves: the CPU (Numba) and GPU
(CUDA) partitions are identical, for Louvain and Leiden alike. After the coarsest level, the
partition is carried back down the levels and each level's nodes get another round of local
moving from it (multi-level refinement, Rotta & Noack 2011), which lifts modularity above
NetworkX's Louvain on the SNAP collaboration graphs (bench/results/communities.md). The reported
modularity is recomputed from the final partition with the original float weights by one host
function, so it is equal too.

Leiden's refinement here is deterministic instead of randomised: within each community of the
moving phase, nodes start alone and, sweep by sweep, a node of the moving half that is still
alone joins the adjacent sub-community (same community) of largest positive gain, among those
that a neighbour of it stays in (not a singleton of the moving half). Nodes never leave
non-singleton sub-communities, so every sub-community is connected. The aggregate graph is built
on the sub-communities, its nodes starting in their community. Any community left disconnected
at the end is split into its components (which raises modularity), so Leiden's communities are
connected.

``seed`` salts the halves of each sweep (different seeds, different but equally valid
partitions). The result has ``community`` per node (0..k-1, numbered in order of each
community's smallest internal id), the modularity, the number of communities and the number of
aggregation levels.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.communities import cpu, gpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    Backend,
    Estimate,
    register_algorithm,
)

#: Arcs per second of a whole run (estimates), measured on the H100 machine on dblp-2010 (Leiden,
#: the slower; bench/results/communities.md); small graphs are dominated by per-level overheads,
#: R-MAT graphs of 10^7-10^8 edges run ~10x faster than this on the GPU.
ARCS_PER_SECOND = {"cpu": 6e5, "gpu": 2.5e7}


class CommunityParams(BaseModel):
    """Parameters of ``louvain`` and ``leiden``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{}, {"resolution": 0.5, "seed": 3}]})

    resolution: float = Field(1.0, gt=0, description="Modularity resolution (gamma); larger "
                                                     "gives smaller communities.")
    seed: int = Field(0, ge=0, description="Salts the order of the local moves.")


class CommunitySummary(BaseModel):
    """Summary of a ``louvain`` or ``leiden`` result."""

    modularity: float = Field(description="Modularity of the partition (NetworkX's definition, "
                                          "with the resolution).")
    communities: int = Field(description="Number of communities.")
    levels: int = Field(description="Aggregation levels performed.")
    resolution: float


def estimate_communities(graph: Graph, params: CommunityParams, backend: Backend) -> Estimate:
    """Time from the arc count at a measured rate; one int64 per node."""
    arcs = 2 * graph.m + graph.n
    return Estimate(seconds=arcs / ARCS_PER_SECOND[backend], result_bytes=8 * graph.n,
                    detail=f"{2 * graph.m:,} arcs")


LOUVAIN = register_algorithm(Algorithm(
    name="louvain", params_model=CommunityParams, result_model=CommunitySummary,
    cpu=cpu.louvain, gpu=gpu.louvain, estimate=estimate_communities,
    summary="Louvain community detection (modularity, resolution; deterministic, same partition "
            "on CPU and GPU)."))
LEIDEN = register_algorithm(Algorithm(
    name="leiden", params_model=CommunityParams, result_model=CommunitySummary,
    cpu=cpu.leiden, gpu=gpu.leiden, estimate=estimate_communities,
    summary="Leiden community detection: Louvain with a refinement that keeps communities "
            "connected (deterministic, same partition on CPU and GPU)."))
