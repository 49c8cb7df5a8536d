"""The one CUDA loader: compile a family's ``.cu`` once per device and options, and launch helpers.

Every GPU backend gets its kernels here, by name: ``kernels(CUDA_SOURCE, NAMES)[name]``, so a
source is compiled by NVRTC for the current device's architecture once per process, and its
functions are looked up once per device, and both are reused across jobs; worker warm-up calls
the families' examples, which fills these caches before the first job arrives.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import cache
from pathlib import Path
from typing import Any

from graphgpu.kernels.core.device import cupy
from graphgpu.kernels.core.locks import exclusive

logger = logging.getLogger(__name__)

#: Options every module is compiled with; headers shared by several families (e.g. the grid
#: barrier of persistent launches) are found in ``kernels/algorithms/common``.
COMMON_HEADERS = Path(__file__).resolve().parents[1] / "algorithms" / "common"
BASE_OPTIONS: tuple[str, ...] = ("-std=c++17", f"-I{COMMON_HEADERS}")


def current_device() -> int:
    """Id of the CUDA device this thread runs on."""
    return int(cupy().cuda.Device().id)


def module_code(source: Path) -> str:
    """The text compiled for ``source``: the file, then a comment naming a digest of the headers
    it can include (its folder's and the common folder's ``.cuh``). CuPy's on-disk compile cache
    keys on the code and the options only, so without the digest an edited header would keep
    serving the binary built from the old one."""
    digest = hashlib.sha256()
    for header in sorted([*COMMON_HEADERS.glob("*.cuh"), *source.parent.glob("*.cuh")]):
        digest.update(header.name.encode() + b"\0" + header.read_bytes())
    return f"{source.read_text()}\n// headers {digest.hexdigest()}\n"


@cache
def _compiled(source: Path, options: tuple[str, ...], device_id: int) -> Any:
    # device_id is part of the key: a RawModule is loaded into the context of one device.
    # -I the source's folder: a family's .cu files may share a header there (after the common
    # folder's, in BASE_OPTIONS).
    del device_id
    return cupy().RawModule(code=module_code(source),
                            options=(*BASE_OPTIONS, f"-I{source.parent}", *options))


def kernels(source: Path, names: tuple[str, ...], options: tuple[str, ...] = ()) -> dict[str, Any]:
    """Kernels of one module by name (CuPy ``RawKernel``), looked up once per device: a per-call
    lookup costs microseconds that a small graph's whole BFS does not have.

    Parameters
    ----------
    source : Path
        The family's ``.cu`` file.
    names : tuple of str
        Its ``extern "C"`` kernels a caller needs (a module keeps one tuple of all of them, so
        that every call hits one cache entry).
    options : tuple of str
        Extra NVRTC options (``-D`` constants), part of the cache key.

    Returns
    -------
    dict
        Name -> kernel. Treat it as read-only (setting a kernel attribute such as
        ``max_dynamic_shared_size_bytes`` to the value every launch needs is fine).
    """
    return _kernels(Path(source), tuple(names), tuple(options), current_device())


def module(source: Path, options: tuple[str, ...] = ()) -> Any:
    """The compiled module of ``source`` with ``options`` on the current device (the one that
    :func:`kernels` takes its kernels from): for its ``__device__`` globals
    (``get_global``), e.g. a benchmark's timestamps."""
    return _compiled(Path(source), tuple(options), current_device())


@cache
def _kernels(source: Path, names: tuple[str, ...], options: tuple[str, ...],
             device_id: int) -> dict[str, Any]:
    module = _compiled(source, options, device_id)
    # The first lookup compiles the module, or loads it from CuPy's disk cache. Processes that
    # need one module at once (a first start's compile pool: counting's module in five shares
    # on the GPU host, 2026-11-27) compile it in one of them; the others wait, then load it.
    with exclusive(_lock_file(module.code, options)):  # the text it compiles, read once
        return {name: module.get_function(name) for name in names}


def module_lock(source: Path, options: tuple[str, ...] = ()) -> Path:
    """The file locked while a module's first lookup in a process compiles it (or loads it from
    CuPy's disk cache): beside that cache, one per module text and options (what CuPy's key
    adds, the architecture and the compiler's version, is the same for a machine's processes)."""
    return _lock_file(module_code(Path(source)), options)


def kernel_cache_dir() -> Path:
    """CuPy's on-disk kernel cache (``CUPY_CACHE_DIR``, else CuPy's default)."""
    return Path(os.environ.get("CUPY_CACHE_DIR", "~/.cupy/kernel_cache")).expanduser()


def _lock_file(code: str, options: tuple[str, ...]) -> Path:
    text = "\0".join((code, *options))
    digest = hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
    return kernel_cache_dir() / f"graphgpu-{digest}.lock"


@cache
def _attributes(device_id: int) -> dict[str, int]:
    return dict(cupy().cuda.Device(device_id).attributes)


