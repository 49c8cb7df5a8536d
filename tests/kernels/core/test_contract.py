"""The contract every registered algorithm keeps, checked for all of them at once.

A new algorithm family gets these checks for free by registering: schema'd parameters, usable
defaults (or a documented example), both backends, a summary that matches its result model, and
per-node arrays of the right length with valid internal node ids.

And the one family shape (ARCHITECTURE.md, "Adding an algorithm"): the family's ``__init__.py``
declares it with ``register_algorithm(Algorithm(name=...))``; its entry points live in the
family's ``cpu.py`` and ``gpu.py``; no family imports another (shared code is in ``common/``);
kernels are fetched only through the loader (no ``get_function(`` outside
``kernels/core/cuda.py``).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
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
#: The package of the families, and its folder.
PACKAGE = "graphgpu.kernels.algorithms"
ALGORITHMS_DIR = Path(importlib.import_module(PACKAGE).__path__[0])
#: Shared building blocks, not a family.
COMMON = "common"
FAMILIES = sorted(path.name for path in ALGORITHMS_DIR.iterdir()
                  if (path / "__init__.py").is_file() and path.name != COMMON)
SOURCE_ROOT = ALGORITHMS_DIR.parents[1]
#: The algorithms of the families (the test suite registers stand-ins of its own, e.g.
#: ``test_sleep`` from ``tests.support``, which have no family).
FAMILY_NAMES = [name for name in NAMES
                if not algorithms()[name].cpu.__module__.startswith("tests.")]


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
    result = result.host()  # a GPU backend may leave its arrays on the device
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


# ------------------------------------------------------------------------------------------------
# The family shape
# ------------------------------------------------------------------------------------------------


def family_of(algorithm: Algorithm) -> str:
    """The family folder holding ``algorithm``'s CPU entry point (``<PACKAGE>.<family>.cpu``)."""
    module = algorithm.cpu.__module__
    assert module.startswith(f"{PACKAGE}."), f"{algorithm.name}: cpu entry in {module}"
    return module.split(".")[len(PACKAGE.split("."))]


def registered_names(init: Path) -> list[str]:
    """Names of the ``register_algorithm(Algorithm(name="..."))`` calls in a family's
    ``__init__.py`` (only that direct form counts: no helper in between)."""
    names = []
    for node in ast.walk(ast.parse(init.read_text())):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "register_algorithm"
                and node.args and isinstance(node.args[0], ast.Call)
                and getattr(node.args[0].func, "id", None) == "Algorithm"):
            names += [kw.value.value for kw in node.args[0].keywords
                      if kw.arg == "name" and isinstance(kw.value, ast.Constant)]
    return names


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_family_shape(name: str) -> None:
    algorithm = algorithms()[name]
    family = family_of(algorithm)
    folder = ALGORITHMS_DIR / family
    for part in ("__init__.py", "cpu.py", "gpu.py"):
        assert (folder / part).is_file(), f"{family}/{part} is missing"
    assert name in registered_names(folder / "__init__.py"), (
        f"{family}/__init__.py does not declare {name!r} with register_algorithm(Algorithm(...))")
    assert algorithm.cpu.__module__ == f"{PACKAGE}.{family}.cpu", algorithm.cpu.__module__
    assert algorithm.gpu.__module__ == f"{PACKAGE}.{family}.gpu", algorithm.gpu.__module__


def imported_modules(path: Path) -> set[str]:
    """Absolute module names a source file imports (``from x import y`` gives ``x`` and
    ``x.y``: ``y`` may be a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("family", [*FAMILIES, COMMON])
def test_no_family_imports_another(family: str) -> None:
    allowed = {family, COMMON} if family != COMMON else {COMMON}
    for path in sorted((ALGORITHMS_DIR / family).rglob("*.py")):
        for module in imported_modules(path):
            if module.startswith(f"{PACKAGE}."):
                other = module.split(".")[len(PACKAGE.split("."))]
                assert other in allowed, (
                    f"{path.relative_to(ALGORITHMS_DIR)} imports {module}: families share code "
                    f"through {COMMON}/ only")


def test_kernels_only_through_the_loader() -> None:
    loader = SOURCE_ROOT / "kernels" / "core" / "cuda.py"
    offenders = [str(path.relative_to(SOURCE_ROOT))
                 for folder in ("kernels", "workers", "service", "client", "bench")
                 for path in sorted((SOURCE_ROOT / folder).rglob("*.py"))
                 if path != loader and "get_function(" in path.read_text()]
    assert not offenders, f"get_function( outside kernels/core/cuda.py: {offenders}"
