"""What several families' declarations (their ``__init__.py``) share: the parameter model of an
algorithm without parameters, and an estimate linear in the arcs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from graphgpu.kernels.core import registry
from graphgpu.kernels.core.graph import Graph


class NoParams(BaseModel):
    """Base of the parameter model of an algorithm that takes none: ``{}``, extra keys refused."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{}]})


def arcs_and_nodes(graph: Graph) -> int:
    """Arcs of the CSR plus nodes: the work of one linear pass."""
    return int(graph.indices.shape[0]) + graph.n


def linear_estimate(seconds_per_arc: dict[str, float], bytes_per_node: int
                    ) -> registry.EstimateFn:
    """An estimate function for one linear pass over arcs and nodes.

    Parameters
    ----------
    seconds_per_arc : dict
        Backend name -> seconds per arc (or node).
    bytes_per_node : int
        Result bytes per node.

    Returns
    -------
    EstimateFn
        ``estimate(graph, params, backend)``.
    """
    def estimate(graph: Graph, params: Any, backend: registry.Backend) -> registry.Estimate:
        arcs = arcs_and_nodes(graph)
        return registry.Estimate(seconds=arcs * seconds_per_arc[backend],
                        result_bytes=bytes_per_node * graph.n, detail=f"{arcs:,} arcs and nodes")

    return estimate
