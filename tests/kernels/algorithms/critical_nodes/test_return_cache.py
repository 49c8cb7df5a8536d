"""critical_nodes: the swap search's return costs, cached from one move to the next, stay
exact (one-node moves, block moves, restarts)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.algorithms.critical_nodes.moves import CTL_EPOCH, restore_cost
from graphgpu.kernels.algorithms.critical_nodes.search import SearchState
from graphgpu.kernels.algorithms.critical_nodes.tuning import BLOCK_NODES
from tests.kernels.algorithms.critical_nodes.test_critical_nodes import from_nx


@pytest.mark.parametrize("nodes, patience", [(600, 300), (600, -10**6),
                                             (4 * BLOCK_NODES + 500, -10**6)])
def test_cached_return_costs_stay_exact_between_moves(nodes: int, patience: int) -> None:
    # block_restore keeps each deleted node's return cost from one move to the next: every
    # cost it would reuse (scored after the last reload, none of its labels changed since)
    # must be the cost a fresh scan gives, through one-node moves, block moves and restarts.
    g = nx.barabasi_albert_graph(nodes, 2, seed=8)
    graph = from_nx(g)
    k = nodes // 10
    chain = SearchState(graph.indptr, graph.indices, np.arange(0, 2 * k, 2), 3)
    cost, scored, _, cnt, nl, changed, grown = chain.block[1:]
    reused = 0
    for _ in range(30):
        chain.run(7, patience)
        for u in chain.dlist[:k]:
            when = scored[u]
            labels = nl[graph.indptr[u]:graph.indptr[u] + cnt[u]]
            if when <= chain.ctl[CTL_EPOCH] or (changed[labels] > when).any():
                continue  # read again at the next return
            fresh = restore_cost(graph.indptr, graph.indices, chain.deleted, chain.label,
                                 chain.size, chain.ctl, chain.mark, u, np.empty(0, np.int32),
                                 0)[0]
            if (grown[labels] > when).any():  # recounted from its labels
                joined = int(chain.size[labels].sum())
                lost = int((chain.size[labels] * (chain.size[labels] - 1) // 2).sum())
                assert fresh == joined * (joined + 1) // 2 - lost
            else:
                assert fresh == cost[u]
            reused += 1
    assert reused > 0
