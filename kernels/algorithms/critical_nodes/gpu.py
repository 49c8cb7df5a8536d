"""GPU engine of ``critical_nodes``: drives the RawKernels of ``multistart.cu`` and ``search.cu``.

Greedy starts run one per CUDA block, in waves of :func:`concurrent_starts` blocks; each block
keeps the best removed set of the starts it ran, and the host picks the best block at the end
(one small read-back per run, one progress report per wave). Swap-search chains run one per
warp; the memetic search improves each generation's children all at once, one chain each
(:class:`GpuImprover`). CuPy is imported lazily (through
:func:`graphgpu.kernels.core.device.cupy`), so this module imports without it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.critical_nodes.cost import cnd_seconds, gpu_wave_seconds
from graphgpu.kernels.algorithms.critical_nodes.driver import solve
from graphgpu.kernels.algorithms.critical_nodes.gpu_ruin import (
    GpuDescent,
    descent_bytes,
    descent_chains,
    on_gpu_chains,
)
from graphgpu.kernels.algorithms.critical_nodes.greedy import cnd_star
from graphgpu.kernels.algorithms.critical_nodes.memetic import population_starts
from graphgpu.kernels.algorithms.critical_nodes.params import CndParams
from graphgpu.kernels.algorithms.critical_nodes.ruin import FirstDescent
from graphgpu.kernels.algorithms.critical_nodes.tuning import (
    BLOCK_MAX,
    BLOCK_NODES,
    MAX_LISTED,
    RANDOM_MOVE,
    START_SHARE,
    patience_for,
)
from graphgpu.kernels.core import cuda
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Exchange, ProgressFn

#: The greedy multistart and the swap search (shared device code in critical_nodes.cuh).
MULTISTART_SOURCE = Path(__file__).with_name("multistart.cu")
SEARCH_SOURCE = Path(__file__).with_name("search.cu")
THREADS = 512
#: Resident blocks per multiprocessor for the greedy kernel (512 threads each).
BLOCKS_PER_SM = 2
#: Multiprocessors assumed where no GPU can be asked (estimates on the API host): an H100's.
DEFAULT_SMS = 132
SEARCH_KERNELS = ("cnd_search_init", "cnd_search_run")
#: Device memory the multistart's per-block work arrays may take (fewer blocks on huge graphs).
MULTISTART_BYTES = 8 << 30
#: Swap-search chains (one warp each) per multiprocessor, and the pool they may take at most.
CHAINS_PER_SM = 16
POOL_BYTES = 4 << 30
#: Slots of a chain's moves and best objective in its control words (CTL_ITER, CTL_BEST in
#: search.cu).
CTL_ITER, CTL_BEST = 2, 4
SEARCH_THREADS = 128
INT64_MAX = np.iinfo(np.int64).max
INT32_MAX = np.iinfo(np.int32).max


def concurrent_starts(on_gpu: bool = True) -> int:
    """Greedy starts one wave runs: resident blocks of the GPU (or of an H100 when estimating)."""
    return BLOCKS_PER_SM * (cuda.sm_count() if on_gpu else DEFAULT_SMS)


def _block_bytes(n: int) -> int:
    """One multistart block's work arrays: state, comp, alpha, beta, work, dirty, best flags
    (per node), sizes and marks (per component id), and a mark array per warp."""
    return n * (1 + 4 + 8 + 8 + 4 + 4 + 1) + (n + 1) * (8 + 4) + (THREADS // 32) * (n + 1) * 4


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
    objectives : ndarray of int64
        Each block's best objective.
    run : int
        Starts run.
    """

    objective: int
    start: int
    removed: np.ndarray
    population: Any
    blocks: int
    objectives: np.ndarray
    run: int