def device_attribute(name: str) -> int:
    """A CUDA device attribute of the current device (e.g. ``MaxSharedMemoryPerBlockOptin``)."""
    return int(_attributes(current_device())[name])


def sm_count() -> int:
    """Multiprocessors of the current device (grid sizes scale with it)."""
    return device_attribute("MultiProcessorCount")


def resident_blocks(kernel: Any, threads: int, cap: int) -> int:
    """Blocks of ``kernel`` (a CuPy ``RawKernel``, ``threads`` wide) that a multiprocessor holds
    at once, at most ``cap`` (its ``__launch_bounds__`` minimum): a persistent launch with a grid
    barrier deadlocks if a block waits for one that cannot start, so its grid is sized by this
    times :func:`sm_count`. Registers and threads are checked here; shared memory is the
    kernel's own few static bytes."""
    by_registers = device_attribute("MaxRegistersPerMultiprocessor") // max(
        1, kernel.num_regs * threads)
    by_threads = device_attribute("MaxThreadsPerMultiProcessor") // threads
    return max(1, min(cap, by_registers, by_threads))


def concurrently(*enqueues: Callable[[], None]) -> None:
    """Queue each of ``enqueues``' launches on a stream of its own (kept per device), all after
    the work queued so far on the current stream, which then waits for every one of them: what
    is queued after sees their results, and memory freed after is reused in order.

    For independent kernels that each leave the GPU part idle at their tails (e.g. one launch
    per class of rows). The enqueues must not allocate (their allocations would belong to the
    side stream's pool)."""
    cp = cupy()
    main = cp.cuda.get_current_stream()
    start = cp.cuda.Event(disable_timing=True)
    start.record(main)
    streams = _side_streams(current_device())
    while len(streams) < len(enqueues):
        streams.append(cp.cuda.Stream(non_blocking=True))
    for stream, enqueue in zip(streams, enqueues, strict=False):
        stream.wait_event(start)
        with stream:
            enqueue()
        done = cp.cuda.Event(disable_timing=True)
        done.record(stream)
        main.wait_event(done)


@cache
def _side_streams(device_id: int) -> list[Any]:
    del device_id  # the key: a stream belongs to one device
    return []


def grid_for(items: int, threads: int) -> tuple[int]:
    """A 1-D grid of enough ``threads``-wide blocks to cover ``items`` (at least one block)."""
    return (max(1, -(-int(items) // threads)),)


def lanes_per_row(avg_degree: float) -> int:
    """Lanes (a power of two, 1 to 32) that share one CSR row: the first covering ``avg_degree``.

    Frontier kernels give each vertex this many threads, so that short rows do not leave most of
    a warp idle and long rows are split between lanes.
    """
    group = 1
    while group < 32 and group < avg_degree:
        group *= 2
    return group


class Replays:
    """Launch sequences recorded as CUDA graphs and replayed by key (stream capture).

    A small graph's run is a single launch of a few microseconds of GPU work, and CuPy's launch
    of a kernel with twenty arguments took about as long from Python (27 us on the H100 host);
    replaying a recorded graph costs one ``cudaGraphLaunch``. A key (every argument value the
    launches take, pointers included) is launched directly the first time it is seen and
    recorded the second time, so that a sequence of one-off keys (e.g. iterated MIS's new salt
    per iteration) never pays for a capture.

    Parameters
    ----------
    capacity : int
        Graphs kept (least recently used dropped), and keys remembered as seen.
    """

    def __init__(self, capacity: int = 8) -> None:
        self.capacity = capacity
        self.graphs: OrderedDict[Hashable, Any] = OrderedDict()
        self.seen: OrderedDict[Hashable, None] = OrderedDict()
        self.stream: Any = None

    def launch(self, key: Hashable, enqueue: Callable[[], None]) -> None:
        """Queue ``enqueue``'s launches on the current stream: replayed when recorded under
        ``key``, else launched directly (first sight of ``key``) or recorded and replayed.
        Where a capture fails, every later launch is direct."""
        graph = self.graphs.get(key)
        if graph is None:
            if key not in self.seen or not self.capacity:
                self.seen[key] = None
                if len(self.seen) > self.capacity:
                    self.seen.popitem(last=False)
                enqueue()
                return
            try:
                graph = self._record(enqueue)
            except Exception:  # noqa: BLE001 - no capture here (e.g. HIP): launch as before
                logger.warning("stream capture failed; launching directly", exc_info=True)
                self.capacity = 0
                self.graphs.clear()
                enqueue()
                return
            self.graphs[key] = graph
            if len(self.graphs) > self.capacity:
                self.graphs.popitem(last=False)
        graph.launch()

    def _record(self, enqueue: Callable[[], None]) -> Any:
        cp = cupy()
        if self.stream is None:  # capture needs a stream of its own (not the legacy default)
            self.stream = cp.cuda.Stream(non_blocking=True)
        with self.stream:
            self.stream.begin_capture()
            try:
                enqueue()
            finally:
                graph = self.stream.end_capture()
        return graph
