"""GPU engine of ``critical_nodes``: drives the CuPy RawKernels of ``kernels/cuda/cnd.cu``.

Greedy starts run one per CUDA block, in waves of :func:`concurrent_starts` blocks; each block
keeps the best removed set of the starts it ran, and the host picks the best block at the end
(one small read-back per run, one progress report per wave).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import ProgressFn

CUDA_SOURCE = Path(__file__).with_name("critical_nodes.cu")
THREADS = 512
#: Resident blocks per multiprocessor for the greedy kernel (512 threads each).
BLOCKS_PER_SM = 2
#: Multiprocessors assumed where no GPU can be asked (estimates on the API host): an H100's.
DEFAULT_SMS = 132
KERNELS = ("cnd_multistart", "cnd_search_init", "cnd_search_run")
#: Device memory the multistart's per-block work arrays may take (fewer blocks on huge graphs).
MULTISTART_BYTES = 8 << 30
#: Swap-search chains (one warp each) per multiprocessor, and the pool they may take at most.
CHAINS_PER_SM = 16
POOL_BYTES = 4 << 30
#: Slot of the best objective in a chain's control words (CTL_BEST in cnd.cu), and of its moves.
CTL_ITER, CTL_BEST = 2, 4
SEARCH_THREADS = 128
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


def _block_bytes(n: int) -> int:
    """One multistart block's work arrays: state, comp, delta, work, dirty, best flags (per
    node), sizes and marks (per component id), and a mark array per warp."""
    return n * (1 + 4 + 8 + 4 + 4 + 1) + (n + 1) * (8 + 4) + (THREADS // 32) * (n + 1) * 4


def device_bytes(graph: Graph, starts: int, k: int, search: bool) -> int:
    """Device memory of a run: one block's work arrays per concurrent start, and the search
    chains' pool (as :func:`search` sizes it on an H100)."""
    per_block = _block_bytes(graph.n)
    blocks = max(1, min(starts, concurrent_starts(on_gpu=False), MULTISTART_BYTES // per_block))
    pool = 0
    if search:
        stride = chain_bytes(graph.n, k)
        pool = max(1, min(CHAINS_PER_SM * DEFAULT_SMS, POOL_BYTES // stride)) * stride
    return blocks * per_block + pool + graph.nbytes()


@dataclass
class Starts:
    """What a GPU multistart leaves: the best start, and every block's best set (on the device).

    Attributes
    ----------
    objective, start : int
        The best start's objective and index among the seeds.
    removed : ndarray of bool
        Its removed nodes.
    population : cupy.ndarray of uint8, shape (blocks * n,)
        Each block's best removed set, flags per node.
    blocks : int
    """

    objective: int
    start: int
    removed: np.ndarray
    population: Any
    blocks: int


def multistart(graph: Graph, k: int, seeds: range, progress: ProgressFn,
               share: float = 1.0) -> Starts:
    """CND* from every seed of ``seeds`` on the GPU (one block per start, in waves)."""
    cp = cupy()
    kernel = _kernels()["cnd_multistart"]
    dg = on_device(graph)
    n, total = graph.n, len(seeds)
    blocks = max(1, min(total, concurrent_starts(), MULTISTART_BYTES // _block_bytes(n)))
    state = cp.empty(blocks * n, dtype=cp.uint8)
    comp = cp.empty(blocks * n, dtype=cp.int32)
    sizes = cp.empty(blocks * (n + 1), dtype=cp.int64)
    mark = cp.empty(blocks * (n + 1), dtype=cp.int32)
    wmark = cp.empty(blocks * (THREADS // 32) * (n + 1), dtype=cp.int32)
    delta = cp.empty(blocks * n, dtype=cp.int64)
    work = cp.empty(blocks * n, dtype=cp.int32)
    dirty = cp.empty(blocks * n, dtype=cp.int32)
    best_removed = cp.zeros(blocks * n, dtype=cp.uint8)
    best_obj = cp.full(blocks, INT64_MAX, dtype=cp.int64)
    best_start = cp.full(blocks, INT32_MAX, dtype=cp.int32)
    for first in range(0, total, blocks):
        progress(share * first / total, f"critical_nodes: greedy starts {first}-"
                                        f"{min(first + blocks, total)} of {total} on the GPU")
        kernel((blocks,), (THREADS,), (
            dg.indptr, dg.indices, np.int32(n), np.int32(k), np.uint64(seeds.start),
            np.int32(first), np.int32(total), state, comp, sizes, mark, wmark, delta, work, dirty,
            best_removed, best_obj, best_start))
    objectives, starts = best_obj.get(), best_start.get()
    block = int(np.lexsort((starts, objectives))[0])
    removed = best_removed[block * n:(block + 1) * n].get().astype(bool)
    return Starts(int(objectives[block]), int(starts[block]), removed, best_removed, blocks)


def chain_bytes(n: int, k: int) -> int:
    """Bytes of one search chain's slice of the pool (the layout of ``chain_of`` in cnd.cu)."""
    ints = 9 * n + 4 * (n + 1) + 2 * k + 1
    raw = 8 * 8 + 16 * n + 4 * ints
    return -(-raw // 16) * 16


def _best_offset(n: int, k: int) -> int:
    """Byte offset of ``best`` in a chain's slice (after ctl, edge, cut_pairs, comp, csize,
    freel, dlist, dpos, tabu)."""
    return 8 * 8 + 16 * n + 4 * (n + (n + 1) + (n + 1) + (k + 1) + n + n)


def search(graph: Graph, k: int, starts: Starts, seed: int, patience: int, started: float,
           deadline: float, progress: ProgressFn
           ) -> tuple[np.ndarray, int, float, int, list[list[float]]]:
    """Swap-search chains, one warp each, from the blocks' best sets until ``deadline``.

    Returns
    -------
    removed, objective, time_to_best, iterations (all chains), timeline
    """
    cp = cupy()
    kernels = _kernels()
    dg = on_device(graph)
    n = graph.n
    stride = chain_bytes(n, k)
    chains = max(1, min(CHAINS_PER_SM * _sm_count(), POOL_BYTES // stride))
    pool = cp.empty(chains * stride, dtype=cp.uint8)
    grid = (-(-chains * 32 // SEARCH_THREADS),)
    args = (dg.indptr, dg.indices, np.int32(n), np.int32(k), np.int32(chains), pool,
            np.uint64(stride))
    kernels["cnd_search_init"](grid, (SEARCH_THREADS,), (
        *args, starts.population, np.int32(starts.blocks), np.uint64(seed)))
    ctl = pool.view(cp.int64).reshape(chains, stride // 8)
    best = int(ctl[:, CTL_BEST].min().get())
    timeline = [[round(time.perf_counter() - started, 6), float(best)]]
    found, batch = timeline[0][0], 4
    while time.perf_counter() < deadline and best > 0:
        tick = time.perf_counter()
        kernels["cnd_search_run"](grid, (SEARCH_THREADS,), (
            *args, np.int32(batch), np.int32(patience)))
        now_best = int(ctl[:, CTL_BEST].min().get())  # also waits for the launch
        now = time.perf_counter()
        if now_best < best:
            best, found = now_best, now - started
            timeline.append([round(found, 6), float(best)])
        # Launches of ~50 ms: progress and cancel checks stay prompt.
        batch = max(1, min(batch * 2, int(batch * 0.05 / max(now - tick, 1e-6))))
        progress(0.1 + 0.9 * min((now - started) / max(deadline - started, 1e-9), 1.0),
                 f"critical_nodes: GPU search best {best} ({chains} chains)")
    objectives = ctl[:, CTL_BEST].get()
    chain = int(np.argmin(objectives))
    offset = chain * stride + _best_offset(n, k)
    removed = pool[offset:offset + 4 * k].view(cp.int32).get().astype(np.int64)
    iterations = int(ctl[:, CTL_ITER].sum().get())
    return removed, int(objectives[chain]), found, iterations, timeline[:1000]
