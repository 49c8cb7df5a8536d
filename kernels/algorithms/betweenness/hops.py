"""GPU betweenness by hop counts (``hops.cu``): batches of up to 128 sources, frontier lists.

For each batch: the levels and path counts, discovered level by level top-down from each level's
list of nodes (kept), with the tight arcs marked per source; then the dependencies over the
tight out-arcs of each level's list going up, and the batch's contributions added to the scores.
Only the out-rows are read, for directed graphs too. A warp's lane holds S sources (1, 2 or 4:
the fewest that take the sources in one batch, as memory allows), so one load of a neighbour's
levels serves 32 * S sources. Levels are bytes while the search stays within
:data:`BYTE_LEVELS` levels; a deeper batch is run again with 4-byte levels.

Rows over :data:`HUB_ROW` arcs are cut into items of :data:`CHUNK` arcs, a block of
:data:`HUB_THREADS` each, whose sums are added in a fixed order (``hops.cu``).

Sources without out-arcs are left out (:func:`.gpu.brandes_device`), and the last batch takes
the fewest sources per lane that hold what is left: Graph500 R-MAT graphs leave 38% of their
nodes isolated (scale 20), so that of 256 sampled sources 152 remain, run as 128 + 24 at one per
lane: 1.4x faster than two batches of 128 (rmat20 97 -> 70 ms, rmat22 364 -> 261 ms, H100,
2026-11-28).

Tried and dropped (rmat22, k=256, H100): bottom-up levels (a warp per unreached node looking
for a parent), 2.6 s against 1.5 s top-down at 32 sources per batch: with many sources per node,
a node's unreached sources are rarely all found at one level, so rows are read to the end; 8
sources per lane (256 per batch), 1.7 s against 0.96 s at 4 (134 registers a thread); tight
masks set by a shuffle reduction and atomic ORs rather than ballots (no faster), and rows of over
128 or 256 arcs cut into items (no faster than 1,024). Where the time goes (rmat22, same
probes): the path counts' atomics in discovery about a quarter of the run, the masks a sixth.
Reached sources read from a bit per node and source (16 B a node, in L2) instead of the
neighbours' levels (128 B) in discovery: no faster (rmat22 push 162 ms either way, 2026-11-28).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import cupy
from graphgpu.kernels.core.registry import ProgressFn

CUDA_SOURCE = Path(__file__).with_name("hops.cu")
#: A warp's lanes; a batch holds LANES * S sources (S per lane), the kernels' stride per node.
LANES = 32
#: Sources per lane the kernels are built for.
PER_LANE = (1, 2, 4)
#: Device memory the batch state may take (sigma and delta: 16 B per node and source; the tight
#: mask: 1 bit per arc and source).
BATCH_BYTES = 12 << 30
#: Threads of a block of the row kernels (hops.cu's ROW_THREADS) and of the per-node kernels.
THREADS = 64
#: Rows of more arcs than this are cut into items of CHUNK arcs, a block of HUB_THREADS each.
HUB_ROW = 1024
CHUNK = 4096
HUB_THREADS = 256  # hops.cu's HUB_THREADS
#: Deepest level byte levels hold (255 marks unreached).
BYTE_LEVELS = 254
_STEPS = ("push", "push_hub", "gather", "gather_hub", "finish", "reached", "accumulate")
#: Blocks of the grid-stride count of the nodes each source reached (threads: a multiple of a
#: batch's 128 sources).
REACHED_BLOCKS, REACHED_THREADS = 1024, 256
NAMES = tuple(f"bc_hop_{step}_{t}x{s}" for t in ("u8", "u32") for s in PER_LANE
              for step in _STEPS)


class _TooDeep(Exception):
    """A batch's search went past the levels of its level type."""


