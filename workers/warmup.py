"""Worker warm-up: compile everything a job may need before the worker says it is live.

Compiled code is cached on disk, so only a worker's first start on a machine compiles: Numba's
``cache=True`` functions beside their sources (``__pycache__``), CuPy's kernels in
``CUPY_CACHE_DIR`` (set by :func:`use_kernel_cache` under the data folder unless already set).
A first start on a machine of several cores fills those caches in parallel first
(:mod:`graphgpu.workers.compile_pool`: the warm-up below, cut into shares); the worker's own
:func:`warm_up` then finds nearly everything compiled.

The documented examples run on a 64-node ring; on the GPU, CuPy's array functions also compile a
variant per size class (multi-block scans behind masks and ``nonzero``, heavy-row paths), so
the algorithms cheap enough run their examples a second time on a skewed R-MAT graph
(:data:`SKEWED`; on an H100 the first ``pagerank`` job on dblp-2010 took 3.3 s, the second 16 ms).
"""

from __future__ import annotations

import logging
import os
import time
from functools import cache
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from graphgpu.kernels.core import device
from graphgpu.kernels.core.errors import KernelError
from graphgpu.kernels.core.graph import Graph, simple_graph
from graphgpu.kernels.core.io.formats import warm_up_upload_path
from graphgpu.kernels.core.registry import Algorithm, Backend, algorithms, no_progress
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.generators import generate_graph
from graphgpu.kernels.generators.arrays import rmat_edges
from graphgpu.kernels.generators.params import RmatParams

log = logging.getLogger("graphgpu.worker")

#: The share's part that runs the algorithms' documented examples (no warm-up hook).
EXAMPLES = "examples"
#: The inputs' part that compiles the upload parser.
PARSER = "parser"
#: Small runs of every generator (their compiled loops and, on the GPU, the device build).
GENERATOR_EXAMPLES: dict[str, dict[str, object]] = {
    "rmat": {"scale": 4, "edge_factor": 4}, "erdos_renyi": {"n": 12, "p": 0.5},
    "barabasi_albert": {"n": 12, "m": 2}, "watts_strogatz": {"n": 12, "k": 4, "p": 0.5},
    "grid": {"rows": 2, "cols": 3},
}


#: The GPU's second warm-up graph: hubs of over a thousand arcs among 65,536 nodes (about 0.5M
#: edges), so that size-dependent paths compile before the first job.
SKEWED = {"scale": 16, "edge_factor": 8, "seed": 1}
#: Results up to this size leave a GPU worker through a staging buffer pinned at warm-up.
STAGING_BYTES = 256 << 20
#: Algorithms whose estimate on :data:`SKEWED` is within these (seconds, result and device
#: bytes) run their examples on it; the rest, and those without an estimate, would make every
#: start slower (or the device fuller) than they could gain. Estimates are upper bounds: louvain
#: is estimated at 0.68 s there.
SKEWED_SECONDS = 1.0
SKEWED_BYTES = 64 << 20
SKEWED_DEVICE_BYTES = 1 << 30
#: Algorithms without an estimate that still run on the skewed graph: passes over the graph
#: that take milliseconds there. Without it the first bfs job on dblp-2010 (H100, warm caches)
#: compiled a CuPy fill (130 ms) and loaded a CUB count kernel from disk (10 ms) that its runs
#: on the 64-node ring had not needed.
SKEWED_UNESTIMATED = ("bfs", "connected_components", "sssp", "mis")


def warm_up(backend: Backend, names: tuple[str, ...] | None = None,
            part: str | None = None) -> dict[str, float]:
    """Compile (or load from the disk caches) every algorithm's kernels, the generators and the
    upload parser, and initialise CUDA, before the first job arrives, so that no job pays for
    them (``names``: only those algorithms, e.g. for a benchmark's fresh process or a compile
    pool's share; then neither generators nor parser; ``part``: only their examples
    (:data:`EXAMPLES`) or one part of their warm-up hooks). Returns the seconds each part took
    (algorithm names, ``inputs``)."""
    ring = np.arange(64)
    graphs = [simple_graph(ring, np.roll(ring, 1))]  # no compiled CSR builder to load
    if backend == "gpu" and part in (None, EXAMPLES):
        graphs.append(skewed_graph())
    seconds: dict[str, float] = {}
    for algorithm in algorithms().values():
        if names is not None and algorithm.name not in names:
            continue
        start = time.perf_counter()
        if part in (None, EXAMPLES):
            for graph in graphs:
                run_examples(algorithm, graph, backend, skewed=graph is not graphs[0])
            if algorithm.directed == "native":
                run_examples(algorithm, directed_graph(), backend, skewed=False)
        if algorithm.warm_up is not None and part is None:
            algorithm.warm_up(backend)
        elif part in algorithm.warm_up_parts:
            algorithm.warm_up(backend, part)
        seconds[algorithm.name] = time.perf_counter() - start
    if names is None:
        start = time.perf_counter()
        warm_up_inputs(backend)
        reserve_buffers(backend)
        seconds["inputs"] = time.perf_counter() - start
    return seconds


