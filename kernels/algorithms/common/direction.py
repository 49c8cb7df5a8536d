"""Which arcs a search follows on a directed graph: out-edges (NetworkX's rule), in-edges, both.

Searches (BFS, shortest paths) expand rows as out-lists and find parents in rows read as
in-lists. :func:`oriented` gives them a graph whose out-CSR (``indptr``, ``indices``,
``weights``) holds the arcs to follow and whose in-CSR (``in_*``, see :func:`backward`) the same
arcs entering each node, so the search code is one for every direction and for undirected graphs.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from graphgpu.kernels.core.graph import Graph

Direction = Literal["out", "in", "both"]

DESCRIPTION = ("Directed graphs: follow arcs forwards ('out', NetworkX's rule), backwards "
               "('in': what reaches the source) or both ways ('both': the symmetrised graph). "
               "Ignored on undirected graphs.")


def oriented(graph: Graph, direction: Direction) -> Graph:
    """The graph whose out-rows are the arcs to follow from each node in ``direction``.

    Parameters
    ----------
    graph : Graph
        Directed or not (an undirected graph is returned as it is).
    direction : {"out", "in", "both"}
        ``out``: the graph; ``in``: the reversed graph (out- and in-CSR swapped; its
        ``graph_id`` gets an ``r`` so device caches keep the two apart); ``both``:
        :meth:`Graph.undirected`.

    Returns
    -------
    Graph
        Same nodes (internal and original ids) as ``graph``.
    """
    if not graph.directed or direction == "out":
        return graph
    if direction == "both":
        return graph.undirected()
    return Graph(indptr=graph.in_indptr, indices=graph.in_indices, node_ids=graph.node_ids,
                 weights=graph.in_weights, directed=True, in_indptr=graph.indptr,
                 in_indices=graph.indices, in_weights=graph.weights,
                 graph_id=f"{graph.graph_id}r" if graph.graph_id else "")


def backward(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(indptr, indices, weights)`` of the arcs entering each node: the in-CSR of a directed
    graph, the CSR itself of an undirected one."""
    if graph.directed:
        return graph.in_indptr, graph.in_indices, graph.in_weights
    return graph.indptr, graph.indices, graph.weights
