"""What every family's declaration (its ``__init__.py``) repeats: registering an algorithm, the
parameter model of an algorithm without parameters, and an estimate linear in the arcs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from graphgpu.kernels.core import registry
from graphgpu.kernels.core.graph import Graph


class NoParams(BaseModel):
    """Base of the parameter model of an algorithm that takes none: ``{}``, extra keys refused."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{}]})


def declare(name: str, summary: str, models: tuple[type[BaseModel], type[BaseModel]],
            backends: tuple[registry.AlgorithmFn, registry.AlgorithmFn], **options: Any
            ) -> registry.Algorithm:
    """Register an algorithm (:func:`graphgpu.kernels.core.registry.register_algorithm`).

    Parameters
    ----------
    name, summary : str
    models : (type, type)
        The parameter model and the result summary model.
    backends : (AlgorithmFn, AlgorithmFn)
        The CPU and the GPU function.
    **options
        The other fields of :class:`~graphgpu.kernels.core.registry.Algorithm` (``estimate``,
        ``directed``, ``node_params``, ...).

    Returns
    -------
    Algorithm
        As registered.
    """
    params_model, result_model = models
    cpu, gpu = backends
    return registry.register_algorithm(registry.Algorithm(
        name=name, summary=summary, params_model=params_model, result_model=result_model,
        cpu=cpu, gpu=gpu, **options))


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
