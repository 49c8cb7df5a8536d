"""Small-graph helpers shared by the kernel tests."""

from __future__ import annotations

import networkx as nx
import numpy as np

from graphgpu.kernels.core.graph import Graph, build_graph


def original(node: int) -> int:
    """Original id of NetworkX node ``node``: non-contiguous, so id translation is exercised."""
    return 7 * node + 3


def from_nx(g: nx.Graph) -> Graph:
    """Our graph of a NetworkX graph on nodes 0..n-1; internal id i is NetworkX node i."""
    edges = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    nodes = np.arange(g.number_of_nodes(), dtype=np.int64)
    graph, _ = build_graph(original(edges[:, 0]), original(edges[:, 1]),
                           extra_nodes=original(nodes))
    return graph
