"""Counts, tests and histograms of arrays on either backend, by kernels that take any length.

CuPy's reductions of booleans and of integers it widens (``count_nonzero``, ``any``, ``all``,
``sum`` of a mask, and the ``(x < 0).any()`` inside ``bincount``) run CUB kernels that it
compiles per block size, and it picks the block size by the array's length (below 2,048
entries) and by the number of blocks: a worker warmed up on a 64-node ring and a 65,536-node
graph compiled again on the first job of a 300- or 3,000-node graph (pagerank, clustering,
count_cliques, leiden: 3.4-3.6 s each, H100, 2026-11-27), and the first start's compile pool
spent 62 s of its 297 s of work on 25 such kernels. On the GPU the functions here run
:file:`reductions.cu` instead, one kernel per element type whatever the length (and one
launch, where CUB takes two and an allocation); NumPy arrays go to NumPy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.core.cuda import kernels, sm_count
from graphgpu.kernels.core.device import cupy

CUDA_SOURCE = Path(__file__).with_name("reductions.cu")
THREADS = 256
#: Blocks a multiprocessor gets at most (a grid-stride loop covers the rest).
BLOCKS_PER_SM = 8
#: Kernel name suffix of each element type of the bins' values.
SUFFIX = {np.dtype(np.int32): "i4", np.dtype(np.int64): "i8"}
NAMES = ("count_nonzero_b1",
         *(f"bincount{w}_{s}" for w in ("", "_weighted") for s in SUFFIX.values()))


def _grid(n: int) -> tuple[int]:
    return (max(1, min(-(-n // THREADS), BLOCKS_PER_SM * sm_count())),)


def _launch(name: str, n: int, *args: Any) -> None:
    kernels(CUDA_SOURCE, NAMES)[name](_grid(n), (THREADS,), args)


def _no_kernel(values: Any) -> TypeError:
    return TypeError(f"no reduction kernel for {values.dtype}")


def count_true(values: Any) -> int:
    """Entries of ``values`` that are true (``count_nonzero``), as a Python int.

    Parameters
    ----------
    values : ndarray
        A NumPy array (counted by NumPy) or a CuPy array of bool (a mask).
    """
    if isinstance(values, np.ndarray):
        return int(np.count_nonzero(values))
    cp = cupy()
    if values.dtype != cp.bool_:
        raise _no_kernel(values)
    flat = cp.ascontiguousarray(values).ravel()
    total = cp.zeros(1, dtype=cp.uint64)
    _launch("count_nonzero_b1", flat.size, flat, np.int64(flat.size), total)
    return int(total.get()[0])


def all_true(values: Any) -> bool:
    """Whether every entry of ``values`` is true (``values.all()``); arrays as
    :func:`count_true`."""
    return count_true(values) == values.size


def bincount(values: Any, size: int, weights: Any = None) -> Any:
    """``bincount(values, weights, minlength=size)`` where every value lies in ``[0, size)``.

    Parameters
    ----------
    values : ndarray of int, 1-D
        NumPy (``numpy.bincount`` runs), or CuPy of int32 or int64. Each value in
        ``[0, size)``: the caller's guarantee (the bins are not grown; on the device a value
        outside is skipped, on the host NumPy raises or grows as it does).
    size : int
        Number of bins.
    weights : ndarray, optional
        Added per value as float64 (NumPy's ``bincount`` converts them so too).

    Returns
    -------
    ndarray
        int64 counts, or float64 sums with ``weights``, of ``size`` entries, where ``values``
        lie (on the device the weighted sums are added in any order, as CuPy's ``bincount``
        adds them).
    """
    if isinstance(values, np.ndarray):
        return np.bincount(values, weights=weights, minlength=size)
    cp = cupy()
    values = cp.ascontiguousarray(values)
    suffix = SUFFIX.get(np.dtype(values.dtype))
    if suffix is None:
        raise _no_kernel(values)
    n = int(values.size)
    if weights is None:
        counts = cp.zeros(size, dtype=cp.uint64)
        _launch(f"bincount_{suffix}", n, values, np.int64(n), np.int64(size), counts)
        return counts.view(cp.int64)
    sums = cp.zeros(size, dtype=cp.float64)
    _launch(f"bincount_weighted_{suffix}", n, values,
            cp.ascontiguousarray(weights, dtype=cp.float64), np.int64(n), np.int64(size), sums)
    return sums
