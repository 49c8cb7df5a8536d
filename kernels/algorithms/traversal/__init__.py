"""Traversal family: breadth-first search and connected components, CPU and GPU side by side.

Both backends return the same answer bit for bit. BFS parents are made deterministic by a rule
rather than by the order of discovery: ``parent[v]`` is the smallest neighbour of ``v`` one level
closer to the source. Components are numbered ``0..count-1`` in order of their smallest internal
node id.

The CPU side (:mod:`.cpu`) is Numba: single-threaded queue sweeps, 3-6x faster than SciPy's
csgraph (which first converts the CSR to float data and int32 offsets). The GPU side (:mod:`.gpu`)
is CuPy ``RawKernel`` code from ``traversal.cu``, compiled once per process and device on first
use. Both hand their solvers to :mod:`.driver`, which prunes (or not) and builds the result.

With ``prune`` on (or ``auto`` and enough pendants), both backends first remove pendant vertices
round by round, solve on the remaining core and extend the answer to the pruned vertices
(:mod:`graphgpu.kernels.algorithms.common.pruning`); the answer is the same as without pruning,
node for node.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphgpu.kernels.algorithms.common import pruning
from graphgpu.kernels.algorithms.common.direction import DESCRIPTION as DIRECTION_DESCRIPTION
from graphgpu.kernels.algorithms.common.direction import Direction
from graphgpu.kernels.algorithms.traversal import cpu, gpu
from graphgpu.kernels.core.registry import NODE_ID_VALUE, Algorithm, register_algorithm

PRUNE_DESCRIPTION = (
    "Remove pendant (degree-1) vertices round by round first, solve on the rest and extend the "
    "answer to them (same answer either way). 'auto' prunes when at least "
    f"{pruning.AUTO_MIN_PENDANT_SHARE:.0%} of the nodes have degree 1.")


class BfsParams(BaseModel):
    """Parameters of ``bfs``: exactly one of ``source`` and ``sources``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"source": 0}, {"sources": [0, 5], "prune": "auto"}]})

    source: int | None = Field(None, description="Original id of the node to start from.")
    sources: list[int] | None = Field(
        None, min_length=1, description="Original ids of several start nodes (multi-source BFS: "
        "levels are distances to the nearest one); instead of `source`.")
    prune: pruning.PruneMode = Field("off", description=PRUNE_DESCRIPTION + " Undirected "
                                     "searches only ('auto' does not prune a directed one).")
    direction: Direction = Field("out", description=DIRECTION_DESCRIPTION)

    @model_validator(mode="after")
    def _exactly_one(self) -> BfsParams:
        if (self.source is None) == (self.sources is None):
            raise ValueError("give exactly one of source and sources")
        return self


class BfsSummary(BaseModel):
    """Summary of a ``bfs`` result."""

    source: int | None = Field(description="Original id of the source node (null: `sources`).",
                               json_schema_extra=NODE_ID_VALUE)
    sources: int | None = Field(None, description="Number of distinct sources (multi-source).")
    reached: int = Field(description="Nodes reached, the sources included.")
    max_level: int = Field(description="Largest level: the source's eccentricity in its component.")
    pruned: pruning.PrunedCount = None
    prune_rounds: pruning.PruneRounds = None


class ComponentsParams(BaseModel):
    """Parameters of ``connected_components``."""

    model_config = ConfigDict(extra="forbid")

    prune: pruning.PruneMode = Field("off", description=PRUNE_DESCRIPTION)


class ComponentsSummary(BaseModel):
    """Summary of a ``connected_components`` result."""

    count: int = Field(description="Number of connected components.")
    largest: int = Field(description="Nodes in the largest component.")
    isolated: int = Field(description="Components of a single node.")
    pruned: pruning.PrunedCount = None
    prune_rounds: pruning.PruneRounds = None


# Directed graphs: the search follows `direction` (out-edges by default, as NetworkX does).
BFS = register_algorithm(Algorithm(
    name="bfs", params_model=BfsParams, result_model=BfsSummary, cpu=cpu.bfs, gpu=gpu.bfs,
    node_params=("source", "sources"), directed="native",
    summary="Breadth-first search: level and deterministic parent of every node from one or "
            "more sources."))

# Directed graphs are symmetrised: weakly connected components.
CONNECTED_COMPONENTS = register_algorithm(Algorithm(
    name="connected_components", params_model=ComponentsParams, result_model=ComponentsSummary,
    cpu=cpu.connected_components, gpu=gpu.connected_components, directed="symmetrise",
    summary="Connected components, numbered by smallest member, with their sizes."))
