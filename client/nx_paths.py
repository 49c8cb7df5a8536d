"""NetworkX's shortest-path-length, reachability and bfs functions, answered by the service's
``bfs`` (hop counts) and ``sssp`` (non-negative weights). Directed graphs follow out-edges, or
in-edges for the functions that measure towards a target, as NetworkX does."""

from __future__ import annotations

import math
from typing import Any

from graphgpu.client.nx_session import current, served_graph, serving

#: NetworkX function -> (service algorithm, whether it takes directed graphs).
SERVED: dict[str, tuple[str, bool]] = {
    **serving("bfs", True, "single_source_shortest_path_length",
              "single_target_shortest_path_length"),
    **serving("sssp", True, "shortest_path_length"),
    **serving("bfs", True, "has_path", "descendants", "ancestors", "descendants_at_distance"),
    **serving("sssp", True, "single_source_dijkstra_path_length", "dijkstra_path_length",
              "single_source_bellman_ford_path_length", "bellman_ford_path_length"),
}


#: Functions whose answer on a multigraph is that on its simple graph (lightest parallel edge).
MULTIGRAPHS = frozenset(SERVED)


def _served(G: Any, name: str) -> Any:  # noqa: N803
    return served_graph(G, name, SERVED, MULTIGRAPHS)


def _lengths(graph: Any, source: Any, weight: Any, direction: str = "out") -> dict[Any, Any]:
    """Distance of every node reached from ``source`` following ``direction``: hops (``weight``
    None, the service's ``bfs``) or the ``weight`` attribute (1 where missing, ``sssp``)."""
    import networkx as nx

    if source not in graph:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    session = current()
    if weight is None:
        job = session.run_on(session.stored(graph, None), "bfs", source=source,
                             direction=direction)
        return {v: d for v, d in job.node_values("level").items() if d >= 0}
    if callable(weight):
        raise NotImplementedError("graphgpu takes weights by attribute name, not functions")
    job = session.run_on(session.stored(graph, weight, nonnegative=True), "sssp", source=source,
                         direction=direction)
    return {v: _number(d) for v, d in job.node_values("distance").items() if math.isfinite(d)}


def _number(d: float) -> float | int:
    """Whole distances as ints (NetworkX adds the graph's integer weights)."""
    return int(d) if d.is_integer() else d


def _within(lengths: dict[Any, Any], cutoff: float | None) -> dict[Any, Any]:
    """Nodes within ``cutoff``, nearest first (NetworkX's dicts come in search order)."""
    limit = math.inf if cutoff is None else cutoff
    return dict(sorted(((v, d) for v, d in lengths.items() if d <= limit), key=lambda t: t[1]))


def _to_target(lengths: dict[Any, Any], source: Any, target: Any) -> Any:
    import networkx as nx

    if target not in lengths:
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return lengths[target]


def _both_in(graph: Any, source: Any, target: Any) -> None:
    import networkx as nx

    for node in (source, target):
        if node not in graph:
            raise nx.NodeNotFound(f"Node {node} not found in graph")


def single_source_shortest_path_length(G: Any, source: Any,  # noqa: N803
                                       cutoff: int | None = None) -> dict[Any, int]:
    """Hop distance from ``source`` to each node it reaches (within ``cutoff``)."""
    graph = _served(G, "single_source_shortest_path_length")
    return _within(_lengths(graph, source, None), cutoff)


def single_target_shortest_path_length(G: Any, target: Any,  # noqa: N803
                                       cutoff: int | None = None) -> dict[Any, int]:
    """Hop distance to ``target`` from each node that reaches it (within ``cutoff``)."""
    import networkx as nx

    graph = _served(G, "single_target_shortest_path_length")
    if target not in graph:
        raise nx.NodeNotFound(f"Target {target} is not in G")
    return _within(_lengths(graph, target, None, "in"), cutoff)


def shortest_path_length(G: Any, source: Any = None, target: Any = None,  # noqa: N803
                         weight: Any = None, method: str = "dijkstra") -> Any:
    """Path lengths from ``source``, to ``target``, or between the two (hops when ``weight``
    is None; Dijkstra and Bellman-Ford give the same lengths on non-negative weights). All
    pairs (neither given) are not served."""
    graph = _served(G, "shortest_path_length")
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")
    if source is None and target is None:
        raise NotImplementedError("shortest_path_length: all pairs are not served")
    if source is None:
        import networkx as nx

        if target not in graph:
            raise nx.NodeNotFound(f"Target {target} is not in G")
        return _within(_lengths(graph, target, weight, "in"), None)
    if target is None:
        return _within(_lengths(graph, source, weight), None)
    if weight is None:  # NetworkX's bidirectional search checks both ends; Dijkstra the source
        _both_in(graph, source, target)
    return _to_target(_lengths(graph, source, weight), source, target)


def has_path(G: Any, source: Any, target: Any) -> bool:  # noqa: N803
    """Whether ``target`` is reachable from ``source``."""
    graph = _served(G, "has_path")
    _both_in(graph, source, target)
    return target in _lengths(graph, source, None)


def descendants(G: Any, source: Any) -> set[Any]:  # noqa: N803
    """Nodes reachable from ``source`` (itself left out)."""
    import networkx as nx

    graph = _served(G, "descendants")
    if source not in graph:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    return set(_lengths(graph, source, None)) - {source}


def ancestors(G: Any, source: Any) -> set[Any]:  # noqa: N803
    """Nodes that reach ``source`` (itself left out)."""
    import networkx as nx

    graph = _served(G, "ancestors")
    if source not in graph:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    return set(_lengths(graph, source, None, "in")) - {source}


def descendants_at_distance(G: Any, source: Any, distance: int) -> set[Any]:  # noqa: N803
    """Nodes exactly ``distance`` hops from ``source``."""
    import networkx as nx

    graph = _served(G, "descendants_at_distance")
    if source not in graph:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    return {v for v, d in _lengths(graph, source, None).items() if d == distance}


def single_source_dijkstra_path_length(G: Any, source: Any, cutoff: float | None = None,  # noqa: N803
                                       weight: Any = "weight") -> dict[Any, Any]:
    """Weighted distance from ``source`` to each node it reaches (within ``cutoff``)."""
    graph = _served(G, "single_source_dijkstra_path_length")
    return _within(_lengths(graph, source, weight), cutoff)


def dijkstra_path_length(G: Any, source: Any, target: Any,  # noqa: N803
                         weight: Any = "weight") -> Any:
    """Weighted distance from ``source`` to ``target`` (a target not in the graph is not
    reachable, as in NetworkX)."""
    graph = _served(G, "dijkstra_path_length")
    return _to_target(_lengths(graph, source, weight), source, target)


def single_source_bellman_ford_path_length(G: Any, source: Any,  # noqa: N803
                                           weight: Any = "weight") -> dict[Any, Any]:
    """Weighted distances from ``source`` (non-negative weights; others fall back)."""
    graph = _served(G, "single_source_bellman_ford_path_length")
    return _within(_lengths(graph, source, weight), None)


def bellman_ford_path_length(G: Any, source: Any, target: Any,  # noqa: N803
                             weight: Any = "weight") -> Any:
    """Weighted distance from ``source`` to ``target`` (non-negative weights)."""
    graph = _served(G, "bellman_ford_path_length")
    return _to_target(_lengths(graph, source, weight), source, target)
