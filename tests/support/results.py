"""Comparing algorithm results in kernel tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmFn, AlgorithmResult, no_progress


def assert_same(a: AlgorithmResult, b: AlgorithmResult, ignore: tuple[str, ...] = ()) -> None:
    """``a`` and ``b`` are the same answer: summaries (but for the keys in ``ignore``), node id
    fields, and every array with its dtype (device arrays of a GPU backend compared on the
    host)."""
    a, b = a.host(), b.host()
    assert {k: v for k, v in a.summary.items() if k not in ignore} == \
        {k: v for k, v in b.summary.items() if k not in ignore}
    assert a.node_id_fields == b.node_id_fields
    for store in ("node_values", "arrays"):
        x, y = getattr(a, store), getattr(b, store)
        assert x.keys() == y.keys()
        for key in x:
            assert x[key].dtype == y[key].dtype, key
            np.testing.assert_array_equal(x[key], y[key], err_msg=key)


def assert_backends_agree(graph: Graph, params: Any, cpu: AlgorithmFn, gpu: AlgorithmFn,
                          fields: tuple[str, ...]) -> None:
    """The GPU backend ``gpu`` answers as the CPU backend ``cpu`` on ``graph``: the same summary
    and the same values of the node-value ``fields``."""
    host, device = cpu(graph, params, no_progress), gpu(graph, params, no_progress).host()
    assert device.summary == host.summary
    for field in fields:
        np.testing.assert_array_equal(device.node_values[field], host.node_values[field],
                                      err_msg=field)
