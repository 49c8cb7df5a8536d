"""Small-graph helpers shared by the kernel tests."""

from __future__ import annotations

import networkx as nx
import numpy as np

from graphgpu.kernels.core.graph import Graph, build_graph


def original(node: int) -> int:
    """Original id of NetworkX node ``node``: non-contiguous, so id translation is exercised."""
    return 7 * node + 3


def from_nx(g: nx.Graph, weights: np.ndarray | None = None) -> Graph:
    """Our graph of a NetworkX graph on nodes 0..n-1; internal id i is NetworkX node i.

    ``weights``, when given, holds one weight per edge in ``g.edges()`` order.
    """
    edges = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    nodes = np.arange(g.number_of_nodes(), dtype=np.int64)
    graph, _ = build_graph(original(edges[:, 0]), original(edges[:, 1]), weights,
                           extra_nodes=original(nodes))
    return graph


def spread(g: nx.Graph, scale: int, offset: int, weights: np.ndarray | None = None) -> Graph:
    """Our graph of a NetworkX graph or digraph on integer nodes, node ``v`` under the original
    id ``scale * v + offset`` (spread out, so id translation is exercised); internal ids follow
    the sorted nodes. ``weights``: one per edge in ``g.edges()`` order."""
    edges = np.array(list(g.edges()), dtype=np.int64).reshape(-1, 2)
    graph, _ = build_graph(scale * edges[:, 0] + offset, scale * edges[:, 1] + offset, weights,
                           extra_nodes=scale * np.array(sorted(g.nodes), dtype=np.int64) + offset,
                           directed=g.is_directed())
    return graph


def skewed_arcs(seed: int, n: int, m: int, shape: float, scale: float
                ) -> tuple[np.random.Generator, np.ndarray, np.ndarray]:
    """``m`` random arcs on ``n`` nodes, sources Pareto(``shape``) x ``scale`` (a few very heavy
    rows, many light ones), destinations uniform; and the generator, for further draws."""
    rng = np.random.default_rng(seed)
    src = (rng.pareto(shape, m) * scale).astype(np.int64) % n
    return rng, src, rng.integers(0, n, m)
