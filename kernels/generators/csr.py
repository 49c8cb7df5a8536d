"""A generated edge list straight to the stored graph's CSR, on the backend that drew it.

Generators number their nodes ``0..n-1`` and keep every node, so :func:`build_graph`'s
relabelling is the identity and its global sort of ``m`` 64-bit keys on the host is the whole
cost (30 s of the 42 s rmat24 took). Here the CPU builds the rows with the upload's parallel
bucket build (:func:`graphgpu.kernels.core.csr.undirected_csr`, no relabelling), and the GPU
sorts the arcs on the device (CUB's radix sort through CuPy) and copies only the finished CSR
back. Both give exactly the
graph ``build_graph(src, dst, extra_nodes=arange(n))`` gives: symmetrised, no self-loops, no
duplicates, rows ascending.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphgpu.kernels.core import csr, reductions
from graphgpu.kernels.core.device import cupy
from graphgpu.kernels.core.errors import LimitExceeded
from graphgpu.kernels.core.graph import (
    ID_DTYPE,
    INDEX_DTYPE,
    OFFSET_DTYPE,
    Graph,
    NormalizationReport,
)
from graphgpu.kernels.core.registry import EdgeSet
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.generators.arrays import on_device, to_host


def arc_keys(xp: Any, src: Any, dst: Any, n: int) -> tuple[Any, int]:
    """Both arcs of every edge but the self-loops as 64-bit keys ``row * n + column``, and the
    number of self-loops."""
    keep = src != dst
    loops = int(src.size) - reductions.count_true(keep)
    return xp.concatenate([(src * n + dst)[keep], (dst * n + src)[keep]]), loops


def csr_from_keys(xp: Any, keys: Any, n: int) -> tuple[Any, Any]:
    """``(indptr, indices)`` of the distinct arc keys (sorted here), as arrays of ``xp``."""
    keys = xp.sort(keys)
    if keys.size:
        distinct = xp.empty(keys.size, dtype=bool)
        distinct[0] = True
        xp.not_equal(keys[1:], keys[:-1], out=distinct[1:])
        keys = keys[distinct]
        del distinct
    rows = keys // n
    indices = (keys - rows * n).astype(INDEX_DTYPE)
    del keys
    indptr = xp.searchsorted(rows, xp.arange(n + 1, dtype=rows.dtype)).astype(OFFSET_DTYPE)
    return indptr, indices


def csr_by_sort(xp: Any, src: Any, dst: Any, n: int) -> tuple[Any, Any, int]:
    """The same CSR by one sort of the arcs' keys (the GPU's way; runs with NumPy as well):
    ``(indptr, indices, self_loops)`` as arrays of ``xp``."""
    keys, loops = arc_keys(xp, src, dst, n)
    return (*csr_from_keys(xp, keys, n), loops)


def graph_from_edges(edges: EdgeSet, settings: Settings) -> tuple[Graph, NormalizationReport]:
    """The graph of a generator's edges (ids ``0..num_nodes-1``, every node kept), built where
    the edges are (NumPy: on the host; CuPy: on the device, then copied). Pass the only
    reference to a device edge set: it is dropped before the sort, to keep the peak low.

    Raises
    ------
    LimitExceeded
        More distinct edges than ``settings.max_edges``.
    """
    n, drawn = edges.num_nodes, int(edges.src.size)
    if on_device(edges.src):
        keys, loops = arc_keys(cupy(), edges.src, edges.dst, n)
        del edges  # the last reference (generate_graph passes it on): the ids go before the sort
        indptr, indices = (to_host(a) for a in csr_from_keys(cupy(), keys, n))
    else:
        src, dst = np.asarray(edges.src, np.int64), np.asarray(edges.dst, np.int64)
        edge = src != dst
        loops = int(src.size - np.count_nonzero(edge))
        indptr, indices, _ = csr.undirected_csr(src[edge], dst[edge], np.empty(0), n,
                                                INDEX_DTYPE, OFFSET_DTYPE)
    m = int(indices.size) // 2
    if m > settings.max_edges:
        raise LimitExceeded(f"{m} edges exceed the limit {settings.max_edges}",
                            code="too_many_edges")
    graph = Graph(indptr=indptr, indices=indices, node_ids=np.arange(n, dtype=ID_DTYPE))
    return graph, NormalizationReport(drawn, loops, drawn - loops - m)
