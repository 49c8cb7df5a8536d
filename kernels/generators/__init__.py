"""Random and regular graph generators, registered at import.

Each generator returns an :class:`~graphgpu.kernels.core.registry.EdgeSet` of int64 ids
``0..num_nodes-1`` (:func:`generate`: on the host); :func:`generate_graph` turns them into the
graph ``build_graph(src, dst, extra_nodes=arange(n))`` would give, on the device for the GPU
versions (:mod:`~graphgpu.kernels.generators.csr`). The same parameters and seed give the same
edges on a given backend; ``rmat`` gives the same edges on both (a counter-based stream), the GPU
``erdos_renyi`` uses CuPy's generator, so its edges differ from the CPU ones for the same seed
but follow the same model. Sizes are checked against the configured limits before anything is
allocated.

This module is the declaration (parameter models, registration, and the entry points the service
and workers call); the generators are in :mod:`~graphgpu.kernels.generators.cpu` and
:mod:`~graphgpu.kernels.generators.gpu`, their shared vectorised code and the size check in
:mod:`~graphgpu.kernels.generators.arrays`, the graph building in
:mod:`~graphgpu.kernels.generators.csr`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from graphgpu.kernels.core.graph import Graph, NormalizationReport
from graphgpu.kernels.core.registry import (
    Backend,
    EdgeSet,
    Generator,
    ProgressFn,
    get_generator,
    no_progress,
    register_generator,
)
from graphgpu.kernels.core.settings import Settings, get_settings
from graphgpu.kernels.generators import estimates
from graphgpu.kernels.generators.arrays import check_limits, to_host
from graphgpu.kernels.generators.cpu import barabasi_albert, erdos_renyi, grid, rmat, watts_strogatz
from graphgpu.kernels.generators.csr import graph_from_edges
from graphgpu.kernels.generators.gpu import erdos_renyi_gpu, rmat_gpu
from graphgpu.kernels.generators.params import (
    BarabasiAlbertParams,
    ErdosRenyiParams,
    GeneratorParams,
    GridParams,
    RmatParams,
    Size,
    WattsStrogatzParams,
)

__all__ = ["BarabasiAlbertParams", "ErdosRenyiParams", "GeneratorParams", "GridParams",
           "RmatParams", "Size", "WattsStrogatzParams", "expected_edges", "generate",
           "generate_graph", "preferred_backend", "validate_params"]

#: Expected edge count from which a GPU worker uses the GPU version (below it, launch and
#: transfer overheads outweigh the speed-up).
GPU_THRESHOLD_EDGES = 1 << 22
register_generator(Generator("barabasi_albert", "Preferential attachment (Barabasi-Albert).",
                             BarabasiAlbertParams, barabasi_albert,
                             estimate=estimates.barabasi_albert))
register_generator(Generator("watts_strogatz", "Small-world ring with rewiring (Watts-Strogatz).",
                             WattsStrogatzParams, watts_strogatz,
                             estimate=estimates.watts_strogatz))
register_generator(Generator("erdos_renyi", "Uniform random graph, G(n, p) or G(n, m).",
                             ErdosRenyiParams, erdos_renyi, erdos_renyi_gpu, GPU_THRESHOLD_EDGES,
                             estimate=estimates.erdos_renyi))
register_generator(Generator("rmat", "Graph500 R-MAT power-law graph.",
                             RmatParams, rmat, rmat_gpu, GPU_THRESHOLD_EDGES,
                             estimate=estimates.rmat))
register_generator(Generator("grid", "2-D grid lattice.", GridParams, grid,
                             estimate=estimates.grid))


def validate_params(name: str, params: dict[str, Any] | BaseModel) -> GeneratorParams:
    """Validate a generator's parameters with its model and check the size limits.

    Parameters
    ----------
    name : str
    params : dict or BaseModel
        Raw parameters, or a model (re-validated unless it is already the generator's model).

    Returns
    -------
    GeneratorParams
        Instance of the generator's parameter model.

    Raises
    ------
    pydantic.ValidationError
        Bad parameters; each error's ``loc`` names the field (for the 422).
    UnknownName, LimitExceeded
        No such generator; more nodes or expected edges than allowed (``field`` = parameter).
    """
    model = get_generator(name).params_model
    if not isinstance(params, model):
        raw = params.model_dump() if isinstance(params, BaseModel) else params
        params = model.model_validate(raw)
    check_limits(params)
    return params


def expected_edges(name: str, params: dict[str, Any] | BaseModel) -> int:
    """Expected number of generated edges (before normalisation); validates ``params``."""
    return validate_params(name, params).expected_size().edges


def preferred_backend(name: str, params: dict[str, Any] | BaseModel, gpu: bool) -> Backend:
    """The backend a worker should use for a generator job.

    ``"gpu"`` on a GPU worker (``gpu=True``) when the generator has a GPU version and expects at
    least its ``gpu_threshold_edges`` edges; else ``"cpu"``.
    """
    generator = get_generator(name)
    big = expected_edges(name, params) >= (generator.gpu_threshold_edges or 0)
    return "gpu" if gpu and generator.gpu is not None and big else "cpu"


def generate(name: str, params: dict[str, Any] | BaseModel, backend: Backend = "cpu",
             progress: ProgressFn = no_progress) -> EdgeSet:
    """Validate parameters and run a generator.

    Parameters
    ----------
    name : str
    params : dict or BaseModel
        Validated as by :func:`validate_params`.
    backend : {"cpu", "gpu"}
        ``"gpu"`` runs the GPU version when the generator has one (else the CPU version).
    progress : ProgressFn
        Called with the fraction done; may raise to cancel.

    Raises
    ------
    pydantic.ValidationError, UnknownName, LimitExceeded
        As :func:`validate_params`; ``BackendUnavailable`` for ``"gpu"`` without CuPy or a GPU.
    """
    edges = _run(name, params, backend, progress)
    return EdgeSet(to_host(edges.src), to_host(edges.dst), edges.num_nodes)


def generate_graph(name: str, params: dict[str, Any] | BaseModel, backend: Backend = "cpu",
                   progress: ProgressFn = no_progress, settings: Settings | None = None
                   ) -> tuple[Graph, NormalizationReport]:
    """Run a generator and build its graph where it ran (the GPU versions never send the edge
    list to the host, only the finished CSR).

    Returns the graph and report ``build_graph(src, dst, extra_nodes=arange(n))`` gives for the
    edges :func:`generate` returns; parameters, ``backend`` and errors as :func:`generate`, plus
    ``LimitExceeded`` for more distinct edges than ``settings.max_edges``.
    """
    # no name kept for the edges: graph_from_edges frees the device ids before its sort
    return graph_from_edges(_run(name, params, backend, progress), settings or get_settings())


def _run(name: str, params: dict[str, Any] | BaseModel, backend: Backend,
         progress: ProgressFn) -> EdgeSet:
    model = validate_params(name, params)
    return get_generator(name).function(backend)(model, progress)
