"""The contract every registered algorithm keeps, checked for all of them at once.

A new algorithm family gets these checks for free by registering: schema'd parameters, usable
defaults (or a documented example), both backends, a summary that matches its result model, and
per-node arrays of the right length with valid internal node ids.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel, ValidationError

from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    AlgorithmResult,
    algorithms,
    comparable_summary,
    no_progress,
)

NAMES = sorted(algorithms())


def small_graph(weighted: bool) -> Graph:
    """A random graph with several components, isolated nodes and non-contiguous ids."""
    rng = np.random.default_rng(11)
    n = 60
    src, dst = rng.integers(0, n, 70), rng.integers(0, n, 70)
    weights = rng.uniform(0.5, 5.0, src.shape[0]) if weighted else None
    nodes = np.arange(n + 4)  # the last four have no edges
    graph, _ = build_graph(5 * src + 2, 5 * dst + 2, weights, extra_nodes=5 * nodes + 2)
    return graph


def example_params(algorithm: Algorithm, graph: Graph) -> BaseModel:
    """Defaults, else the schema's first example; node parameters point at a node of ``graph``."""
    model = algorithm.params_model
    try:
        values: dict[str, Any] = model().model_dump()
    except ValidationError:
        examples = model.model_json_schema().get("examples") or []
        assert examples, f"{algorithm.name}: required parameters need a json_schema example"
        values = dict(examples[0])
    node = int(graph.node_ids[graph.n // 2])
    for name in algorithm.node_params:
        if values.get(name) is not None:  # point the example's nodes at a node of this graph
            values[name] = [node] if isinstance(values[name], list) else node
    return model.model_validate(values)


def check_result(algorithm: Algorithm, graph: Graph, result: AlgorithmResult) -> None:
    assert isinstance(result, AlgorithmResult)
    algorithm.result_model.model_validate(result.summary)
    for name, values in result.node_values.items():
        assert isinstance(values, np.ndarray), name
        assert values.shape == (graph.n,), name
    for name in result.node_id_fields:
        assert name in result.node_values or name in result.arrays, name
        ids = result.node_values.get(name, result.arrays.get(name))
        assert np.issubdtype(ids.dtype, np.integer), name
        assert ((ids >= -1) & (ids < graph.n)).all(), name


@pytest.mark.parametrize("name", NAMES)
def test_declaration(name: str) -> None:
    algorithm = algorithms()[name]
    assert algorithm.name == name and algorithm.summary
    schema = algorithm.params_model.model_json_schema()
    assert schema.get("type") == "object"
    assert algorithm.result_model.model_json_schema().get("type") == "object"
    assert callable(algorithm.cpu) and callable(algorithm.gpu)
    fields = algorithm.params_model.model_fields
    for param in algorithm.node_params:
        assert param in fields, f"node parameter {param!r} is not a parameter"
    example_params(algorithm, small_graph(False))


@pytest.mark.parametrize("name", NAMES)
def test_cpu_result(name: str) -> None:
    algorithm = algorithms()[name]
    for weighted in (False, True):
        graph = small_graph(weighted)
        result = algorithm.cpu(graph, example_params(algorithm, graph), no_progress)
        check_result(algorithm, graph, result)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
@pytest.mark.parametrize("name", NAMES)
def test_gpu_result(name: str) -> None:
    algorithm = algorithms()[name]
    for weighted in (False, True):
        graph = small_graph(weighted)
        params = example_params(algorithm, graph)
        result = algorithm.gpu(graph, params, no_progress)
        check_result(algorithm, graph, result)
        # Same answer as the CPU: the summaries at least (ties may differ in per-node values),
        # timings aside.
        cpu = algorithm.cpu(graph, params, no_progress)
        assert (comparable_summary(algorithm.result_model, result.summary)
                == comparable_summary(algorithm.result_model, cpu.summary))
