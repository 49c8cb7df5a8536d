"""A first start's compile pool: the warm-up's shares compiled in parallel processes.

On a machine whose caches are empty (a fresh clone, a change of code), a worker fills Numba's
and CuPy's disk caches in a pool of processes (a process per core but one; families shared out
among them, or on many cores single algorithms, parts of warm-up hooks and generators) before it
is live, and loads each share as it is done; its own warm-up afterwards finds nearly everything
loaded. A stamp beside each cache (code, library versions, backend) tells a later start that
the cache is filled, so it skips the pool; a lock beside it makes a second worker of the host
wait for the first's pool instead of compiling the same code at once.

A GPU worker that leaves CPU jobs to a CPU worker beside it (``serve`` on a GPU host) asks for
the CPU's shares ``later``: they are compiled after the GPU's, in the same pool, while the GPU
worker is already live; the CPU worker, started once the GPU worker is live, waits on the
CPU's lock and then finds its cache filled.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import multiprocessing
import os
import platform
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import AbstractContextManager, ExitStack
from functools import cache
from pathlib import Path

import numba
import numpy as np

from graphgpu.kernels.core.cuda import kernel_cache_dir
from graphgpu.kernels.core.locks import exclusive
from graphgpu.kernels.core.registry import Backend, algorithms
from graphgpu.workers import warmup
from graphgpu.workers.warmup import EXAMPLES, GENERATOR_EXAMPLES, PARSER

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
#: The order in which a pool takes the backends' locks (one order: no two workers wait on
#: each other).
LOCK_ORDER: tuple[Backend, ...] = ("gpu", "cpu")


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
    # late: on the GPU host count_connected_subgraphs' GPU share (12.7 s) started 11.4 s into
    # a 22.8 s pool and ended last (2026-11-27). Shares go longest first by their seconds at
    # the last pool run on this machine (a start after a code change), else by those of the
    # GPU host (:func:`typical_seconds`); those never timed first of all, in a fixed order that
    # puts the likely longest first: the families with warm-up hooks, then the generators and
    # parser, then the rest, GPU before CPU within each.
    hooked = {name for name, algorithm in algorithms().items() if algorithm.warm_up is not None}
    seconds = typical_seconds() | seconds

    def rank(share: Share) -> tuple[float, int, bool]:
        backend, names, _ = share
        kind = 0 if hooked & set(names) else 2 if names else 1
        return -seconds.get(share_key(share), float("inf")), kind, backend != "gpu"

    return sorted(shares, key=rank)


@cache
def typical_seconds() -> dict[str, float]:
    """Each share's seconds (:func:`share_key`) in the many-core layout, medians of six cold
    pools on a 16-core H100 host (2026-11-27, ``share_seconds.json``; the ``seconds`` that a
    pool writes into its stamps): the order of a first start's shares. A share missing from it
    (a new algorithm) goes first."""
    return json.loads(Path(__file__).with_name("share_seconds.json").read_text())


def _compile(backend: Backend, names: tuple[str, ...], part: str | None) -> float:
    # In a pool process: warm one share (algorithm names, or none: generators and parser; a
    # part of them or all) on one backend, which fills the disk caches; returns its seconds.
    # What shares have in common (Numba functions, CUDA modules) is compiled by the first that
    # needs it, the others waiting for it (core/jit_cache.py, core/cuda.py).
    start = time.perf_counter()
    if names:
        warmup.warm_up(backend, names, part)
    else:
        warmup.warm_up_inputs(backend, part)
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
        return kernel_cache_dir() / "graphgpu-warm-up.json"
    return KERNELS / "__pycache__" / "graphgpu-warm-up-cpu.json"


def _locked(backend: Backend, wait: bool = True) -> AbstractContextManager[bool]:
    # The backend's compile lock, beside its stamp: a second worker of this host waits for the
    # first one's pool (logged) instead of compiling the same code at once; without ``wait``
    # it goes on at once (yielding False) when another holds it.
    return exclusive(stamp_path(backend).with_suffix(".lock"), wait=wait, waiting=lambda: log.info(
        "waiting for another worker's compile pool (%s)", backend))


def precompile(*backends: Backend, processes: int | None = None, load: bool = False,
               later: tuple[Backend, ...] = ()) -> set[Backend]:
    """Fill the compiled-code caches of ``backends`` in one pool (shares as :func:`_shares`
    makes them, of the backends whose stamps are not current) unless their stamps say they are
    filled for this code, or there are too few cores to gain. Failures are logged, not raised:
    the worker's own :func:`.warmup.warm_up` then meets (and reports) them, and no stamp is written.
    ``load``: this process also runs each share (from the caches) as its helper finishes,
    while the others still compile (the worker's own warm-up after the pool took 6.6 s of a
    48 s cold start on the GPU host, 2026-11-27). Each stamp also keeps its shares' seconds, by
    which the next pool (after a change of code) orders them. ``later``: backends compiled
    for another worker of this host, after those of ``backends``: this returns once
    ``backends``'s shares are done, and the pool goes on with ``later``'s in a thread, holding
    their locks until their stamps are written (none is loaded here).

    Returns
    -------
    set of str
        The backends of ``backends`` whose every share the pool compiled (and, with ``load``,
        this process ran too: together the shares are :func:`.warmup.warm_up`'s work but
        :func:`.warmup.reserve_buffers`); empty when the pool did not run.
    """
    # A process per core: the API and Redis idle until ready. With one share per family the
    # 2-core VM's cold warm-up took 46.6 s in two processes against 70.0 s in one (2026-11-26;
    # with the shares of an earlier layout two processes had been slower, 93 s against 59 s).
    processes = processes or min(MAX_PROCESSES, len(os.sched_getaffinity(0)))
    if processes < 2:
        return set()
    held: dict[Backend, ExitStack] = {}  # the locks of the backends the pool compiles
    marks: dict[Backend, str] = {}
    seconds: dict[str, float] = {}  # each share's at the last pool run, from the stamps
    for backend in sorted({*backends, *later}, key=LOCK_ORDER.index):
        lock = ExitStack()
        # A later backend that another worker's pool holds is left to it (a second GPU's
        # worker waits for the first one's GPU shares, not for its CPU's), as is one whose
        # lock cannot be taken here (its own worker compiles it then).
        if not lock.enter_context(_locked(backend, wait=backend in backends)) and (
                backend not in backends):
            lock.close()
            continue
        mark = fingerprint(backend)
        try:
            stamp = json.loads(stamp_path(backend).read_text())
            if stamp.get("fingerprint") == mark:
                lock.close()  # filled, by this worker's last start or another worker's pool
                continue
            seconds |= stamp.get("seconds", {})
        except (OSError, ValueError, AttributeError, TypeError):
            pass
        marks[backend], held[backend] = mark, lock
    if not marks:
        return set()
    first = [backend for backend in backends if backend in marks]
    rest = [backend for backend in later if backend in marks and backend not in first]
    start = time.perf_counter()
    # spawn, not fork: each child starts CUDA and Numba's threads of its own
    pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_skip_teardown)

    # the first group's shares go first
    futures = [{pool.submit(_compile, *share): share
                for share in _shares(group, processes, seconds)} for group in (first, rest)]

    def finish(group: list[Backend], shares: dict[Future[float], Share],
               load: bool) -> set[Backend]:
        with ExitStack() as unlock:  # the group's locks, once their stamps are written
            for backend in group:
                unlock.push(held[backend])
            return _finish(shares, {b: marks[b] for b in group}, load, start, processes)

    if not rest:
        with pool:
            return finish(first, futures[0], load)
    ready = finish(first, futures[0], load)

    def finish_later() -> None:
        with pool:
            finish(rest, futures[1], False)

    threading.Thread(target=finish_later, name="compile-pool", daemon=True).start()
    return ready


def _finish(futures: dict[Future[float], Share], marks: dict[Backend, str], load: bool,
            start: float, processes: int) -> set[Backend]:
    # Wait for the shares of the backends of ``marks``: log each, run each here too with
    # ``load``; stamp each backend whose shares all compiled. Returns those, less any whose
    # share failed to load here.
    failed: set[Backend] = set()
    unloaded: set[Backend] = set()
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
    if marks:
        log.info("compiled the %s kernels in %d processes in %.1f s", " and ".join(marks),
                 processes, time.perf_counter() - start)
    for backend, mark in marks.items():
        if backend in failed:
            continue
        stamp = stamp_path(backend)
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(json.dumps({"fingerprint": mark, "at": time.time(),
                                         "seconds": timed[backend]}))
        except OSError as exc:  # a read-only install: compiles in parallel at every start
            log.warning("could not write %s: %s", stamp, exc)
    return set(marks) - failed - unloaded
