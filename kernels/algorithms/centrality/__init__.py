"""Centrality family: DACCER volumes and ranking, and exact closeness; CPU and GPU, same answers.

``daccer`` (Distributed Assessment of the Closeness CEntrality Ranking) ranks nodes by their
*volume*: the sum of the degrees of the distinct nodes within ``radius`` hops (the node itself
included; radius 0 gives the degree). ``closeness`` is exact closeness centrality with the
Wasserman-Faust normalisation for disconnected graphs (NetworkX's default), or harmonic
centrality. Edge weights are ignored: distances are hop counts.

How we beat the CUDA DACCER paper (IJCSIT 6(3), 2014; 100x over 32 CPU cores at radius 0-1 but
3-7x *slower* at radius 2, 98 % of it spent materialising cumulative k-adjacency lists):

* Nothing proportional to the sum of the ball sizes is ever stored. Each ball is built on the
  fly and reduced straight into the volume, so radius 2, 3 or 10 cost one bounded search per
  node, not a k-hop CSR per level.
* A proven bound on each ball's size (``b_1 = 1 + deg``, ``b_k(v) = min(n, 1 + sum over
  neighbours u of (b_{k-1}(u) - 1))``: the ball of ``v`` is ``v`` plus its neighbours' balls of
  radius k-1, each of which holds ``v``) sorts the nodes into tiers. A warp, or a whole block for
  larger balls, builds one ball in a shared-memory hash table of exactly the size it needs, with
  the frontier kept in insertion order and expanded arc-parallel (warp prefix sums, each chunk's
  arcs dealt out to all warps of the team), so hub rows do not serialise a thread as the paper's
  one-thread-per-node merges do.
* Balls too large for shared memory (hubs) go to a bit-parallel multi-source BFS (64 sources per
  machine word) whose batches are bounded by ``max_batch_bytes``.
* Closeness uses the same bit-parallel BFS over all sources, pull-based with fully-reached words
  skipped; distances are symmetric, so every node sums its own distances and no atomics on
  per-source totals are needed.

The CPU backend (:mod:`.cpu`) is Numba: per-node bounded BFS with a per-thread stamp array for
``daccer`` (threads limited so that their arrays fit ``max_batch_bytes``) and the bit-parallel
BFS, one batch of 512 sources per thread, for closeness. The GPU backend (:mod:`.gpu`) runs
``centrality.cu`` and the shared bit-parallel BFS
(:mod:`graphgpu.kernels.algorithms.common.bitset_bfs`); both hand their volumes and sums to
:mod:`.driver`, which ranks and summarises. Volumes are exact integers on both backends;
closeness comes from integer distance sums through the same float operations, and harmonic
sums are Neumaier-compensated, so the two backends agree to rounding.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.centrality import cpu, gpu
from graphgpu.kernels.core.registry import Algorithm, register_algorithm

BATCH_DESCRIPTION = (
    "Memory bound, in bytes, of one batch of the bit-parallel multi-source BFS (24 bytes per "
    "node per 64 sources; at least one 64-source word is always used) and of the CPU threads' "
    "visited arrays (8 bytes per node per thread).")


class DaccerParams(BaseModel):
    """Parameters of ``daccer``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"radius": 2, "top": 10, "compare_closeness": True}]})

    radius: int = Field(2, ge=0, le=10, description="Hops around each node (0: degree).")
    top: int = Field(100, ge=0, description="Length of the `top` list (the ranking's head).")
    compare_closeness: bool = Field(
        False, description="Also compute exact closeness and report rank agreement with it.")
    max_batch_bytes: int = Field(1 << 30, ge=1 << 20, description=BATCH_DESCRIPTION)


class DaccerSummary(BaseModel):
    """Summary of a ``daccer`` result; the agreement fields are present with compare_closeness."""

    radius: int = Field(description="The radius used.")
    top_volume: int = Field(description="Largest volume (of the first node of the ranking).")
    spearman: float | None = Field(
        None, description="Spearman rank correlation of volume and closeness (null: undefined, "
        "one of them is constant).")
    kendall: float | None = Field(None, description="Kendall tau-b of volume and closeness.")
    top1pct_overlap: float | None = Field(
        None, description="Share of the top ceil(1 % n) nodes by volume that are also the top "
        "ceil(1 % n) by closeness (ties by node id).")
    top10pct_overlap: float | None = Field(None, description="Same for the top 10 %.")


class ClosenessParams(BaseModel):
    """Parameters of ``closeness``."""

    model_config = ConfigDict(extra="forbid")

    harmonic: bool = Field(False, description="Harmonic centrality (sum of 1/distance) instead.")
    max_batch_bytes: int = Field(1 << 30, ge=1 << 20, description=BATCH_DESCRIPTION)


class ClosenessSummary(BaseModel):
    """Summary of a ``closeness`` result."""

    harmonic: bool = Field(description="Whether the values are harmonic centrality.")
    max: float = Field(description="Largest value.")
    mean: float = Field(description="Mean value.")


DACCER = register_algorithm(Algorithm(
    name="daccer", params_model=DaccerParams, result_model=DaccerSummary, cpu=cpu.daccer,
    gpu=gpu.daccer,
    summary="DACCER closeness-ranking estimate: volume (degree sum of the r-hop ball) of every "
            "node, its ranking, and optionally its agreement with exact closeness."))

CLOSENESS = register_algorithm(Algorithm(
    name="closeness", params_model=ClosenessParams, result_model=ClosenessSummary,
    cpu=cpu.closeness, gpu=gpu.closeness,
    summary="Exact closeness centrality (Wasserman-Faust, as NetworkX) or harmonic centrality."))
