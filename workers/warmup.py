"""Worker warm-up: compile everything a job may need before the worker says it is live.

Compiled code is cached on disk, so only a worker's first start on a machine compiles: Numba's
``cache=True`` functions beside their sources (``__pycache__``), CuPy's kernels in
``CUPY_CACHE_DIR`` (set by :func:`use_kernel_cache` under the data folder unless already set).
A first start on a machine of several cores compiles in parallel (:func:`precompile`: a process
per core but one; families shared out among them, or on many cores single algorithms, parts of
warm-up hooks and generators) to fill those caches, and the worker loads each share as it is
done; its own :func:`warm_up` afterwards finds nearly everything loaded. A stamp beside each
cache (code, library versions, backend) tells a later start that the cache is filled, so it
skips the parallel pass.

The documented examples run on a 64-node ring; on the GPU, CuPy's array functions also compile a
variant per size class (multi-block scans behind masks and ``nonzero``, heavy-row paths), so
the algorithms cheap enough run their examples a second time on a skewed R-MAT graph
(:data:`SKEWED`; on an H100 the first ``pagerank`` job on dblp-2010 took 3.3 s, the second 16 ms).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import multiprocessing
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import cache
from pathlib import Path

import numba
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

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
#: Most processes a first start compiles in (each holds a Python with NumPy, Numba and, on a
#: GPU worker, a CUDA context); fewer than two (a machine of one core) means none.
MAX_PROCESSES = 15
#: From this many processes a first start's compile pool splits its shares finer
#: (:func:`_shares`).
FINE_PROCESSES = 8
#: A compile pool share: backend, algorithm names (none: the generators and parser), part
#: (None: all of them; :data:`EXAMPLES`, a warm-up hook's part, a generator, :data:`PARSER`).
Share = tuple[Backend, tuple[str, ...], str | None]
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


def _families(backend: Backend) -> dict[str, list[str]]:
    """Algorithm names grouped by the package of their backend function (one family's shared
    kernels compile in one process), by package."""
    groups: dict[str, list[str]] = {}
    for algorithm in algorithms().values():
        module = getattr(algorithm.function(backend), "__module__", "") or algorithm.name
        groups.setdefault(module.rsplit(".", 1)[0], []).append(algorithm.name)
    return groups


def _shares(backends: list[Backend], processes: int,
            seconds: dict[str, float] | None = None) -> list[Share]:
    """The compile pool's shares, longest first (:func:`_longest_first`). Below
    :data:`FINE_PROCESSES` a share is a family on one backend (the generators and parser one
    more), so that what a family's algorithms share compiles once. From there, on the GPU, an
    algorithm, a part of a warm-up hook, a generator: on the GPU host (16 cores) the family
    shares' pool took 38.8 s, its longest share 36.2 s, while most processes idled after 20 s
    (2026-11-27). The CPU keeps its family shares (and one of generators and parser), splitting
    only the warm-up hooks whose parts compile apart there (``Algorithm.warm_up_split``): its
    algorithms and generators share Numba helpers (the CSR build, DAG orientations, sorts), so
    that the finer CPU shares took 92.1 s of work on the 2-core VM, each alone on empty caches,
    against 35.1 s in one process (2026-11-27), while the longest CPU share, a hook's part,
    stays the longest. ``seconds``: each share's time at the last pool run
    (:func:`share_key`)."""
    shares: list[Share] = []
    for backend in backends:
        if processes < FINE_PROCESSES:
            shares += [(backend, tuple(names), None)
                       for names in [*_families(backend).values(), []]]
        elif backend == "cpu":
            shares += _hook_shares(backend) + [(backend, (), None)]
        else:
            for name, algorithm in algorithms().items():
                parts = algorithm.warm_up_parts if backend in algorithm.warm_up_split else ()
                shares += [(backend, (name,), part) for part in
                           ((EXAMPLES, *parts) if parts else (None,))]
            shares += [(backend, (), part) for part in (*GENERATOR_EXAMPLES, PARSER)]
    return _longest_first(shares, seconds or {})


def _hook_shares(backend: Backend) -> list[Share]:
    # A family a share, but a family whose warm-up hook splits on this backend gives its
    # examples one share and each part of the hook one more.
    shares: list[Share] = []
    for names in _families(backend).values():
        split = [name for name in names if backend in algorithms()[name].warm_up_split
                 and algorithms()[name].warm_up_parts]
        if not split:
            shares.append((backend, tuple(names), None))
            continue
        shares.append((backend, tuple(names), EXAMPLES))
        shares += [(backend, (name,), part) for name in split
                   for part in algorithms()[name].warm_up_parts]
        whole = [name for name in names if name not in split and algorithms()[name].warm_up]
        shares += [(backend, (name,), None) for name in whole]  # runs its examples again
    return shares


def share_key(share: Share) -> str:
    """A share's name in the pool's record of seconds (``backend:names:part``)."""
    backend, names, part = share
    return f"{backend}:{','.join(names)}:{part or ''}"


def _longest_first(shares: list[Share], seconds: dict[str, float]) -> list[Share]:
    # List scheduling starts the shares in this order, so a long share submitted late ends
    # late: on the GPU host the longest (betweenness CPU 7.5 s, count_connected_subgraphs GPU
    # 8.2 s, mis CPU 8.2 s) started at 17-20 s of a 24.6 s pool (2026-11-27). Shares timed at
    # the last pool run (a start after a code change) go longest first; those never timed
    # (a fresh clone: every share) first of all, in a fixed order that puts the likely longest
    # first: the families with warm-up hooks, then the generators and parser, then the rest,
    # GPU before CPU within each.
    hooked = {name for name, algorithm in algorithms().items() if algorithm.warm_up is not None}

    def rank(share: Share) -> tuple[float, int, bool]:
        backend, names, _ = share
        kind = 0 if hooked & set(names) else 2 if names else 1
        return -seconds.get(share_key(share), float("inf")), kind, backend != "gpu"

    return sorted(shares, key=rank)


def _compile(backend: Backend, names: tuple[str, ...], part: str | None) -> float:
    # In a pool process: warm one share (algorithm names, or none: generators and parser; a
    # part of them or all) on one backend, which fills the disk caches; returns its seconds.
    # Numba functions that shares have in common may be compiled by two at once: their saves
    # are serialised by core/jit_cache.py.
    start = time.perf_counter()
    if names:
        warm_up(backend, names, part)
    else:
        warm_up_inputs(backend, part)
    return time.perf_counter() - start


def _skip_teardown() -> None:
    # In a pool process, before its first share: leave without the interpreter's teardown.
    # Registered after Numba's handlers, it runs first at exit (atexit is last in, first out);
    # the shares' compiled code is on disk by then, and freeing it object by object took
    # 1.6 s after critical_nodes and mis on the 2-core VM, which the pool waited for.
    atexit.register(os._exit, 0)


def stamp_path(backend: Backend) -> Path:
    """Where :func:`precompile` records that the caches are filled: beside the cache it filled
    (Numba's, beside our sources; CuPy's, ``CUPY_CACHE_DIR``), so that a worker on a fresh data
    folder (every test stack) does not compile again what is cached already."""
    if backend == "gpu":
        return Path(os.environ.get("CUPY_CACHE_DIR", "~/.cupy/kernel_cache")).expanduser() / (
            "graphgpu-warm-up.json")
    return KERNELS / "__pycache__" / "graphgpu-warm-up-cpu.json"


def precompile(*backends: Backend, processes: int | None = None,
               load: bool = False) -> set[Backend]:
    """Fill the compiled-code caches of ``backends`` in one pool (shares as :func:`_shares`
    makes them, of the backends whose stamps are not current) unless their stamps say they are
    filled for this code, or there are too few cores to gain. Failures are logged, not raised:
    the worker's own :func:`warm_up` then meets (and reports) them, and no stamp is written.
    ``load``: this process also runs each share (from the caches) as its helper finishes,
    while the others still compile (the worker's own warm-up after the pool took 6.6 s of a
    48 s cold start on the GPU host, 2026-11-27). Each stamp also keeps its shares' seconds, by
    which the next pool (after a change of code) orders them.

    Returns
    -------
    set of str
        The backends whose every share the pool compiled (and, with ``load``, this process ran
        too: together the shares are :func:`warm_up`'s work but :func:`reserve_buffers`); empty
        when the pool did not run.
    """
    marks: dict[Backend, str] = {}
    seconds: dict[str, float] = {}  # each share's at the last pool run, from the stamps
    for backend in backends:
        mark = fingerprint(backend)
        try:
            stamp = json.loads(stamp_path(backend).read_text())
            if stamp.get("fingerprint") == mark:
                continue
            seconds |= stamp.get("seconds", {})
        except (OSError, ValueError, AttributeError, TypeError):
            pass
        marks[backend] = mark
    # A process per core: the API and Redis idle until ready. With one share per family the
    # 2-core VM's cold warm-up took 46.6 s in two processes against 70.0 s in one (2026-11-26;
    # with the shares of an earlier layout two processes had been slower, 93 s against 59 s).
    processes = processes or min(MAX_PROCESSES, len(os.sched_getaffinity(0)))
    if not marks or processes < 2:
        return set()
    start = time.perf_counter()
    failed: set[Backend] = set()
    unloaded: set[Backend] = set()
    # spawn, not fork: each child starts CUDA and Numba's threads of its own
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_skip_teardown) as pool:
        futures = {pool.submit(_compile, *share): share
                   for share in _shares(list(marks), processes, seconds)}
        timed: dict[Backend, dict[str, float]] = {backend: {} for backend in marks}
        for future in as_completed(futures):
            backend, names, part = futures[future]
            what = (f"{', '.join(names) or 'generators and parser'}"
                    f"{f' ({part})' if part else ''} ({backend})")
            try:
                took = timed[backend][share_key(futures[future])] = future.result()
                log.info("compiled %s in %.1f s", what, took)
            except Exception as exc:
                failed.add(backend)
                log.warning("compiling %s in a helper process failed: %s", what, exc)
                continue
            if load:
                try:
                    _compile(backend, names, part)
                except Exception as exc:  # the worker's own warm-up meets it again and reports
                    unloaded.add(backend)
                    log.warning("loading %s failed: %s", what, exc)
    log.info("compiled the %s kernels in %d processes in %.1f s", " and ".join(marks),
             processes, time.perf_counter() - start)
    for backend, mark in marks.items():
        if failed:
            break
        stamp = stamp_path(backend)
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(json.dumps({"fingerprint": mark, "at": time.time(),
                                         "seconds": timed[backend]}))
        except OSError as exc:  # a read-only install: compiles in parallel at every start
            log.warning("could not write %s: %s", stamp, exc)
    return set(marks) - failed - unloaded
