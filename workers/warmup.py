"""Worker warm-up: compile everything a job may need before the worker says it is live.

Compiled code is cached on disk, so only a worker's first start on a machine compiles: Numba's
``cache=True`` functions beside their sources (``__pycache__``), CuPy's kernels in
``CUPY_CACHE_DIR`` (set by :func:`use_kernel_cache` under the data folder unless already set).
A first start on a machine of several cores compiles in parallel (:func:`precompile`: a process
per core but one, families shared out among them) to fill those caches; the worker then runs
:func:`warm_up` itself, which now only loads. A stamp beside each cache (code, library versions,
backend) tells a later start that the cache is filled, so it skips the parallel pass.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numba
import numpy as np
from pydantic import ValidationError

from graphgpu.kernels.core.graph import build_graph
from graphgpu.kernels.core.io.formats import parse_graph
from graphgpu.kernels.core.registry import Backend, algorithms, no_progress
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.generators import generate_graph

log = logging.getLogger("graphgpu.worker")

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
#: Most processes a first start compiles in (each holds a Python with NumPy, Numba and, on a
#: GPU worker, a CUDA context); fewer than two (a machine of two cores) means none.
MAX_PROCESSES = 8
#: Small runs of every generator (their compiled loops and, on the GPU, the device build).
GENERATOR_EXAMPLES: dict[str, dict[str, object]] = {
    "rmat": {"scale": 4, "edge_factor": 4}, "erdos_renyi": {"n": 12, "p": 0.5},
    "barabasi_albert": {"n": 12, "m": 2}, "watts_strogatz": {"n": 12, "k": 4, "p": 0.5},
    "grid": {"rows": 2, "cols": 3},
}


def warm_up(backend: Backend, names: tuple[str, ...] | None = None) -> None:
    """Compile (or load from the disk caches) every algorithm's kernels, the generators and the
    upload parser, and initialise CUDA, before the first job arrives, so that no job pays for
    them (``names``: only those algorithms, e.g. for a benchmark's fresh process; then neither
    generators nor parser)."""
    ring = np.arange(64)
    graph, _ = build_graph(ring, np.roll(ring, 1))
    for algorithm in algorithms().values():
        if names is not None and algorithm.name not in names:
            continue
        # Every documented example (their node ids are small; together they reach every
        # kernel), else the first node for every node parameter.
        examples = algorithm.params_model.model_json_schema().get("examples") or [
            {name: int(graph.node_ids[0]) for name in algorithm.node_params}]
        for example in examples:
            try:
                params = algorithm.params_model.model_validate(example)
            except ValidationError:
                continue  # needs parameters we cannot guess; it compiles on first use
            algorithm.function(backend)(graph, params, no_progress)
        if algorithm.warm_up is not None:
            algorithm.warm_up(backend)
    if names is None:
        warm_up_inputs(backend)


def warm_up_inputs(backend: Backend) -> None:
    """Compile what makes graphs: every generator (compiled loops; on the GPU the device build)
    and the upload parser, which the API runs from the same disk cache (compiled here, its first
    upload only loads it)."""
    for name, params in GENERATOR_EXAMPLES.items():
        generate_graph(name, params, backend)
    parse_graph(b"0 1\n1 2\n")


def use_kernel_cache(settings: Settings) -> Path:
    """Point CuPy's kernel cache into the data folder (unless ``CUPY_CACHE_DIR`` is set), so
    compiled CUDA survives restarts wherever the home folder does not; returns the folder."""
    folder = Path(os.environ.setdefault("CUPY_CACHE_DIR",
                                        str(settings.data_dir / "cache" / "cupy")))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def fingerprint(backend: Backend) -> str:
    """What the compiled code depends on: our kernel sources, the compilers, the backend."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(KERNELS.rglob("*")):
        if path.suffix in (".py", ".cu", ".cuh"):
            stat = path.stat()
            digest.update(f"{path}:{stat.st_mtime_ns}:{stat.st_size}\n".encode())
    versions = [backend, platform.python_version(), numba.__version__, np.__version__,
                os.environ.get("CUPY_CACHE_DIR", "")]
    if backend == "gpu":
        from graphgpu.kernels.core.device import cupy, device_name

        versions += [cupy().__version__, device_name("gpu")]
    digest.update("|".join(versions).encode())
    return digest.hexdigest()


def _families(backend: Backend) -> list[tuple[str, ...]]:
    """Algorithm names grouped by the module of their backend function (one family's shared
    kernels compile in one process)."""
    groups: dict[str, list[str]] = {}
    for algorithm in algorithms().values():
        module = getattr(algorithm.function(backend), "__module__", "") or algorithm.name
        groups.setdefault(module.rsplit(".", 1)[0], []).append(algorithm.name)
    return [tuple(names) for names in groups.values()]


def _compile(backend: Backend, share: tuple[str, ...]) -> None:
    # In a pool process: warm one share (algorithm names; empty: generators and parser), which
    # fills the disk caches.
    if share:
        warm_up(backend, share)
    else:
        warm_up_inputs(backend)


def stamp_path(backend: Backend) -> Path:
    """Where :func:`precompile` records that the caches are filled: beside the cache it filled
    (Numba's, beside our sources; CuPy's, ``CUPY_CACHE_DIR``), so that a worker on a fresh data
    folder (every test stack) does not compile again what is cached already."""
    if backend == "gpu":
        return Path(os.environ.get("CUPY_CACHE_DIR", "~/.cupy/kernel_cache")).expanduser() / (
            "graphgpu-warm-up.json")
    return KERNELS / "__pycache__" / "graphgpu-warm-up-cpu.json"


def precompile(backend: Backend, processes: int | None = None) -> bool:
    """Fill the compiled-code caches in parallel unless their stamp says they are filled for
    this code or there are too few cores to gain; returns whether it ran. Failures are logged,
    not raised: the worker's own :func:`warm_up` then meets (and reports) them, and no stamp is
    written."""
    stamp, mark = stamp_path(backend), fingerprint(backend)
    try:
        if json.loads(stamp.read_text()).get("fingerprint") == mark:
            return False
    except (OSError, ValueError):
        pass
    # One core stays with the API and Redis. On two cores the helpers only add their start-up:
    # a cold warm-up took 93 s with them and 59 s without on the 2-core VM.
    processes = processes or min(MAX_PROCESSES, len(os.sched_getaffinity(0)) - 1)
    if processes < 2:
        return False
    start = time.perf_counter()
    shares = [*_families(backend), ()]
    failed = False
    # spawn, not fork: each child starts CUDA and Numba's threads of its own
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_compile, backend, share): share for share in shares}
        for future in as_completed(futures):
            try:
                future.result()
            except Exception as exc:
                failed = True
                log.warning("compiling %s in a helper process failed: %s",
                            ", ".join(futures[future]) or "generators and parser", exc)
    log.info("compiled the %s kernels in %d processes in %.1f s", backend, processes,
             time.perf_counter() - start)
    if not failed:
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(json.dumps({"fingerprint": mark, "at": time.time()}))
        except OSError as exc:  # a read-only install: compiles in parallel at every start
            log.warning("could not write %s: %s", stamp, exc)
    return True
