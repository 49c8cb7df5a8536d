"""The device copy of a directed graph's in-CSR, shared by the families that pull along in-arcs
(pagerank, strongly connected components); kept for the last few graphs as
:func:`graphgpu.kernels.core.device.on_device` keeps the out-CSR."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph

#: Directed graphs whose in-CSR stays on the device (stored graphs only).
IN_CSR_CACHE = 2
_in_csr: OrderedDict[str, tuple[Any, Any, Any]] = OrderedDict()


def device_in_csr(graph: Graph) -> tuple[Any, Any, Any]:
    """``(in_indptr, in_indices, in_weights)`` of a graph on the current GPU.

    The out-CSR (:func:`on_device`) for an undirected graph; for a directed one its in-CSR,
    uploaded once per stored graph (the last :data:`IN_CSR_CACHE` are kept).
    """
    if not graph.directed:
        dg = on_device(graph)
        return dg.indptr, dg.indices, dg.weights
    if graph.graph_id and graph.graph_id in _in_csr:
        _in_csr.move_to_end(graph.graph_id)
        return _in_csr[graph.graph_id]
    cp = cupy()
    arrays = (cp.asarray(graph.in_indptr), cp.asarray(graph.in_indices),
              None if graph.in_weights is None else cp.asarray(graph.in_weights))
    if graph.graph_id:
        _in_csr[graph.graph_id] = arrays
        while len(_in_csr) > IN_CSR_CACHE:
            _in_csr.popitem(last=False)
    return arrays
