"""The host's degeneracy-ordered DAG (:mod:`graphgpu.kernels.algorithms.common.dag`)."""

from __future__ import annotations

import numpy as np
import pytest

from graphgpu.kernels.algorithms.common.dag import degeneracy_rank, relabel
from graphgpu.kernels.core.graph import build_graph


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_relabel_sorts_each_rank_row_and_splits_it_at_its_own_rank(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    src, dst = rng.integers(0, n, 2000), rng.integers(0, n, 2000)
    src[:40] = 7  # a hub
    graph = build_graph(src, dst, extra_nodes=np.arange(n))[0]
    for rank in (degeneracy_rank(graph.indptr, graph.indices), rng.permutation(n)):
        ptr, adj, split = relabel(graph.indptr, graph.indices, rank)
        vertex = np.argsort(rank)
        for r in range(n):
            v = vertex[r]
            row = np.sort(rank[graph.indices[graph.indptr[v]:graph.indptr[v + 1]]])
            assert ptr[r + 1] - ptr[r] == row.shape[0]
            assert adj[ptr[r]:ptr[r + 1]].tolist() == row.tolist()
            assert split[r] == ptr[r] + np.searchsorted(row, r)
