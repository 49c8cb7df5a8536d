"""Strongly connected components, CPU and GPU with the same labels.

A strongly connected component is a maximal set of nodes that reach each other along arcs. On an
undirected graph every edge is an arc each way, so the components are the connected components.

* CPU: Tarjan's algorithm, iterative (no recursion limit), O(n + m), Numba.
* GPU: trimming and colouring (after Orzan; Hong et al., SC 2013, for the trimming): nodes with no
  unassigned in- or out-neighbour are components of their own and are peeled off in parallel;
  then every unassigned node takes the smallest id that reaches it (a pull fixpoint over in-arcs),
  and each colour's root ``r`` (``color[r] == r``, the smallest id of its component) collects,
  backwards within its colour, the nodes that reach it: exactly ``r``'s component (they reach
  ``r``, and ``r`` reaches them since ``r`` gave them its colour). Repeat on what is left.

Both backends name each component by its smallest node id, then number the components
``0..count-1`` in that order, so the labels are equal node for node.

Directed graphs run natively.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from graphgpu.kernels.algorithms.common.declare import NoParams, linear_estimate
from graphgpu.kernels.algorithms.scc import cpu, gpu
from graphgpu.kernels.core.registry import Algorithm, register_algorithm

#: Seconds per arc (estimates): Tarjan on the CPU; a few colouring passes on the GPU.
SECONDS_PER_ARC = {"cpu": 3e-8, "gpu": 5e-10}


class SccParams(NoParams):
    """Parameters of ``strongly_connected_components`` (none)."""


class SccSummary(BaseModel):
    """Summary of a ``strongly_connected_components`` result."""

    count: int = Field(description="Number of strongly connected components.")
    largest: int = Field(description="Nodes in the largest component.")
    singletons: int = Field(description="Components of a single node.")


#: Cost of ``strongly_connected_components``: linear in arcs (GPU: a few passes).
estimate = linear_estimate(SECONDS_PER_ARC, bytes_per_node=16)

SCC = register_algorithm(Algorithm(
    name="strongly_connected_components", params_model=SccParams, result_model=SccSummary,
    cpu=cpu.scc, gpu=gpu.scc, estimate=estimate, directed="native",
    summary="Strongly connected components (Tarjan on the CPU, trimming and colouring on the "
            "GPU), numbered by smallest member; directed graphs natively."))
