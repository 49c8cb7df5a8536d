"""GPU engine of ``critical_nodes``: drives the CuPy RawKernels of ``kernels/cuda/cnd.cu``.

Greedy starts run one per CUDA block, in waves of :func:`concurrent_starts` blocks; each block
keeps the best removed set of the starts it ran, and the host picks the best block at the end
(one small read-back per run, one progress report per wave).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from kernels.device import cupy, on_device
from kernels.graph import Graph
from kernels.registry import ProgressFn

CUDA_SOURCE = Path(__file__).with_name("cuda") / "cnd.cu"
THREADS = 512
#: Resident blocks per multiprocessor for the greedy kernel (512 threads each).
BLOCKS_PER_SM = 2
#: Multiprocessors assumed where no GPU can be asked (estimates on the API host): an H100's.
DEFAULT_SMS = 132
KERNELS = ("cnd_multistart",)
INT64_MAX = np.iinfo(np.int64).max
INT32_MAX = np.iinfo(np.int32).max


@cache
def _kernels() -> dict[str, Any]:
    """The compiled kernels (NVRTC, current device's arch), built once per process."""
    module = cupy().RawModule(code=CUDA_SOURCE.read_text(), options=("-std=c++17",))
    return {name: module.get_function(name) for name in KERNELS}


@cache
def _sm_count() -> int:
    cp = cupy()
    return int(cp.cuda.Device().attributes["MultiProcessorCount"])


def concurrent_starts(on_gpu: bool = True) -> int:
    """Greedy starts one wave runs: resident blocks of the GPU (or of an H100 when estimating)."""
    return BLOCKS_PER_SM * (_sm_count() if on_gpu else DEFAULT_SMS)


def device_bytes(graph: Graph, starts: int) -> int:
    """Device memory of a multistart run: one block's work arrays per concurrent start."""
    blocks = min(starts, concurrent_starts(on_gpu=False))
    per_block = graph.n * (1 + 4 + 1) + (graph.n + 1) * (8 + 4)
    return blocks * per_block + graph.nbytes()


def multistart(graph: Graph, k: int, seeds: range, progress: ProgressFn,
               share: float = 1.0) -> tuple[int, int, np.ndarray]:
    """CND* from every seed of ``seeds`` on the GPU.

    Returns
    -------
    objective : int
        The best start's.
    start : int
        Its index in ``seeds`` (the first of equal objectives).
    removed : ndarray of bool
        Its removed nodes.
    """
    cp = cupy()
    kernel = _kernels()["cnd_multistart"]
    dg = on_device(graph)
    n, total = graph.n, len(seeds)
    blocks = min(total, concurrent_starts())
    state = cp.empty(blocks * n, dtype=cp.uint8)
    comp = cp.empty(blocks * n, dtype=cp.int32)
    sizes = cp.empty(blocks * (n + 1), dtype=cp.int64)
    mark = cp.empty(blocks * (n + 1), dtype=cp.int32)
    best_removed = cp.zeros(blocks * n, dtype=cp.uint8)
    best_obj = cp.full(blocks, INT64_MAX, dtype=cp.int64)
    best_start = cp.full(blocks, INT32_MAX, dtype=cp.int32)
    for first in range(0, total, blocks):
        progress(share * first / total, f"critical_nodes: greedy starts {first}-"
                                        f"{min(first + blocks, total)} of {total} on the GPU")
        kernel((blocks,), (THREADS,), (
            dg.indptr, dg.indices, np.int32(n), np.int32(k), np.uint64(seeds.start),
            np.int32(first), np.int32(total), state, comp, sizes, mark, best_removed, best_obj,
            best_start))
    objectives, starts = best_obj.get(), best_start.get()
    block = int(np.lexsort((starts, objectives))[0])
    removed = best_removed[block * n:(block + 1) * n].get().astype(bool)
    return int(objectives[block]), int(starts[block]), removed
