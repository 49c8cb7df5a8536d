"""What the test-only plugin algorithms share (``tests.support.slow_algorithm``,
``tests.support.memory_algorithm``, ``tests.reliability.plugins``): parameters that refuse
unknown keys, and one function that runs as both backends."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from graphgpu.kernels.core.registry import Algorithm, AlgorithmFn, register_algorithm


class PluginParams(BaseModel):
    """Base of a test plugin's parameters: unknown keys refused."""

    model_config = ConfigDict(extra="forbid")


def register_plugin(name: str, summary: str, params_model: type[BaseModel],
                    result_model: type[BaseModel], run: AlgorithmFn, **extra: Any) -> Algorithm:
    """Register test plugin ``name`` with ``run`` as its CPU and its GPU backend.

    Parameters
    ----------
    name, summary : str
        As :class:`~graphgpu.kernels.core.registry.Algorithm`.
    params_model, result_model : type of BaseModel
        Its parameters (a :class:`PluginParams`) and summary.
    run : AlgorithmFn
        Both backends.
    **extra
        Further :class:`~graphgpu.kernels.core.registry.Algorithm` fields (estimate, shards...).

    Returns
    -------
    Algorithm
        The registered declaration.
    """
    return register_algorithm(Algorithm(name=name, summary=summary, params_model=params_model,
                                        result_model=result_model, cpu=run, gpu=run, **extra))
