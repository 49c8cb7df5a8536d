"""GPU backend of the ``mis`` family: an engine that drives the CUDA kernels of ``mis.cu``.

All state stays on the device: one 64-bit word per vertex (tag and residual degree), two
ping-pong pairs of work lists (light rows: a thread each; heavy rows: a warp each) and a control
array with four counters per round (light and heavy list sizes, vertices live at the round's
start, vertices that joined). A round is one launch (two when degrees are recounted); the first
round after :meth:`GpuEngine.start` visits all vertices by index, so nothing is listed up front.
The host reads the control array back once per batch of :attr:`GpuEngine.batch` rounds and stops
at the first round that leaves its successor's lists empty; rounds launched past the end of the
run find empty lists and do nothing. Graphs of at most :func:`round_vertices` vertices run a
completion phase's rounds in one persistent launch instead (``mis_rounds``, grid barriers between
rounds; it stops by itself), read back once: there a launch per round cost more than the round.
The run's start (counters zeroed, ``mis_init``'s pass) is folded into that launch, and the kernel
copies the counters the host reads into pinned host memory, so a run without reductions is one
launch and one stream sync; a launch seen before (the same run again on the same graph) is
replayed from a recorded CUDA graph (:class:`graphgpu.kernels.core.cuda.Replays`).
:func:`mis_gpu` is the entry point the registry holds.

CuPy is imported on first use (:func:`graphgpu.kernels.core.device.cupy`), so this module imports
on machines without it.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.mis import driver
from graphgpu.kernels.core.cuda import Replays, kernels, resident_blocks, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("mis.cu")
#: Rows longer than this are visited by a warp instead of a thread.
HEAVY_DEGREE = 32
THREADS = 256
#: Blocks per multiprocessor given to the heavy (warp per vertex) and light lists.
HEAVY_BLOCKS_PER_SM = 1
LIGHT_BLOCKS_PER_SM = 7
#: Counters per round in the control array: light size, heavy size, live, joined (or changed).
SLOTS = 4
#: ``mis_rounds`` (persistent rounds): blocks per multiprocessor at most (= ROUND_BLOCKS of
#: mis.cu), rounds per launch, the share of its grid given to the heavy list, and vertices per
#: resident thread up to which a graph runs this way.
ROUND_BLOCKS_PER_SM = 4
PERSISTENT_ROUNDS = 64
ROUND_HEAVY_SHARE = 4
ROUND_VERTICES_PER_THREAD = 4
#: Engines (device buffers) kept for the most recently used graphs that have an id.
CACHED_ENGINES = 2
_engines: OrderedDict[str, GpuEngine] = OrderedDict()


KERNELS = ("mis_init", "mis_degree", "mis_select", "mis_reduce", "mis_settle", "mis_verify",
           "mis_mark", "mis_rounds")


def round_grid(kernel: Any) -> int:
    """Blocks of a ``mis_rounds`` launch: all resident at once."""
    return resident_blocks(kernel, THREADS, ROUND_BLOCKS_PER_SM) * sm_count()


def round_vertices(kernel: Any) -> int:
    """Largest graph (vertices) whose completion rounds run in one persistent launch."""
    return round_grid(kernel) * THREADS * ROUND_VERTICES_PER_THREAD



def engine_for(graph: Graph) -> GpuEngine:
    """A :class:`GpuEngine` for ``graph``, its buffers reused across jobs on the same graph."""
    if not graph.graph_id:
        return GpuEngine(graph)
    engine = _engines.get(graph.graph_id)
    if engine is not None and engine.graph_args[1] is on_device(graph).indices:
        _engines.move_to_end(graph.graph_id)
        return engine
    engine = _engines[graph.graph_id] = GpuEngine(graph)
    while len(_engines) > CACHED_ENGINES:
        _engines.popitem(last=False)
    return engine


class GpuEngine:
    """The GPU side of :class:`graphgpu.kernels.algorithms.mis.driver.Engine` (the CPU's is
    :class:`graphgpu.kernels.algorithms.mis.cpu.CpuEngine`).

    Every run begins with :meth:`start`, which resets all state, so an engine can be reused.
    """

    #: Rounds launched between two read-backs of the control array; DUMIS mostly needs 3-5. Once
    #: fewer than 1% of a run's first live vertices are left, a batch is a single round.
    batch = 4

    def __init__(self, graph: Graph) -> None:
        cp = self.cp = cupy()
        self.fn = kernels(CUDA_SOURCE, KERNELS, (f"-DMIS_HEAVY={HEAVY_DEGREE}",))
        dg = on_device(graph)
        self.n = graph.n
        size = max(self.n, 1)
        self.word = cp.empty(size, dtype=cp.uint64)
        self.light = [cp.empty(size, dtype=cp.int32) for _ in range(2)]
        self.heavy = [cp.empty(size, dtype=cp.int32) for _ in range(2)]
        self.static_heavy = cp.empty(size, dtype=cp.int32)
        self.ctl = cp.zeros(SLOTS * 64, dtype=cp.int32)
        self.aux = cp.zeros(4, dtype=cp.int32)
        # The best set so far; one copy now, so that CuPy compiles its copy kernel here rather
        # than inside an iterated run's time limit.
        self.best = cp.empty_like(self.word)
        cp.copyto(self.best, self.word)
        #: Reduction rounds: per-parity marks of the vertices to examine, and expansion stamps.
        self.dirty: Any = None
        self.expanded: Any = None
        self.reductions_begun = False
        #: Live vertices at the start of the current phase's first round and of the last round
        #: read back (they size the batches).
        self.phase_live = self.last_live = 0
        #: The round whose live vertices are all vertices (no list): the first after start().
        self.all_round = -1
        sms = sm_count()
        self.heavy_blocks = sms * HEAVY_BLOCKS_PER_SM
        light_blocks = max(1, min(-(-self.n // THREADS), sms * LIGHT_BLOCKS_PER_SM))
        self.grid = (self.heavy_blocks + light_blocks,)
        self.vertex_blocks = (max(1, min(-(-self.n // THREADS), sms * 8)),)
        self.graph_args = (dg.indptr, dg.indices, np.int32(self.n), self.word)
        rounds_kernel = self.fn["mis_rounds"]
        #: Persistent rounds (small graphs): the grid (light part sized to the graph) and the
        #: grid barrier's word (zero between launches).
        self.persistent = self.n <= round_vertices(rounds_kernel)
        if self.persistent:
            self.batch = PERSISTENT_ROUNDS
            resident = round_grid(rounds_kernel)
            light = max(1, min(-(-self.n // THREADS),
                               resident * (ROUND_HEAVY_SHARE - 1) // ROUND_HEAVY_SHARE))
            self.round_heavy_blocks = max(1, min(resident - light,
                                                 -(-light // (ROUND_HEAVY_SHARE - 1))))
            self.round_grid = (self.round_heavy_blocks + light,)
            self.barrier = cp.zeros(1, dtype=cp.uint32)
            # Where mis_rounds leaves the counters of its rounds (a batch's, as run_rounds reads).
            self.pinned = cp.cuda.alloc_pinned_memory(4 * (SLOTS * self.batch + 2))
            self.counts = np.frombuffer(self.pinned, dtype=np.int32, count=SLOTS * self.batch + 2)
        #: Whether start() is still to be launched: the next mis_rounds launch takes it along.
        self.start_pending = False
        #: mis_rounds launches recorded as CUDA graphs, by their arguments.
        self.replays = Replays()

    # -- launching -------------------------------------------------------------------------------

    def _zero_ctl(self, first_round: int) -> None:
        offset = 4 * SLOTS * first_round
        (self.ctl.data + offset).memset_async(0, self.ctl.nbytes - offset)

    def _ensure(self, rounds: int) -> None:
        if SLOTS * (rounds + 2) > self.ctl.size:
            grown = self.cp.zeros(max(2 * self.ctl.size, SLOTS * (rounds + 2)), self.cp.int32)
            grown[:self.ctl.size] = self.ctl
            self.ctl = grown

    def _visit(self, kernel: str, r_in: int, r_out: int, *extra: Any) -> None:
        """Launch a list kernel on round ``r_in``'s vertices (``r_in`` 0: all, outside rounds)."""
        every = r_in in (0, self.all_round)
        light_in = self.light[r_in % 2]
        heavy_in = self.static_heavy if every else self.heavy[r_in % 2]
        self.fn[kernel](self.grid, (THREADS,), (
            *self.graph_args, light_in, heavy_in, self.light[r_out % 2], self.heavy[r_out % 2],
            self.ctl, self.aux, np.int32(r_in), np.int32(r_out), np.int32(every),
            np.int32(self.heavy_blocks), *extra))

    def _aux(self, kernel: str, *extra: Any) -> np.ndarray:
        """A pass over all vertices that counts into ``aux`` and lists nothing."""
        self.aux.data.memset_async(0, self.aux.nbytes)
        self._visit(kernel, 0, 1, *extra)
        return self.aux.get()

    # -- engine protocol -------------------------------------------------------------------------

    def start(self, r: int) -> None:
        self._ensure(r + self.batch)
        self.all_round = r
        self.reductions_begun = False
        self.start_pending = True
        if not self.persistent:
            self._launch_start()

    def _launch_start(self) -> None:
        """Launch start()'s work on its own, unless a mis_rounds launch took it along."""
        if not self.start_pending:
            return
        self.start_pending = False
        self._zero_ctl(0)
        self.fn["mis_init"](self.vertex_blocks, (THREADS,),
                            (self.graph_args[0], np.int32(self.n), self.word,
                             np.uint32(2 * self.all_round + 1), self.static_heavy, self.ctl[1:2]))

    def reduce_round(self, r: int) -> int:
        self._ensure(r + 1)
        self._launch_start()
        if not self.reductions_begun:  # the first round examines every vertex
            if self.dirty is None:
                self.dirty = self.cp.empty(2 * self.n, dtype=self.cp.int32)
                self.expanded = self.cp.empty(self.n, dtype=self.cp.int32)
            self.dirty.fill(r)  # stale marks of the other parity only cause extra checks
            self.expanded.data.memset_async(0, self.expanded.nbytes)
            self.reductions_begun = True
        self._visit("mis_degree", r, r + 1, self.dirty, np.int32(r))
        self._visit("mis_reduce", r, r + 1, np.uint32(2 * r + 1), np.int32(r), self.dirty,
                    self.expanded)
        return int(self.ctl[SLOTS * r + 3])

    def freeze(self) -> None:
        self._aux("mis_settle", np.int32(1))

    def mark(self, salt: int, drop: bool) -> int:
        self.aux.data.memset_async(0, self.aux.nbytes)
        self.fn["mis_mark"](self.vertex_blocks, (THREADS,),
                            (self.word, np.int32(self.n), np.uint32(salt), np.int32(drop),
                             self.aux))
        return int(self.aux[0])

    def release(self, r: int) -> None:
        self._ensure(r + self.batch)
        self._zero_ctl(r)
        self.all_round = -1
        self._visit("mis_settle", 0, r, np.int32(0))

    def run_rounds(self, r: int, r0: int, f: int, salt: int, use_degree: bool,
                   recount_first: bool) -> tuple[int, list[int], int, bool]:
        batch = self.batch
        if r == r0:
            self.phase_live = 0
        elif 100 * self.last_live < self.phase_live and not self.persistent:
            batch = 1
        self._ensure(r + batch)
        if self.persistent:  # the same passes in one launch (mis.cu's mis_rounds)
            start, ctl = self.start_pending, self.ctl
            # Replayed as a CUDA graph when the same launch comes again (the same run on the
            # same graph): CuPy's launch of these 23 arguments cost as much as the kernel.
            key = (r, batch, r0, f, salt, use_degree, recount_first, self.all_round, start,
                   ctl.data.ptr, ctl.size)
            self.replays.launch(key, lambda: self.fn["mis_rounds"](self.round_grid, (THREADS,), (
                *self.graph_args, *self.light, *self.heavy, self.static_heavy, ctl,
                self.barrier, np.int32(r), np.int32(batch), np.int32(r0), np.int32(f),
                np.uint32(salt), np.int32(use_degree), np.int32(recount_first),
                np.int32(self.all_round), np.int32(self.round_heavy_blocks), np.int32(start),
                np.int32(ctl.size), np.uint64(self.pinned.ptr))))
            self.start_pending = False
            self.cp.cuda.get_current_stream().synchronize()
            return self._read_counts(r, self.counts.tolist())
        self._launch_start()
        for rr in range(r, r + batch):
            k = rr - r0
            if use_degree and ((k == 0 and recount_first) or (k > 0 and f > 0 and k % f == 0)):
                self._visit("mis_degree", rr, rr + 1, self.aux, np.int32(-1))
            self._visit("mis_select", rr, rr + 1, np.uint32(2 * rr + 1), np.uint32(salt),
                        np.int32(use_degree))
        # Counters of the batch's rounds and the list sizes of the round after it.
        return self._read_counts(r, self.ctl[SLOTS * r:SLOTS * (r + batch) + 2].get().tolist())

    def _read_counts(self, r: int, counts: list[int]) -> tuple[int, list[int], int, bool]:
        """run_rounds' answer from the counters of a batch of rounds starting at ``r`` (SLOTS a
        round, then the list sizes of the round after the batch); plain Python on a list: on a
        small graph NumPy's calls on these few numbers cost more than the rounds."""
        batch = (len(counts) - 2) // SLOTS
        live = counts[2::SLOTS][:batch]
        wins = sum(counts[3::SLOTS])
        self.phase_live = self.phase_live or live[0]
        self.last_live = live[-1]
        for i in range(batch):
            if live[i] == 0:  # nothing was live: round r+i did not happen
                return r + i, live[:i], wins, True
            if counts[SLOTS * (i + 1)] + counts[SLOTS * (i + 1) + 1] == 0:
                return r + i + 1, live[:i + 1], wins, True  # none left after it
        return r + batch, live, wins, False

    def improve(self) -> int:
        return 0  # local search is CPU-only

    def save_best(self) -> None:
        self.cp.copyto(self.best, self.word)

    def restore_best(self) -> None:
        self.cp.copyto(self.word, self.best)

    def verify(self) -> tuple[int, int, int]:
        size, conflicts, undominated, _ = (int(x) for x in self._aux("mis_verify"))
        return size, conflicts, undominated

    def in_set(self) -> Any:
        return (self.word[:self.n] & 1).astype(self.cp.int8)  # left on the device


def mis_gpu(graph: Graph, params: driver.RunParams, progress: ProgressFn) -> AlgorithmResult:
    """Maximal independent set on the GPU; same contract as
    :func:`graphgpu.kernels.algorithms.mis.cpu.mis_cpu`, same set for ``luby`` and ``degree``."""
    return driver.solve(engine_for(graph), graph.n, params, progress)