@dataclass
class Rows:
    """One direction's CSR on the device, its degrees and its hub rows cut into items."""

    indptr: Any
    indices: Any
    degree: Any
    hubs: Any
    first: Any
    item_node: Any
    item_start: Any
    item_end: Any

    @classmethod
    def of(cls, indptr: Any, indices: Any) -> Rows:
        """The rows ``(indptr, indices)``; hub items built on the host from the hubs alone."""
        cp = cupy()
        degree = cp.diff(indptr)
        hubs = cp.flatnonzero(degree > HUB_ROW).astype(cp.int32)
        starts, ends = cp.asnumpy(indptr[hubs]), cp.asnumpy(indptr[hubs + 1])
        pieces = -(-(ends - starts) // CHUNK)
        first = np.zeros(hubs.shape[0] + 1, dtype=np.int32)
        np.cumsum(pieces, out=first[1:])
        which = np.repeat(np.arange(hubs.shape[0]), pieces)
        start = starts[which] + CHUNK * (np.arange(which.shape[0]) - first[:-1][which])
        end = np.minimum(start + CHUNK, ends[which])
        return cls(indptr, indices, degree, hubs, cp.asarray(first),
                   hubs[cp.asarray(which)], cp.asarray(start.astype(np.int64)),
                   cp.asarray(end.astype(np.int64)))

def per_lane(n: int, arcs: int, sources: int) -> int:
    """Sources per lane: the fewest of :data:`PER_LANE` that take every source in one batch,
    fewer where :data:`BATCH_BYTES` does not hold them (at least 1)."""
    fits = [s for s in PER_LANE if s == 1 or LANES * s * (16 * n + arcs // 8) <= BATCH_BYTES]
    return next((s for s in fits if LANES * s >= sources), fits[-1])


def state_bytes(n: int, arcs: int, sources: int) -> int:
    """Device bytes of a run's batch state: sigma and delta (8 B each), levels (1 B, 4 B when a
    batch goes deeper than :data:`BYTE_LEVELS`, both alive while one replaces the other) per
    node and source of a batch, the tight mask (a bit per arc and source), and the per-node
    stamps and level lists."""
    s = per_lane(n, arcs, sources)
    return LANES * s * n * 21 + 4 * s * arcs + 12 * n


def _gather(k: dict[str, Any], sfx: str, width: int, rows: Rows, lists: Any, lo: int, hi: int,
            level: Any, depth: int, tight: Any, sigma: Any, delta: Any, part: Any) -> None:
    """Dependencies of the nodes of ``lists[lo:hi]`` (level ``depth``)."""
    if hi > lo:
        k[f"bc_hop_gather_{sfx}"](grid_for((hi - lo) * LANES, THREADS), (THREADS,),
                                  (rows.indptr, rows.indices, lists[lo:], np.int32(hi - lo),
                                   np.int64(HUB_ROW), level, np.int32(depth), tight, sigma,
                                   delta))
    items = int(rows.item_node.shape[0])
    if items:
        k[f"bc_hop_gather_hub_{sfx}"]((items,), (HUB_THREADS,),
                                      (rows.indices, rows.item_node, rows.item_start,
                                       rows.item_end, level, np.int32(depth), tight, sigma,
                                       part))
        hubs = int(rows.hubs.shape[0])
        k[f"bc_hop_finish_{sfx}"](grid_for(hubs * width, THREADS), (THREADS,),
                                  (rows.hubs, np.int32(hubs), rows.first, level,
                                   np.int32(depth), part, sigma, delta))


def _levels(k: dict[str, Any], sfx: str, out: Rows, n: int, b: int, level: Any, stamp: Any,
            lists: Any, count: Any, limit: int, sigma: Any, tight: Any) -> tuple[Any, list[int]]:
    """Discover the batch's levels, path counts and tight arcs; returns the (maybe grown) list
    buffer and the offsets of level d's list ``lists[offsets[d]:offsets[d + 1]]``."""
    cp = cupy()
    offsets = [0, b]
    depth = 0
    while offsets[-1] > offsets[-2]:
        lo, hi = offsets[-2], offsets[-1]
        if depth + 1 > limit:
            raise _TooDeep
        if lists.shape[0] < hi + n:
            grown = cp.empty(max(2 * lists.shape[0], hi + n), dtype=cp.int32)
            grown[:hi] = lists[:hi]
            lists = grown
        count.fill(0)
        head = (level, np.int32(depth), stamp, lists[hi:], count, sigma, tight)
        k[f"bc_hop_push_{sfx}"](grid_for((hi - lo) * LANES, THREADS), (THREADS,),
                                (out.indptr, out.indices, lists[lo:], np.int32(hi - lo),
                                 np.int64(HUB_ROW), *head))
        if out.item_node.shape[0]:
            k[f"bc_hop_push_hub_{sfx}"]((int(out.item_node.shape[0]),), (HUB_THREADS,),
                                        (out.indices, out.item_node, out.item_start,
                                         out.item_end, *head))
        offsets.append(hi + int(count.get()[0]))
        depth += 1
    return lists, offsets[:-1]


def brandes_hops(dg: Any, sources: np.ndarray, endpoints: bool, progress: ProgressFn) -> Any:
    """Unnormalised betweenness by hop counts from ``sources`` (internal ids), as the CPU's.

    Parameters
    ----------
    dg : DeviceGraph
        The graph's out-rows on the device (paths follow them; directed or not).
    sources : ndarray of int32
    endpoints : bool
    progress : ProgressFn
        Called between batches; may raise to cancel.

    Returns
    -------
    cupy.ndarray of float64
        The scores before rescaling.
    """
    cp = cupy()
    k = kernels(CUDA_SOURCE, NAMES)
    n, arcs = dg.n, int(dg.indices.shape[0])
    s = per_lane(n, arcs, int(sources.shape[0]))
    width = LANES * s
    out = Rows.of(dg.indptr, dg.indices)
    bc = cp.zeros(n, dtype=cp.float64)
    sigma = cp.empty(n * width, dtype=cp.float64)
    delta = cp.empty(n * width, dtype=cp.float64)
    tight = cp.empty(max(arcs, 1) * s, dtype=cp.uint32)
    stamp = cp.empty(n, dtype=cp.int32)
    lists = cp.empty(2 * n + width, dtype=cp.int32)
    count = cp.zeros(1, dtype=cp.int32)
    reached = cp.zeros(width, dtype=cp.int64)
    part = cp.empty(max(int(out.item_node.shape[0]), 1) * width, dtype=cp.float64)
    dtype, limit = np.uint8, BYTE_LEVELS
    level = cp.empty(n * width, dtype=dtype)
    start = 0
    while start < sources.shape[0]:
        progress(start / sources.shape[0],
                 f"betweenness: sources {start:,} of {sources.shape[0]:,}")
        # The last batch's lanes hold fewer sources where that takes them all: a narrower
        # stride reads fewer bytes of levels an arc.
        here = next(t for t in PER_LANE if t == s or LANES * t >= sources.shape[0] - start)
        wide = LANES * here
        batch = sources[start:start + wide]
        start += wide
        b = int(batch.shape[0])
        d_src = cp.asarray(batch, dtype=cp.int32)
        row, index = d_src.astype(cp.int64) * wide, cp.arange(b, dtype=cp.int64)
        first = row + index
        # hops.cu's slot: path counts are source-interleaved (lane l's source i at i * 32 + l)
        first_count = row + index % here * LANES + index // here
        while True:
            sfx = f"{'u8' if dtype == np.uint8 else 'u32'}x{here}"
            level[:n * wide].fill(np.iinfo(dtype).max)  # unreached
            stamp.fill(-1)
            sigma[:n * wide].fill(0.0)
            tight[:max(arcs, 1) * here].fill(0)
            level[first] = 0
            sigma[first_count] = 1.0
            lists[:b] = d_src
            try:
                lists, offsets = _levels(k, sfx, out, n, b, level, stamp, lists, count, limit,
                                         sigma, tight)
                break
            except _TooDeep:
                dtype, limit = np.uint32, np.iinfo(np.int32).max - 1
                level = cp.empty(n * width, dtype=dtype)
        for d in range(len(offsets) - 2, 0, -1):  # the sources' own dependencies are not used
            _gather(k, sfx, wide, out, lists, offsets[d], offsets[d + 1], level, d, tight,
                    sigma, delta, part)
        reached.fill(0)
        k[f"bc_hop_reached_{sfx}"]((REACHED_BLOCKS,), (REACHED_THREADS,),
                                   (np.int32(n), np.int32(b), level, reached))
        k[f"bc_hop_accumulate_{sfx}"](grid_for(n * LANES, THREADS), (THREADS,),
                                      (np.int32(n), np.int32(b), d_src, level, delta, reached,
                                       np.int32(bool(endpoints)), bc))
    return bc
