"""The CSR of an undirected edge list, built in parallel: buckets of rows instead of one sort.

``build_graph`` once sorted all ``m`` edges as 64-bit keys in one thread (about half of an
upload's time). Here both arcs of every edge are counted into buckets of consecutive rows (each
thread its own counts over its share of the edges), scattered into their bucket, and each
bucket is sorted on its own, its repeats merged (the smallest weight kept) and copied to its
place in the CSR: every pass runs on all cores, the sorts are short and stay in cache. The
result is the one the global sort gave: rows ascending, no repeats, each edge in both rows.

Each pass is a compiled function over one thread's share (``t`` of ``threads``), run by a pool
of Python threads (the functions release the GIL), as the text scanner is: no Numba parallel
loops, whose compilation took 28 s on a fresh cache of the 2-core VM (these functions: about
2 s), and whose waiting threads spin on cores that other processes need.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from graphgpu.kernels.core.threads import THREADS, in_threads

#: Buckets per thread: enough that one heavy bucket (the hubs of a power-law graph) does not
#: leave the other threads idle for long.
BUCKETS_PER_THREAD = 256
#: Bits a radix pass of a bucket's sort takes: 4,096 counters (32 KB), in the first-level
#: cache; a bucket of 4,096 rows and columns under 2^24 sorts in three passes.
_DIGIT_BITS = 12
#: Work below this many items a thread is not worth a thread.
_MIN_SHARE = 1 << 16
_LOW = np.int64(0xFFFFFFFF)


def _threads(items: int) -> int:
    return max(1, min(THREADS, items // _MIN_SHARE))


def _run(part: Callable[..., object], threads: int, *args: object) -> None:
    """``part(*args, t, threads)`` for every share ``t``, in the shared pool of threads."""
    in_threads(lambda t: part(*args, t, threads), threads)


@njit(cache=True, nogil=True)
def _bucket_counts(u, v, shift, counts, t, threads):
    m = u.shape[0]
    for e in range(m * t // threads, m * (t + 1) // threads):
        counts[t, u[e] >> shift] += 1
        counts[t, v[e] >> shift] += 1


@njit(cache=True, nogil=True)
def _scatter(u, v, w, offsets, shift, keys, key_w, t, threads):
    """Both arcs of every edge of share ``t`` as ``row << 32 | column`` keys into their row
    bucket, from the share's offsets on."""
    weighted = w.shape[0] > 0
    m = u.shape[0]
    fill = offsets[t].copy()
    for e in range(m * t // threads, m * (t + 1) // threads):
        a, b = np.int64(u[e]), np.int64(v[e])
        for row, col in ((a, b), (b, a)):
            slot = fill[row >> shift]
            keys[slot] = (row << 32) | col
            if weighted:
                key_w[slot] = w[e]
            fill[row >> shift] = slot + 1


@njit(cache=True, nogil=True, inline="always")
def _radix_pass(src, src_w, dst, dst_w, shift, bits, weighted):
    """A stable counting sort of ``src`` by its bits ``[shift, shift + bits)`` into ``dst``
    (the weights alike)."""
    counts = np.zeros((1 << bits) + 1, np.int64)
    mask = (np.int64(1) << bits) - 1
    for i in range(src.shape[0]):
        counts[((src[i] >> shift) & mask) + 1] += 1
    for d in range(1 << bits):
        counts[d + 1] += counts[d]
    for i in range(src.shape[0]):
        d = (src[i] >> shift) & mask
        dst[counts[d]] = src[i]
        if weighted:
            dst_w[counts[d]] = src_w[i]
        counts[d] += 1


@njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def _merge_bucket(keys, key_w, lo, hi, first_row, row_bits, col_bits, degrees):
    """One bucket: its arcs sorted by (row, column) by a radix sort (the columns' bits, then
    the ``row_bits`` of the rows within the bucket, :data:`_DIGIT_BITS` at a time), repeats
    merged (the smallest weight kept); the distinct columns written back from ``keys[lo]`` on,
    row after row (their weights likewise). Returns how many."""
    weighted = key_w.shape[0] > 0
    a = keys[lo:hi].copy()
    for i in range(a.shape[0]):  # rows relative to the bucket's first: fewer digits to sort
        a[i] = ((a[i] >> 32) - first_row) << 32 | (a[i] & _LOW)
    a_w = key_w[lo:hi].copy() if weighted else key_w[:0]
    b = np.empty_like(a)
    b_w = np.empty_like(a_w)
    for shift in range(0, col_bits, _DIGIT_BITS):
        _radix_pass(a, a_w, b, b_w, shift, min(_DIGIT_BITS, col_bits - shift), weighted)
        a, b, a_w, b_w = b, a, b_w, a_w
    for shift in range(32, 32 + row_bits, _DIGIT_BITS):
        _radix_pass(a, a_w, b, b_w, shift, min(_DIGIT_BITS, 32 + row_bits - shift), weighted)
        a, b, a_w, b_w = b, a, b_w, a_w
    out = lo
    row = np.int64(-1)
    row_start = lo
    for k in range(a.shape[0]):
        r = a[k] >> 32
        col = a[k] & _LOW
        if r != row:
            if row >= 0:
                degrees[first_row + row] = out - row_start
            row, row_start = r, out
        if out == row_start or col != keys[out - 1]:
            keys[out] = col
            if weighted:
                key_w[out] = a_w[k]
            out += 1
        elif weighted and a_w[k] < key_w[out - 1]:
            key_w[out - 1] = a_w[k]
    if row >= 0:
        degrees[first_row + row] = out - row_start
    return out - lo


@njit(cache=True, nogil=True)
def _merge_buckets(keys, key_w, starts, shift, col_bits, degrees, kept, t, threads):
    """Every ``threads``-th bucket from ``t`` through :func:`_merge_bucket` (strided, so that
    the buckets of hubs, the first ones in a power-law graph, spread over the threads)."""
    for bucket in range(t, starts.shape[0] - 1, threads):
        kept[bucket] = _merge_bucket(keys, key_w, starts[bucket], starts[bucket + 1],
                                     bucket << shift, max(shift, 1), col_bits, degrees)


@njit(cache=True, nogil=True)
def _gather(keys, key_w, starts, kept, indptr, shift, indices, arc_weights, t, threads):
    weighted = key_w.shape[0] > 0
    n = indptr.shape[0] - 1
    for bucket in range(t, starts.shape[0] - 1, threads):
        at = indptr[min(bucket << shift, n)]
        lo = starts[bucket]
        for k in range(kept[bucket]):
            indices[at + k] = keys[lo + k] & _LOW
            if weighted:
                arc_weights[at + k] = key_w[lo + k]


@njit(cache=True, nogil=True)
def _scan_ends(src, dst, out, t, threads):
    """Share ``t``'s smallest and largest id of ``src`` and of ``dst``, and its self-loops."""
    m = src.shape[0]
    src_low = dst_low = np.int64(0x7FFFFFFFFFFFFFFF)
    src_high = dst_high = -src_low - 1
    loops = 0
    for e in range(m * t // threads, m * (t + 1) // threads):
        a, b = src[e], dst[e]
        src_low, src_high = min(src_low, a), max(src_high, a)
        dst_low, dst_high = min(dst_low, b), max(dst_high, b)
        loops += a == b
    out[t, 0], out[t, 1], out[t, 2], out[t, 3], out[t, 4] = (
        src_low, src_high, dst_low, dst_high, loops)


def edge_ends(src: np.ndarray, dst: np.ndarray) -> tuple[int, int, int, int, int]:
    """``(src.min(), src.max(), dst.min(), dst.max(), (src == dst).sum())`` of two int64
    arrays of one length (at least 1) in one pass on all cores: an upload's checks made seven
    passes of one thread over its edges (about 15% of a 104 MB npz upload on 16 cores)."""
    threads = _threads(src.shape[0])
    out = np.empty((threads, 5), np.int64)
    _run(_scan_ends, threads, src, dst, out)
    return (int(out[:, 0].min()), int(out[:, 1].max()), int(out[:, 2].min()),
            int(out[:, 3].max()), int(out[:, 4].sum()))


@njit(cache=True, nogil=True)
def _mark(present, ids, t, threads):
    m = ids.shape[0]
    for e in range(m * t // threads, m * (t + 1) // threads):
        present[ids[e]] = 1  # threads may write the same byte: the same value


@njit(cache=True, nogil=True)
def _count_present(present, counts, t, threads):
    top = present.shape[0]
    c = 0
    for i in range(top * t // threads, top * (t + 1) // threads):
        c += present[i]
    counts[t + 1] = c


@njit(cache=True, nogil=True)
def _rank_present(present, counts, rank, ids, t, threads):
    """Each id's rank among the present ones from its share's offset ``counts[t]``, and the
    present ids in order."""
    top = present.shape[0]
    r = counts[t]
    for i in range(top * t // threads, top * (t + 1) // threads):
        rank[i] = r
        if present[i]:
            ids[r] = i
            r += 1


@njit(cache=True, nogil=True)
def _take(rank, ids, out, t, threads):
    m = ids.shape[0]
    for e in range(m * t // threads, m * (t + 1) // threads):
        out[e] = rank[ids[e]]


def dense_relabel(lo: np.ndarray, hi: np.ndarray, extra: np.ndarray, top: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct ids among ``lo``, ``hi`` and ``extra`` (non-negative int64, at most
    ``top``), and ``lo``, ``hi`` as their ranks: a table of ``top + 1`` bytes, in parallel.
    When every id up to ``top`` is present (an SDK upload of nodes ``0..n-1``), the ranks are
    the ids: ``lo`` and ``hi`` themselves come back (8.4 M edges: 30-40 ms on the 2-core VM
    instead of 200-290 ms)."""
    present = np.zeros(top + 1, np.uint8)
    for ids in (lo, hi, extra):
        _run(_mark, _threads(ids.shape[0]), present, ids)
    threads = _threads(top + 1)
    counts = np.zeros(threads + 1, np.int64)
    _run(_count_present, threads, present, counts)
    np.cumsum(counts, out=counts)
    if counts[-1] == top + 1:
        return np.arange(top + 1, dtype=np.int64), lo, hi
    rank = np.empty(top + 1, np.int64)
    node_ids = np.empty(int(counts[-1]), np.int64)
    _run(_rank_present, threads, present, counts, rank, node_ids)
    out = []
    for ids in (lo, hi):
        ranks = np.empty(ids.shape[0], np.int64)
        _run(_take, _threads(ids.shape[0]), rank, ids, ranks)
        out.append(ranks)
    return node_ids, out[0], out[1]


def undirected_csr(u: np.ndarray, v: np.ndarray, weights: np.ndarray, n: int,
                   index_dtype: np.dtype, offset_dtype: np.dtype
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, arc_weights)`` of the distinct edges among ``u[i] -- v[i]``.

    Parameters
    ----------
    u, v : ndarray of int64
        Internal ids ``0..n-1`` (``n < 2**31``) of each edge's ends, ``u[i] != v[i]``; an
        edge may repeat, in either direction.
    weights : ndarray of float64
        One per edge (repeats keep the smallest), or empty for an unweighted graph.
    n : int
        Node count.
    index_dtype, offset_dtype : numpy.dtype
        Dtypes of ``indices`` and ``indptr``.

    Returns
    -------
    tuple of ndarray
        Rows ascending, each distinct edge in both of its rows; ``arc_weights`` empty when
        unweighted.
    """
    threads = _threads(u.shape[0])
    shift = max(0, int(np.ceil(np.log2(max(n, 1) / (BUCKETS_PER_THREAD * threads)))))
    buckets = ((max(n, 1) - 1) >> shift) + 1
    counts = np.zeros((threads, buckets), np.int64)
    _run(_bucket_counts, threads, u, v, shift, counts)
    # Bucket-major order: thread t's arcs of bucket b follow those of threads before it.
    offsets = np.zeros(threads * buckets, np.int64)
    np.cumsum(counts.T.ravel()[:-1], out=offsets[1:])
    offsets = np.ascontiguousarray(offsets.reshape(buckets, threads).T)
    starts = np.append(offsets[0], 2 * u.shape[0])
    keys = np.empty(2 * u.shape[0], np.int64)
    key_w = np.empty(keys.shape[0] if weights.shape[0] else 0, np.float64)
    _run(_scatter, threads, u, v, weights, offsets, shift, keys, key_w)
    degrees = np.zeros(n, np.int64)
    kept = np.zeros(buckets, np.int64)
    col_bits = max(1, (max(n, 1) - 1).bit_length())
    _run(_merge_buckets, threads, keys, key_w, starts, shift, col_bits, degrees, kept)
    indptr = np.zeros(n + 1, offset_dtype)
    np.cumsum(degrees, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), index_dtype)
    arc_weights = np.empty(indices.shape[0] if weights.shape[0] else 0, np.float64)
    _run(_gather, threads, keys, key_w, starts, kept, indptr, shift, indices, arc_weights)
    return indptr, indices, arc_weights
