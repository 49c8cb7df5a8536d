"""A stored graph's edges as a NumPy ``.npz`` stream, written block by block.

The archive is uncompressed (``ZIP_STORED``, zip64) and written to a non-seekable sink, so it
is produced in order, one block of at most ``block`` edges at a time, straight from the
memory-mapped store arrays: serving a 110M-edge graph takes a few blocks of memory, not the
whole ``src``/``dst`` arrays and the archive (8.4 GB once). ``numpy.load`` reads it as any
``.npz``.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator

import numpy as np

from graphgpu.kernels.core.graph import Graph

#: Arcs per block: 256K arcs take about 8 MB of temporaries (positions, rows, mask, values).
BLOCK_EDGES = 1 << 18


class _Sink:
    """A write-only file whose bytes are taken out by :meth:`drain` (zipfile writes here)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes | memoryview) -> int:
        part = bytes(data)
        self.parts.append(part)
        return len(part)  # bytes, not a typed memoryview's item count

    def flush(self) -> None:
        pass

    def drain(self) -> Iterator[bytes]:
        parts, self.parts = self.parts, []
        yield from parts


def _edge_blocks(graph: Graph, block: int) -> Iterator[tuple[np.ndarray, np.ndarray, slice]]:
    """``(rows, cols, positions)`` of every stored arc, ``block`` arcs at a time, keeping each
    undirected edge once (``row < col``)."""
    indptr = graph.indptr
    for lo in range(0, int(graph.indices.shape[0]), block):
        positions = np.arange(lo, min(lo + block, int(graph.indices.shape[0])))
        rows = np.searchsorted(indptr, positions, side="right") - 1
        cols = np.asarray(graph.indices[positions[0]:positions[-1] + 1])
        keep = slice(None) if graph.directed else rows < cols
        yield rows[keep], cols[keep], positions[keep]


def edges_npz(graph: Graph, block: int = BLOCK_EDGES) -> Iterator[bytes]:
    """The bytes of an ``.npz`` of ``src``, ``dst`` (original node ids, each undirected edge
    once with ``src < dst`` in internal order, each arc of a directed graph once), ``nodes``
    (every node's original id) and, for a weighted graph, ``weight``.

    Parameters
    ----------
    graph : Graph
        A stored graph, typically memory-mapped.
    block : int
        Arcs read per step; bounds the memory taken besides the graph's pages.
    """
    ids = graph.node_ids
    members = {
        "src": (ids.dtype, lambda rows, cols, pos: ids[rows]),
        "dst": (ids.dtype, lambda rows, cols, pos: ids[cols]),
    }
    if graph.weights is not None:
        weights = graph.weights
        members["weight"] = (weights.dtype, lambda rows, cols, pos: weights[pos])
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, (dtype, values) in members.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array_header_1_0(member, {
                    "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                    "fortran_order": False, "shape": (graph.m,)})
                for rows, cols, pos in _edge_blocks(graph, block):
                    member.write(np.ascontiguousarray(values(rows, cols, pos)).data)
                    yield from sink.drain()
        with archive.open("nodes.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, {
                "descr": np.lib.format.dtype_to_descr(ids.dtype), "fortran_order": False,
                "shape": (graph.n,)})
            for lo in range(0, graph.n, block):
                member.write(np.ascontiguousarray(ids[lo:lo + block]).data)
                yield from sink.drain()
    yield from sink.drain()