def multistart(graph: Graph, k: int, seeds: range, progress: ProgressFn,
               share: float = 1.0, until: float | None = None) -> Starts:
    """CND* from every seed of ``seeds`` on the GPU (one block per start, in waves; no wave but
    the first begins after ``until``)."""
    cp = cupy()
    kernel = cuda.kernels(MULTISTART_SOURCE, ("cnd_multistart",))["cnd_multistart"]
    dg = on_device(graph)
    n, total = graph.n, len(seeds)
    blocks = max(1, min(total, concurrent_starts(), MULTISTART_BYTES // _block_bytes(n)))
    state = cp.empty(blocks * n, dtype=cp.uint8)
    comp = cp.empty(blocks * n, dtype=cp.int32)
    sizes = cp.empty(blocks * (n + 1), dtype=cp.int64)
    mark = cp.empty(blocks * (n + 1), dtype=cp.int32)
    wmark = cp.empty(blocks * (THREADS // 32) * (n + 1), dtype=cp.int32)
    alpha = cp.empty(blocks * n, dtype=cp.int64)
    beta = cp.empty(blocks * n, dtype=cp.int64)
    work = cp.empty(blocks * n, dtype=cp.int32)
    dirty = cp.empty(blocks * n, dtype=cp.int32)
    best_removed = cp.zeros(blocks * n, dtype=cp.uint8)
    best_obj = cp.full(blocks, INT64_MAX, dtype=cp.int64)
    best_start = cp.full(blocks, INT32_MAX, dtype=cp.int32)
    run = 0
    for first in range(0, total, blocks):
        if first > 0 and until is not None and time.perf_counter() >= until:
            break
        run = min(first + blocks, total)
        progress(share * first / total, f"critical_nodes: greedy starts {first}-"
                                        f"{min(first + blocks, total)} of {total} on the GPU")
        kernel((blocks,), (THREADS,), (
            dg.indptr, dg.indices, np.int32(n), np.int32(k), np.uint64(seeds.start),
            np.int32(first), np.int32(total), state, comp, sizes, mark, wmark, alpha, beta, work,
            dirty, best_removed, best_obj, best_start))
        cp.cuda.get_current_stream().synchronize()  # the clock above sees the wave's end
    objectives, starts = best_obj.get(), best_start.get()
    block = int(np.lexsort((starts, objectives))[0])
    removed = best_removed[block * n:(block + 1) * n].get().astype(bool)
    return Starts(int(objectives[block]), int(starts[block]), removed, best_removed, blocks,
                  objectives, run)


def gpu_starts_seconds(graph: Graph, k: int, starts: int, on_gpu: bool = True) -> float:
    """Estimated seconds of ``starts`` GPU CND* starts (waves of :func:`concurrent_starts`)."""
    wave = concurrent_starts(on_gpu)
    return -(-starts // wave) * gpu_wave_seconds(graph, k, min(starts, wave) / wave)


def on_host(graph: Graph, k: int, starts: int, on_gpu: bool = True) -> bool:
    """True where the host's near-linear CND*, one start after another, is estimated to end
    before the GPU's waves: the GPU start's ~n dependent steps each pass over the nodes, and an
    exact start cannot run its steps side by side (bench/results/cnd.md, 2026-11-26: 82 s
    against 1.4 s on dblp-2010), so a lone start or a few starts on a large graph go to the
    host, with the same sets."""
    return starts * cnd_seconds(graph, k) < gpu_starts_seconds(graph, k, starts, on_gpu)


def host_starts(graph: Graph, k: int, seeds: range, progress: ProgressFn, share: float = 1.0,
                until: float | None = None) -> Starts:
    """The CND* starts of ``seeds`` on the host, one after another (none but the first begins
    after ``until``); the best (smallest objective, then first seed) as a one-block population,
    as :func:`multistart` picks it."""
    best: Starts | None = None
    run = 0
    for i, seed in enumerate(seeds):
        if i > 0 and until is not None and time.perf_counter() >= until:
            break
        progress(share * i / len(seeds), f"critical_nodes: greedy start {i + 1} of "
                                          f"{len(seeds)} on the host")
        found = host_start(graph, k, seed)
        run = i + 1
        if best is None or found.objective < best.objective:
            found.start = i
            best = found
    assert best is not None  # seeds is never empty
    best.run = run
    return best


def host_start(graph: Graph, k: int, seed: int) -> Starts:
    """The CND* start of ``seed`` on the host (near-linear, the same set as a GPU start), as a
    one-block population: where a GPU wave would take more than the run's share of its time
    limit (a GPU start passes over the nodes at each of its steps)."""
    comp = np.zeros(graph.n, np.int64)
    sizes = np.zeros(graph.n + 1, np.int64)
    objective = int(cnd_star(graph.indptr, graph.indices, k, np.uint64(seed), comp, sizes))
    removed = comp == 0
    return Starts(objective, 0, removed, cupy().asarray(removed.astype(np.uint8)), 1,
                  np.array([objective], np.int64), 1)


def chain_bytes(n: int, k: int) -> int:
    """Bytes of one search chain's slice of the pool (the layout of ``chain_of`` in chain.cuh;
    its deleted list has room for a block of ``BLOCK_MAX`` deletions)."""
    ints = 9 * n + 4 * (n + 1) + 2 * k + BLOCK_MAX
    raw = 8 * 8 + 16 * n + 4 * ints
    return -(-raw // 16) * 16


def _best_offset(n: int, k: int) -> int:
    """Byte offset of ``best`` in a chain's slice (after ctl, edge, cut_pairs, comp, csize,
    freel, dlist, dpos, tabu)."""
    return 8 * 8 + 16 * n + 4 * (n + (n + 1) + (n + 1) + (k + BLOCK_MAX) + n + n)


def search(graph: Graph, k: int, starts: Starts | None, removed: np.ndarray, objective: int,
           seed: int, patience: int, started: float, deadline: float, progress: ProgressFn
           ) -> tuple[np.ndarray, int, float, int, list[list[float]]]:
    """Swap-search chains, one warp each, from the blocks' best sets (None: from ``removed``, of
    ``objective``) until ``deadline``.

    Returns
    -------
    removed, objective, time_to_best, iterations (all chains), timeline
    """
    cp = cupy()
    kernels = cuda.kernels(SEARCH_SOURCE, SEARCH_KERNELS)
    dg = on_device(graph)
    n = graph.n
    if starts is None:  # no greedy start fitted: the driver's set (the highest degrees)
        flags = np.zeros(n, np.uint8)
        flags[removed] = 1
        starts = Starts(objective, 0, flags.astype(bool), cp.asarray(flags), 1,
                        np.array([objective], np.int64), 0)
    stride = chain_bytes(n, k)
    chains = max(1, min(CHAINS_PER_SM * cuda.sm_count(), POOL_BYTES // stride))
    pool = cp.empty(chains * stride, dtype=cp.uint8)
    grid = (-(-chains * 32 // SEARCH_THREADS),)
    args = (dg.indptr, dg.indices, np.int32(n), np.int32(k), np.int32(chains), pool,
            np.uint64(stride), np.int32(BLOCK_MAX))
    kernels["cnd_search_init"](grid, (SEARCH_THREADS,), (
        *args, starts.population, np.int32(starts.blocks), np.uint64(seed)))
    ctl = pool.view(cp.int64).reshape(chains, stride // 8)
    best = int(ctl[:, CTL_BEST].min().get())
    timeline = [[round(time.perf_counter() - started, 6), float(best)]]
    found, batch = timeline[0][0], 1  # one move may take long on a large graph
    while time.perf_counter() < deadline and best > 0:
        tick = time.perf_counter()
        kernels["cnd_search_run"](grid, (SEARCH_THREADS,), (
            *args, np.int32(batch), np.int32(patience), np.int32(0), np.int32(BLOCK_NODES)))
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
    return removed, int(objectives[chain]), found, iterations, timeline[:MAX_LISTED]


#: Children a memetic generation improves on the GPU at once, at most.
MEMETIC_BATCH = 128


def memetic_chains(n: int, k: int, sms: int = DEFAULT_SMS) -> int:
    """Swap-search chains (one warp each) the memetic improvement runs at once: as many as the
    multiprocessors hold (``CHAINS_PER_SM`` each) and the pool allows."""
    return max(1, min(CHAINS_PER_SM * sms, POOL_BYTES // chain_bytes(n, k)))


def memetic_device_bytes(graph: Graph, k: int) -> int:
    """Device memory of a memetic run on an H100: the swap chains' pool, the first descent's
    chains (where it runs on the GPU), the graph."""
    n = graph.n
    descent = (descent_chains(n, k, DEFAULT_SMS, on_gpu=False) * descent_bytes(n, k, on_gpu=False)
               if on_gpu_chains(graph, k, on_gpu=False) else 0)
    return memetic_chains(n, k) * chain_bytes(n, k) + descent + graph.nbytes()


class GpuImprover:
    """The memetic search's improvement step on the GPU: a batch of k-sets, each improved by
    ``replicas`` chains at once (their own random streams; the best of them is the child's
    outcome). A chain is latency bound (one warp walks the component, a node at a time), so
    the GPU's many resident warps go to more tries per child rather than to waiting."""

    def __init__(self, graph: Graph, k: int, seed: int) -> None:
        n = graph.n
        self.graph, self.k, self.seed, self.calls = graph, k, seed, 0
        self.stride = chain_bytes(n, k)
        chains = memetic_chains(n, k, cuda.sm_count())
        self.batch = min(MEMETIC_BATCH, chains)
        self.replicas = max(1, chains // self.batch)
        self.pool = cupy().empty(self.batch * self.replicas * self.stride, dtype=cupy().uint8)
        self.patience = patience_for(k)
        self.moves = 0  # made so far, all chains (the summary's iterations)
        self.tick: Callable[[], Any] = lambda: None  # called between launches (cancel checks)
        #: Called with each better set of the descent as it comes (the memetic driver's offer).
        self.report: Callable[[int, np.ndarray], Any] | None = None
        self.descent = (GpuDescent(graph, k, seed) if on_gpu_chains(graph, k)
                        else FirstDescent(graph, k, seed))

    def descend(self, nodes: np.ndarray, deadline: float) -> np.ndarray:
        """``nodes`` after the first descent: chains of ruin-and-regrow rounds, a block each
        (:class:`.gpu_ruin.GpuDescent`), where a chain's round is short (state in shared memory,
        or in global memory up to ~25M nodes and arcs), else the host's rounds
        (:class:`.ruin.FirstDescent`; the summary's ``descent_on`` says which).
        A swap chain is one warp walking a component, ~100 ms a move on ca-CondMat's giant
        (+846% above best-known at 5 s without the descent). The swap chains then improve its
        sets."""
        return self.descent(nodes, deadline, self.tick, self.report)

    def __call__(self, sets: list[np.ndarray], moves: int, deadline: float
                 ) -> list[tuple[int, np.ndarray]]:
        cp = cupy()
        kernels = cuda.kernels(SEARCH_SOURCE, SEARCH_KERNELS)
        dg = on_device(self.graph)
        n, k, replicas = self.graph.n, self.k, self.replicas
        chains = len(sets) * replicas
        flags = np.zeros((len(sets), n), np.uint8)
        for i, nodes in enumerate(sets):
            flags[i, nodes] = 1
        flags = np.repeat(flags, replicas, axis=0)  # chain c improves set c // replicas
        grid = cuda.grid_for(chains * 32, SEARCH_THREADS)
        args = (dg.indptr, dg.indices, np.int32(n), np.int32(k), np.int32(chains), self.pool,
                np.uint64(self.stride), np.int32(BLOCK_MAX))
        self.calls += 1  # each batch its own random streams, fixed by the seed
        kernels["cnd_search_init"](grid, (SEARCH_THREADS,), (
            *args, cp.asarray(flags.ravel()), np.int32(chains),
            np.uint64(self.seed * 1_000_003 + self.calls)))
        # A fixed number of moves per chain (restarts from its best after ``patience`` idle
        # moves), so that a batch's outcome depends on the seed only: the driver's, as the
        # CPU's chains take. Capped at 3 patiences, WS250 ended 30 s at +21.4% above
        # best-known; at these 20, +5.9% (bench/results/cnd.md, round 11).
        done, batch = 0, 1  # grows to ~20 ms launches
        while done < moves and time.perf_counter() < deadline:
            self.tick()
            tick = time.perf_counter()
            step = min(batch, moves - done)
            kernels["cnd_search_run"](grid, (SEARCH_THREADS,), (
                *args, np.int32(step), np.int32(self.patience), np.int32(RANDOM_MOVE),
                np.int32(BLOCK_NODES)))
            cp.cuda.get_current_stream().synchronize()
            done += step
            # Launches of ~20 ms: the deadline and cancel checks stay prompt.
            spent = max(time.perf_counter() - tick, 1e-6)
            batch = max(1, min(batch * 2, int(batch * 0.02 / spent)))
        self.moves += done * chains
        rows = self.pool[:chains * self.stride].reshape(chains, self.stride)
        objectives = rows[:, :64].copy().view(cp.int64)[:, CTL_BEST].get()
        offset = _best_offset(n, k)
        best = rows[:, offset:offset + 4 * k].copy().view(cp.int32).get().astype(np.int64)
        # Each set's best chain (the first of equals, so the seed fixes the choice).
        winners = [i * replicas + int(np.argmin(objectives[i * replicas:(i + 1) * replicas]))
                   for i in range(len(sets))]
        return [(int(objectives[c]), best[c]) for c in winners]


def cnd_starts(graph: Graph, k: int, seed: int, limit: float, count: int
               ) -> tuple[list[np.ndarray], str | None]:
    """The block-best CND* sets of one GPU wave of up to ``count`` starts (seeds ``seed, ...``),
    best first, for a memetic population, and where they ran. Where the wave's estimated cost
    passes ``START_SHARE`` of the time ``limit`` (a GPU start's steps each pass over the
    nodes), the host's near-linear CND* starts, as many as the CPU backend's memetic takes
    (:func:`~graphgpu.kernels.algorithms.critical_nodes.memetic.population_starts`: on ca-CondMat
    the best of 8 seeds leaves 39.5M pairs where seed 0's leaves 62M)."""
    if gpu_wave_seconds(graph, k) > START_SHARE * limit:
        return population_starts(graph, k, seed, limit)
    starts = multistart(graph, k, range(seed, seed + min(count, concurrent_starts())),
                        lambda fraction, message="": None)
    flags = starts.population.get().reshape(starts.blocks, graph.n)
    order = np.argsort(starts.objectives, kind="stable")
    return [np.flatnonzero(flags[b]).astype(np.int32) for b in order
            if starts.objectives[b] < INT64_MAX], "gpu"


def critical_nodes_gpu(graph: Graph, params: CndParams, progress: ProgressFn,
                       exchange: Exchange | None = None) -> AlgorithmResult:
    """Critical nodes on the GPU (CuPy); greedy and multistart return the CPU's sets exactly.

    Parameters, result and errors as
    :func:`graphgpu.kernels.algorithms.critical_nodes.cpu.critical_nodes_cpu`, but for when
    ``progress`` is called: between waves of starts, launches of swap moves and new memetic
    bests (it may raise to cancel).
    """
    def starts(seeds: range, share: float, until: float | None
               ) -> tuple[int, int, np.ndarray, Starts, int, str]:
        where = "cpu"
        if until is not None and gpu_wave_seconds(graph, params.k) > START_SHARE * (
                params.time_limit_s):  # search on a large graph: the host's start
            found = host_start(graph, params.k, seeds.start)
        elif until is None and on_host(graph, params.k, len(seeds)):
            found = host_starts(graph, params.k, seeds, progress, share)
        else:
            found, where = multistart(graph, params.k, seeds, progress, share, until), "gpu"
        return (found.objective, found.start, np.flatnonzero(found.removed), found, found.run,
                where)

    return solve(graph, params, progress, "gpu", exchange=exchange,
                 improver=lambda: GpuImprover(graph, params.k, params.seed),
                 batch_of=lambda improve: improve.batch,
                 memetic_starts=lambda batch: cnd_starts(graph, params.k, params.seed,
                                                         params.time_limit_s, batch - 1),
                 starts=starts,
                 search=lambda state, removed, objective, started, deadline, patience, told:
                 search(graph, params.k, state, removed, objective, params.seed, patience,
                        started, deadline, told))
