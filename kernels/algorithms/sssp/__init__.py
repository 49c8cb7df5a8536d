"""Single-source shortest paths on non-negative weights, CPU and GPU with the same answer.

Distances are computed in the requested ``dtype`` on both backends (weights are cast to it
first; an unweighted graph counts every edge as 1): a node's distance is the smallest, over
paths, of the path's weights added left to right in that dtype. Dijkstra (CPU, Numba) and the
GPU's frontier Bellman-Ford fixpoint agree on that exactly, because adding a non-negative weight
never makes a distance smaller and rounding is monotone.

Parents are deterministic: an arc ``u -> v`` is *tight* when ``dist[u] + w(u, v) == dist[v]``
exactly in the dtype; ``hops[v]`` is the fewest tight arcs from the source to ``v``; and
``parent[v]`` is the smallest-id ``u`` with a tight arc ``u -> v`` and ``hops[u] == hops[v] - 1``.
The hop condition keeps the parents a tree where zero weights (or weights below a distance's
rounding step) make neighbours' distances equal; otherwise two such nodes could name each other.

The CPU backend (:mod:`.cpu`) runs Dijkstra in Numba, the GPU backend (:mod:`.gpu`) a frontier
Bellman-Ford fixpoint (``sssp.cu``); both hand their solver to :mod:`.driver`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.common.direction import DESCRIPTION as DIRECTION_DESCRIPTION
from graphgpu.kernels.algorithms.common.direction import Direction
from graphgpu.kernels.algorithms.sssp import cpu, gpu
from graphgpu.kernels.core.registry import NODE_ID_VALUE, Algorithm, register_algorithm


class SsspParams(BaseModel):
    """Parameters of ``sssp``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"source": 0}]})

    source: int = Field(description="Original id of the node to start from.")
    dtype: Literal["float32", "float64"] = Field(
        "float64", description="Precision of the distances (weights are cast to it).")
    direction: Direction = Field("out", description=DIRECTION_DESCRIPTION)


class SsspSummary(BaseModel):
    """Summary of an ``sssp`` result."""

    source: int = Field(description="Original id of the source node.",
                        json_schema_extra=NODE_ID_VALUE)
    reached: int = Field(description="Nodes at a finite distance, the source included.")
    max_distance: float = Field(description="Largest finite distance.")


# Directed graphs: paths follow `direction` (out-edges by default, as NetworkX's).
SSSP = register_algorithm(Algorithm(
    name="sssp", params_model=SsspParams, result_model=SsspSummary, cpu=cpu.sssp, gpu=gpu.sssp,
    node_params=("source",), directed="native",
    summary="Single-source shortest paths (non-negative weights; unweighted edges count 1): "
            "distance and deterministic parent of every node."))
