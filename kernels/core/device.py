"""GPU access for kernels: CuPy import, device description, and graphs kept resident on the device.

CuPy is imported on first use so that the package works on machines without it. A GPU worker keeps
its CUDA context, compiled kernels and recently used graphs warm across jobs.
"""

from __future__ import annotations

import platform
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from graphgpu.kernels.core.errors import BackendUnavailable
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.settings import get_settings


def cupy() -> Any:
    """The CuPy module; raises :class:`BackendUnavailable` when CuPy or a GPU is missing."""
    try:
        import cupy as cp
    except ImportError as exc:
        raise BackendUnavailable(
            f"the GPU backend needs CuPy, which is not installed ({exc})") from None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as exc:
        raise BackendUnavailable(f"no usable CUDA device: {exc}") from None
    if count == 0:
        raise BackendUnavailable("no CUDA device is visible")
    return cp


def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        cupy()
    except BackendUnavailable:
        return False
    return True


@cache
def device_name(backend: str) -> str:
    """Human-readable name of the device a backend runs on (GPU model or CPU)."""
    if backend == "gpu":
        cp = cupy()
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


@dataclass(frozen=True)
class DeviceGraph:
    """A graph's CSR arrays on the GPU (CuPy arrays, same dtypes as :class:`Graph`), and
    the id tables made for its results (:func:`original_ids`), kept as long as it is."""

    indptr: Any
    indices: Any
    weights: Any | None
    n: int
    m: int
    tables: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def nbytes(self) -> int:
        arrays = (self.indptr, self.indices, self.weights, *self.tables.values())
        return sum(int(a.nbytes) for a in arrays if a is not None)


_resident: OrderedDict[str, DeviceGraph] = OrderedDict()


def on_device(graph: Graph) -> DeviceGraph:
    """The graph's arrays on the current GPU, uploaded once and kept (LRU, ``gpu_cache_bytes``).

    Graphs without an id (built in memory) are uploaded every time and not cached.
    """
    if graph.graph_id and graph.graph_id in _resident:
        _resident.move_to_end(graph.graph_id)
        return _resident[graph.graph_id]
    device_graph = DeviceGraph(
        indptr=upload(graph.indptr),
        indices=upload(graph.indices),
        weights=None if graph.weights is None else upload(graph.weights),
        n=graph.n,
        m=graph.m,
    )
    if graph.graph_id:
        _resident[graph.graph_id] = device_graph
        budget = get_settings().gpu_cache_bytes
        while len(_resident) > 1 and sum(g.nbytes for g in _resident.values()) > budget:
            _resident.popitem(last=False)
    return device_graph


def is_resident(graph_id: str) -> bool:
    """Whether a graph is already on the device (reported in job timings)."""
    return graph_id in _resident


#: Host arrays go to the device in pieces of this size through two pinned buffers
#: (:func:`upload`)...
UPLOAD_PIECE = 32 << 20
#: ...from this size on; smaller ones through CuPy's own (pageable) copy. The first job on
#: dblp-2010 (6.4 MB of CSR, memory-mapped) loaded in 9.9 ms that way.
PINNED_UPLOAD_MIN = 1 << 20
#: Threads that copy a piece into a pinned buffer (a memory-mapped graph's pages are read by
#: the copy: page faults in parallel).
UPLOAD_THREADS = 8
_uploaders = ThreadPoolExecutor(UPLOAD_THREADS, thread_name_prefix="upload")
_upload_buffers: list[np.ndarray] = []


