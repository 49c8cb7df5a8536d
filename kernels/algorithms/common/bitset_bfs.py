"""Bit-parallel multi-source BFS on the GPU: 64 sources per machine word, pull levels.

Word ``w`` of node ``v`` holds the batch's sources ``64 w .. 64 w + 63``; a level ORs the
neighbours' frontier words and skips words whose sources have all reached ``v``. Closeness and
DACCER's hub balls (centrality) and the all-pairs hop counts (apsp) run this sweep, each with its
own kernel that reduces a level's new bits (``ms_accumulate``, ``ms_volume``,
``apsp_bfs_level``). Kernels: ``bitset_bfs.cu``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import DeviceGraph, cupy
from graphgpu.kernels.core.registry import ProgressFn

CUDA_SOURCE = Path(__file__).with_name("bitset_bfs.cu")
THREADS = 256
#: Bytes per node of one 64-source word in the bit-parallel BFS: visited, frontier, next.
WORD_BYTES_PER_NODE = 3 * 8
#: The kernels of ``bitset_bfs.cu``.
NAMES = ("ms_seed", "ms_pull")

#: ``level_done(start, count, words, following, level) -> bool``: reduce the bits new at
#: ``level`` (in ``following``) of the batch of sources ``start .. start + count``; True when some
#: bit was new (the search goes on).
LevelFn = Callable[[int, int, int, Any, int], bool]


def batch_words(n: int, max_batch_bytes: int) -> int:
    """64-source words per bit-parallel BFS batch that fit ``max_batch_bytes`` (at least 1)."""
    return max(1, max_batch_bytes // (WORD_BYTES_PER_NODE * max(n, 1)))


def last_mask(count: int) -> np.uint64:
    """The valid bits of the last word of a batch of ``count`` sources."""
    return np.uint64((1 << (count % 64)) - 1 if count % 64 else (1 << 64) - 1)


def seed(dg: DeviceGraph, sources: Any, count: int, words: int, visited: Any, following: Any,
         cnt: Any, counting: bool) -> None:
    """Levels 0 and 1: each source's bit at itself (``visited``) and its neighbours (both).

    Parameters
    ----------
    dg : DeviceGraph
    sources : cupy.ndarray of int32
        The batch's sources (the first ``count`` are used).
    count, words : int
        Sources in the batch and words per node (``ceil(count / 64)``).
    visited, following : cupy.ndarray of uint64
        ``n * words`` words each, zeroed by the caller.
    cnt : cupy.ndarray of uint32
        With ``counting``, per node: bits newly set at the node (a reduction kernel clears it);
        otherwise any uint32 array (not touched).
    counting : bool
    """
    kernels(CUDA_SOURCE, NAMES)["ms_seed"](
        grid_for(32 * count, THREADS), (THREADS,),
        (dg.indptr, dg.indices, sources, np.int32(count), np.int32(words), visited, following,
         cnt, np.int32(counting)))


def pull(dg: DeviceGraph, count: int, words: int, frontier: Any, visited: Any, following: Any,
         cnt: Any, counting: bool) -> None:
    """One pull level: ``following`` = OR of the neighbours' ``frontier`` words minus ``visited``
    (which takes the new bits); arguments as :func:`seed`."""
    kernels(CUDA_SOURCE, NAMES)["ms_pull"](
        grid_for(dg.n * words, THREADS), (THREADS,),
        (dg.indptr, dg.indices, np.int32(dg.n), np.int32(words), last_mask(count), frontier,
         visited, following, cnt, np.int32(counting)))


def sweep_all_sources(dg: DeviceGraph, words_per_batch: int, level_done: LevelFn,
                      progress: ProgressFn, what: str, cnt: Any | None = None) -> None:
    """BFS from every node, ``64 * words_per_batch`` sources per batch, to the last level.

    Parameters
    ----------
    dg : DeviceGraph
    words_per_batch : int
        Words per node of a batch (:func:`batch_words`); the three bit sets take
        :data:`WORD_BYTES_PER_NODE` bytes per node and word.
    level_done : LevelFn
        Called after the seed (level 1) and after each pull level; its host read of whether
        anything was found is the one sync per level.
    progress : ProgressFn
        Called once per batch with ``f"{what} sources {start} of {n}"``.
    what : str
        The message's head.
    cnt : cupy.ndarray of uint32, optional
        Per-node counts of new bits, kept by the kernels when given (see :func:`seed`).
    """
    cp = cupy()
    n = dg.n
    per = 64 * words_per_batch
    size = n * -(-min(per, n) // 64)
    visited, frontier, following = (cp.empty(size, cp.uint64) for _ in range(3))
    counting = cnt is not None
    if cnt is None:
        cnt = cp.zeros(1, cp.uint32)
    nodes = cp.arange(n, dtype=cp.int32)
    for start in range(0, n, per):
        progress(start / n, f"{what} sources {start} of {n}")
        count = min(per, n - start)
        words = -(-count // 64)
        vis, fro, fol = visited[:n * words], frontier[:n * words], following[:n * words]
        vis.fill(0)
        fol.fill(0)
        seed(dg, nodes[start:], count, words, vis, fol, cnt, counting)
        level = 1
        while level_done(start, count, words, fol, level):
            fro, fol = fol, fro
            level += 1
            pull(dg, count, words, fro, vis, fol, cnt, counting)