def reserve_buffers(backend: Backend) -> None:
    """The part of :func:`warm_up` that compiles nothing: on the GPU, the pinned staging buffer
    results leave through and the upload buffers."""
    if backend == "gpu":
        device.reserve_staging(STAGING_BYTES)
        device.reserve_upload_buffers()


@cache
def directed_graph() -> Graph:
    """A directed graph of 64 nodes (a cycle and a chord from each node, in- and out-degrees
    of 1 to 3) for the examples of the algorithms that run on directed graphs as they are:
    their directed code (the in-CSR, reverse passes) compiled on a worker's first directed job
    otherwise (bfs on a 200-node graph, H100, 2026-11-27)."""
    ring = np.arange(64)
    return simple_graph(np.concatenate([ring, ring]),
                        np.concatenate([np.roll(ring, 1), (7 * ring + 3) % 64]), directed=True)


@cache
def skewed_graph() -> Graph:
    """The :data:`SKEWED` R-MAT graph, as ``generate_graph("rmat", SKEWED)`` builds it, drawn by
    the vectorised generator on the host and built with NumPy alone: every GPU share of a first
    start's compile pool builds it, and through the GPU generator each compiled the same CuPy
    passes (12.8 s of a 40 s share on the GPU host, 2026-11-27). Built once per process (a
    worker loads every GPU share through it; nothing changes its arrays)."""
    edges = rmat_edges(np, RmatParams(**SKEWED), no_progress)
    return simple_graph(edges.src, edges.dst, np.arange(edges.num_nodes))


def run_examples(algorithm: Algorithm, graph: Graph, backend: Backend, skewed: bool) -> None:
    """Every documented example (their node ids are small; together they reach every kernel),
    else the first node for every node parameter; on the skewed graph only those whose
    estimate is within :data:`SKEWED_SECONDS`, :data:`SKEWED_BYTES` and
    :data:`SKEWED_DEVICE_BYTES`, and those of :data:`SKEWED_UNESTIMATED`."""
    examples = algorithm.params_model.model_json_schema().get("examples") or [
        {name: int(graph.node_ids[0]) for name in algorithm.node_params}]
    for example in examples:
        try:
            params = algorithm.params_model.model_validate(example)
        except ValidationError:
            continue  # needs parameters we cannot guess; it compiles on first use
        if not skewed:
            algorithm.function(backend)(graph, params, no_progress)
            continue
        try:  # a refusal of this graph (a limit, say) only means: nothing to compile here
            if algorithm.estimate is None:
                if algorithm.name in SKEWED_UNESTIMATED:
                    algorithm.function(backend)(graph, params, no_progress)
                continue
            cost = algorithm.estimate(graph, params, backend)
            if (cost.seconds is not None and cost.seconds <= SKEWED_SECONDS
                    and (cost.result_bytes or 0) <= SKEWED_BYTES
                    and (cost.device_bytes or 0) <= SKEWED_DEVICE_BYTES):
                algorithm.function(backend)(graph, params, no_progress)
        except KernelError as exc:
            log.debug("warm-up: %s on the skewed graph refused: %s", algorithm.name, exc)


def warm_up_inputs(backend: Backend, part: str | None = None) -> None:
    """Compile what makes graphs: every generator (compiled loops; on the GPU the device build)
    and the upload path (parser and CSR builder), which the API runs from the same disk cache
    (compiled here, the API loads it); ``part``: one generator's name, or :data:`PARSER`,
    only."""
    for name, params in GENERATOR_EXAMPLES.items():
        if part in (None, name):
            generate_graph(name, params, backend)
    if part in (None, PARSER):
        warm_up_upload_path()


def use_kernel_cache(settings: Settings) -> Path:
    """Point CuPy's kernel cache into the data folder (unless ``CUPY_CACHE_DIR`` is set), so
    compiled CUDA survives restarts wherever the home folder does not; returns the folder."""
    folder = Path(os.environ.setdefault("CUPY_CACHE_DIR",
                                        str(settings.data_dir / "cache" / "cupy")))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