def upload(array: np.ndarray) -> Any:
    """``array`` on the current device, as ``cupy.asarray`` gives it.

    A large one (a stored graph's memory-mapped CSR) goes in pieces: threads copy a piece into
    one of two pinned buffers while the other's copy to the device runs. CuPy copies pageable
    memory on one thread, reading a mapped file's pages as it goes (rmat24's 2.2 GB CSR took
    1.3 s in the first job on it).
    """
    cp = cupy()
    array = np.ascontiguousarray(array)
    if array.nbytes < PINNED_UPLOAD_MIN:
        return cp.asarray(array)
    reserve_upload_buffers()
    out = cp.empty(array.shape, dtype=array.dtype)
    source = array.reshape(-1).view(np.uint8)
    stream = cp.cuda.get_current_stream()
    done: list[Any] = [None, None]
    for k, start in enumerate(range(0, source.nbytes, UPLOAD_PIECE)):
        piece = source[start:start + UPLOAD_PIECE]
        buffer = _upload_buffers[k % 2][:piece.nbytes]
        if done[k % 2] is not None:
            done[k % 2].synchronize()  # this buffer's last copy to the device has finished
        step = -(-piece.nbytes // UPLOAD_THREADS)
        parts = [(buffer[i:i + step], piece[i:i + step]) for i in range(0, piece.nbytes, step)]
        list(_uploaders.map(lambda part: np.copyto(*part), parts))
        cp.cuda.runtime.memcpyAsync(out.data.ptr + start, buffer.ctypes.data, piece.nbytes,
                                    cp.cuda.runtime.memcpyHostToDevice, stream.ptr)
        done[k % 2] = stream.record()
    stream.synchronize()
    return out


def reserve_upload_buffers() -> None:
    """Pin :func:`upload`'s two buffers now (worker warm-up) unless they are: pinning 64 MB
    takes milliseconds that a first job should not pay."""
    if not _upload_buffers:
        import cupyx

        _upload_buffers.extend(cupyx.empty_pinned(UPLOAD_PIECE, dtype=np.uint8)
                               for _ in range(2))


def original_ids(graph: Graph, dtype: np.dtype) -> Any:
    """``graph.node_ids`` followed by ``-1``, as ``dtype`` on the device, made once per
    resident graph: ``table[ids]`` turns internal ids into original ones on the device, and
    ``-1`` ("none") reads the last entry, ``-1``."""
    dg = on_device(graph)
    name = f"ids.{np.dtype(dtype).name}"
    if name not in dg.tables:
        cp = cupy()
        table = cp.empty(graph.n + 1, dtype=dtype)
        table[:-1] = upload(graph.node_ids)
        table[-1] = -1
        dg.tables[name] = table
    return dg.tables[name]


#: Alignment of each array in the staging buffer (a view of any dtype starts aligned).
STAGING_ALIGN = 256
#: The worker's page-locked staging buffer (at most one; see :func:`to_host`).
_staging: list[np.ndarray] = []


def _staging_buffer(nbytes: int) -> np.ndarray:
    """The pinned staging buffer, grown to the next power of two when smaller than ``nbytes``
    (the smaller one is released: page-locked memory is the host's, and pinning is slow, so
    it is done rarely and held once)."""
    if not _staging or _staging[0].nbytes < nbytes:
        import cupyx

        _staging.clear()
        cupy().get_default_pinned_memory_pool().free_all_blocks()
        _staging.append(cupyx.empty_pinned(1 << max(20, (nbytes - 1).bit_length()),
                                           dtype=np.uint8))
    return _staging[0]


def reserve_staging(nbytes: int) -> None:
    """Pin the staging buffer for results of up to ``nbytes`` now (worker warm-up), not in a
    job: pinning is slow (rmat24's first bfs result, 134 MB: about 50 ms)."""
    _staging_buffer(nbytes)


def to_host(arrays: dict[str, Any], staging: bool = False) -> dict[str, np.ndarray]:
    """``arrays`` on the host: NumPy arrays as they are, CuPy arrays copied.

    Parameters
    ----------
    arrays : dict of str to array
    staging : bool
        Copy into the process's page-locked staging buffer (one copy per array, all queued on
        the current stream and waited for once; pinned memory takes the device's full copy
        rate), which the caller must be done with before the next staging call: the worker,
        which writes the result from there. Otherwise new (pageable) arrays.

    Returns
    -------
    dict of str to ndarray
    """
    if all(isinstance(a, np.ndarray) for a in arrays.values()):
        return dict(arrays)
    cp = cupy()
    on_device = {name: cp.ascontiguousarray(a) for name, a in arrays.items()
                 if not isinstance(a, np.ndarray)}
    if not staging:
        return {name: a if isinstance(a, np.ndarray) else cp.asnumpy(on_device[name])
                for name, a in arrays.items()}
    offsets, total = {}, 0
    for name, array in on_device.items():
        offsets[name] = total
        total += -(-int(array.nbytes) // STAGING_ALIGN) * STAGING_ALIGN
    buffer = _staging_buffer(total)
    stream = cp.cuda.get_current_stream()
    out = dict(arrays)
    for name, array in on_device.items():
        start = offsets[name]
        host = buffer[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
        if array.nbytes:
            cp.cuda.runtime.memcpyAsync(host.ctypes.data, array.data.ptr, array.nbytes,
                                        cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        out[name] = host
    stream.synchronize()
    return out
