"""Comparing algorithm results in kernel tests."""

from __future__ import annotations

import numpy as np

from graphgpu.kernels.core.registry import AlgorithmResult


def assert_same(a: AlgorithmResult, b: AlgorithmResult, ignore: tuple[str, ...] = ()) -> None:
    """``a`` and ``b`` are the same answer: summaries (but for the keys in ``ignore``), node id
    fields, and every array with its dtype."""
    assert {k: v for k, v in a.summary.items() if k not in ignore} == \
        {k: v for k, v in b.summary.items() if k not in ignore}
    assert a.node_id_fields == b.node_id_fields
    for store in ("node_values", "arrays"):
        x, y = getattr(a, store), getattr(b, store)
        assert x.keys() == y.keys()
        for key in x:
            assert x[key].dtype == y[key].dtype, key
            np.testing.assert_array_equal(x[key], y[key], err_msg=key)
