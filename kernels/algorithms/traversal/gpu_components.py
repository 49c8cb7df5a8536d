"""Connected components on the GPU: one persistent launch of ``components.cu``'s ``cc_run``.

ECL-CC's union-find (init, hooking by degree tier, flatten) with Afforest's giant-tree sampling,
then the numbering by smallest member and the component sizes, all in one launch whose phases
are separated by grid barriers: a small graph's run was launch bound (nine launches, 0.13 ms on
a 5k-node graph against ECL-CC's 0.07 ms). The only host sync is the component count read by
:meth:`DeviceComponents.result`, which the kernel writes straight into pinned host memory. A
graph with an id keeps its run's buffers (:func:`components_device`), so a run on it allocates
nothing: one launch (from the second run on, the replay of a recorded CUDA graph) and one stream
sync.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.core.cuda import Replays, kernels, resident_blocks, sm_count
from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.graph import Graph

__all__ = ["CC_SOURCE", "DeviceComponents", "components_device"]

CC_SOURCE = Path(__file__).with_name("components.cu")
#: Threads per block of ``cc_run`` (= CC_THREADS of components.cu) and the blocks per
#: multiprocessor its ``__launch_bounds__`` makes room for (= CC_MIN_BLOCKS): the grid never
#: holds more, so that every block is resident at once for the grid barriers.
CC_THREADS = 512
CC_BLOCKS_PER_SM = 3
#: Vertices per numbering tile: roots are ranked within a tile, then one block scans the tiles.
CC_TILE = 512
#: ``cc_run``'s control words (components.cu's CTL_*): the component count is CTL_COUNT.
CTL_COUNT = 8
CTL_WORDS = 9
#: Runs (device buffers) kept for the most recently used graphs that have an id.
CACHED_RUNS = 2
_runs: OrderedDict[str, DeviceComponents] = OrderedDict()


class DeviceComponents:
    """One connected-components run on the GPU (``cc_run``), whole or phase by phase.

    Phases (:attr:`PHASES`, in order; components.cu says what each does):

    * ``init``: every vertex points at its first smaller neighbour; rows are sorted into tiers;
    * ``link``: a second link per vertex (lanes of a warp that would join the same two roots
      leave it to one of them);
    * ``hook``: Afforest's sample of the giant tree, then the rest of the rows by tier (a thread,
      a warp or a block each), skipping what the giant tree already holds;
    * ``flatten``: every vertex points at its root, the smallest member of its component; roots
      are ranked within tiles and component sizes counted;
    * ``label``: the CPU's numbering (by smallest member) and the sizes per label.

    The first three with flatten are what ECL-CC's published times cover. :meth:`run` launches
    them all at once; :meth:`phase` launches one (the bench times them one by one), and none
    waits for the host; :meth:`result` reads the component count back. A run that reaches
    ``label`` leaves the control words as it found them (zero), so :meth:`run` may be called
    again on the same object; the arrays of a run are overwritten by the next.

    Parameters
    ----------
    dg : DeviceGraph
        The graph (or a pruned core) on the device.
    threads, blocks_per_sm : int
        Block width and resident blocks per multiprocessor: components.cu's CC_THREADS and
        CC_MIN_BLOCKS, passed to it as ``-D`` options when they differ from the defaults.
    options : tuple of str
        Further ``-D`` options of components.cu (bench/cc_variants.py compares settings).
    """

    PHASES = ("init", "link", "hook", "flatten", "label")

    def __init__(self, dg: DeviceGraph, threads: int = CC_THREADS,
                 blocks_per_sm: int = CC_BLOCKS_PER_SM, options: tuple[str, ...] = ()) -> None:
        cp = cupy()
        n = dg.n
        self.dg = dg
        self.tiles = max(1, -(-n // CC_TILE))
        # nstat | worklist, then root ranks | second links, then counts, then labels | tile
        # counts, then offsets | control words (components.cu's cc_run).
        self.scratch = cp.empty(3 * n + self.tiles + CTL_WORDS, dtype=cp.int32)
        self.nstat = self.scratch[:n]
        self.label = self.scratch[2 * n:3 * n]
        self.ctl = self.scratch[3 * n + self.tiles:]
        self.ctl.data.memset_async(0, self.ctl.nbytes)
        self.component_size = cp.empty(max(n, 1), dtype=cp.int64)
        # The component count, written there by the kernel (no copy of its own to wait for).
        self.pinned = cp.cuda.alloc_pinned_memory(4)
        self.count = np.frombuffer(self.pinned, dtype=np.uint32, count=1)
        self.count[0] = 0
        if (threads, blocks_per_sm) != (CC_THREADS, CC_BLOCKS_PER_SM):
            options = (f"-DCC_THREADS={threads}", f"-DCC_MIN_BLOCKS={blocks_per_sm}", *options)
        self.options = options
        self.threads = threads
        self.kernel = kernels(CC_SOURCE, ("cc_run",), options)["cc_run"]
        # Blocks that fit on a multiprocessor at once: the grid barriers need them all resident.
        per_sm = resident_blocks(self.kernel, threads, blocks_per_sm)
        self.grid = (max(1, min(per_sm * sm_count(), -(-n // threads))),)
        self.replays = Replays()
        self.sizes, self.sizes_count = self.component_size[:0], 0

    def launch(self, first: int, last: int) -> None:
        """Queue phases ``first`` to ``last`` (indices into :attr:`PHASES`) as one launch,
        replayed as a CUDA graph from its second time on (CuPy's launch of the arguments took
        longer than a small graph's whole run)."""
        dg = self.dg
        self.replays.launch((first, last), lambda: self.kernel(self.grid, (self.threads,), (
            dg.indptr, dg.indices, np.int32(dg.n), np.int64(dg.indices.shape[0]),
            np.int32(CC_TILE), np.int32(self.tiles), self.scratch, self.component_size,
            np.int32(first), np.int32(last), np.uint64(self.pinned.ptr))))

    def phase(self, name: str) -> None:
        """Queue one phase (phases must be queued in :attr:`PHASES` order)."""
        index = self.PHASES.index(name)
        self.launch(index, index)

    def result(self) -> tuple[Any, Any]:
        """Device ``(label, sizes)``: int32 per node, int64 per component (waits for the count,
        which the label phase writes)."""
        cupy().cuda.get_current_stream().synchronize()
        count = int(self.count[0])
        if count != self.sizes_count:  # a view made once per count: CuPy's slicing is slow
            self.sizes, self.sizes_count = self.component_size[:count], count
        return self.label, self.sizes

    def run(self) -> tuple[Any, Any]:
        """All phases in one launch, then :meth:`result`."""
        self.launch(0, len(self.PHASES) - 1)
        return self.result()


def components_device(graph: Graph) -> tuple[Any, Any]:
    """Connected components of a graph on the GPU; see :class:`DeviceComponents`.

    A graph with an id reuses the buffers of its last run (the :data:`CACHED_RUNS` most recent
    graphs keep theirs): the arrays returned are valid until the next call on the same graph.
    """
    dg = on_device(graph)
    if not graph.graph_id:
        return DeviceComponents(dg).run()
    run = _runs.get(graph.graph_id)
    if run is None or run.dg is not dg:
        run = _runs[graph.graph_id] = DeviceComponents(dg)
        while len(_runs) > CACHED_RUNS:
            _runs.popitem(last=False)
    else:
        _runs.move_to_end(graph.graph_id)
    return run.run()
