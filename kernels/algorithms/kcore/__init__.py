"""k-core decomposition: ``core_number`` per node and ``k_core`` membership, CPU and GPU.

The k-core is the largest subgraph whose nodes all have degree >= k inside it; a node's core
number is the largest k whose k-core holds it. Weights are ignored.

* CPU (:mod:`.cpu`): Batagelj-Zaversnik bucket peeling, O(n + m), Numba.
* GPU (:mod:`.gpu`): parallel peeling by levels: ``k`` = the smallest degree left (or a lower
  bound of it: a level that peels nothing costs one pass and sets k exactly); every node
  of degree <= k gets core number k and leaves, neighbours' degrees drop by atomics, and a
  neighbour dropping to k joins the next frontier (exactly one decrement takes it from k + 1 to
  k), until no node of degree <= k is left; then the next level. Core numbers are unique, so
  the backends agree node for node.

``k_core`` marks the nodes of core number >= k (``k`` omitted: the largest core, as NetworkX's
``k_core`` does) and counts the edges between them.

Directed graphs run on the symmetrised view (a node's degree counts its distinct neighbours
either way), unlike NetworkX, which counts in- plus out-degree. Both backends hand their core
numbers to :mod:`.driver`, which builds either result.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.common.declare import NoParams, linear_estimate
from graphgpu.kernels.algorithms.kcore import cpu, gpu
from graphgpu.kernels.core.registry import Algorithm, register_algorithm

#: Seconds per arc (estimates): bucket peeling on the CPU, a few passes on the GPU.
SECONDS_PER_ARC = {"cpu": 2e-8, "gpu": 1e-9}


class CoreParams(NoParams):
    """Parameters of ``core_number`` (none)."""


class KCoreParams(BaseModel):
    """Parameters of ``k_core``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{}, {"k": 2}]})

    k: int | None = Field(None, ge=0, description="Core order; omitted: the largest core.")


class CoreSummary(BaseModel):
    """Summary of a ``core_number`` result."""

    max_core: int = Field(description="Largest core number (the degeneracy).")
    max_core_size: int = Field(description="Nodes whose core number is the largest.")


class KCoreSummary(BaseModel):
    """Summary of a ``k_core`` result."""

    k: int = Field(description="Core order used.")
    nodes: int = Field(description="Nodes of the k-core.")
    edges: int = Field(description="Edges between them.")


#: Cost of ``core_number`` and ``k_core``: linear in arcs; one core number (or flag) per node.
estimate = linear_estimate(SECONDS_PER_ARC, bytes_per_node=8)

CORE_NUMBER = register_algorithm(Algorithm(
    name="core_number", params_model=CoreParams, result_model=CoreSummary, cpu=cpu.core_number,
    gpu=gpu.core_number, estimate=estimate, directed="symmetrise",
    summary="Core number of every node (k-core decomposition: bucket peeling on the CPU, "
            "parallel peeling on the GPU); directed graphs symmetrised."))
K_CORE = register_algorithm(Algorithm(
    name="k_core", params_model=KCoreParams, result_model=KCoreSummary, cpu=cpu.k_core,
    gpu=gpu.k_core, estimate=estimate, directed="symmetrise",
    summary="Nodes of the k-core (default: the largest core) and its edge count; directed "
            "graphs symmetrised."))
