"""NetworkX functions about connectivity and structure, answered from the service's components
and triangle counts (``connected_components``, ``strongly_connected_components``,
``triangles``, ``clustering``): components of every kind, isolates, trees and forests,
clustering (directed and weighted through the service's ``clustering``)."""

from __future__ import annotations

from typing import Any

from graphgpu.client.nx_session import current, has_weight, heaviest, served_graph, serving

#: NetworkX function -> (service algorithm, whether it takes directed graphs).
SERVED: dict[str, tuple[str, bool]] = {
    **serving("connected_components", False, "connected_components",
              "number_connected_components", "is_connected", "node_connected_component"),
    **serving("connected_components", True, "weakly_connected_components",
              "number_weakly_connected_components", "is_weakly_connected"),
    **serving("strongly_connected_components", True, "strongly_connected_components",
              "number_strongly_connected_components", "is_strongly_connected"),
    **serving("connected_components", True, "isolates", "number_of_isolates", "is_isolate",
              "is_tree", "is_forest"),
    **serving("triangles", False, "triangles", "transitivity"),
    **serving("clustering", True, "clustering", "average_clustering"),
}
#: Functions whose answer on a multigraph is that on its simple graph (connectivity; the tree
#: tests count parallel edges through ``number_of_edges``).
MULTIGRAPHS = frozenset(name for name, (algorithm, _) in SERVED.items()
                        if algorithm not in ("triangles", "clustering"))
#: The node-value field that numbers each algorithm's components.
_FIELD = {"connected_components": "label", "strongly_connected_components": "component"}


def _served(G: Any, name: str) -> Any:  # noqa: N803
    return served_graph(G, name, SERVED, MULTIGRAPHS)


def _directed(G: Any, name: str) -> Any:  # noqa: N803
    """The served graph of ``name``, a function that NetworkX offers for directed graphs only."""
    import networkx as nx

    graph = _served(G, name)
    if not graph.is_directed():
        raise nx.NetworkXNotImplemented(f"not implemented for undirected type ({name})")
    return graph


def _values(graph: Any, algorithm: str, field: str) -> dict[Any, Any]:
    """A node-value field of ``algorithm``'s result; none for a graph without nodes."""
    return current().run(graph, algorithm).node_values(field) if len(graph) else {}


def _labels(graph: Any, name: str) -> dict[Any, int]:
    algorithm = SERVED[name][0]
    return _values(graph, algorithm, _FIELD[algorithm])


def _nodes_needed(graph: Any, what: str) -> None:
    """NetworkX's error for a question about a graph without nodes."""
    import networkx as nx

    if len(graph) == 0:
        raise nx.NetworkXPointlessConcept(what)


def _sets(graph: Any, name: str) -> list[set[Any]]:
    """The components that ``name`` asks for, in the order of the service's numbering."""
    groups: dict[int, set[Any]] = {}
    for node, label in _labels(graph, name).items():
        groups.setdefault(label, set()).add(node)
    return [groups[c] for c in sorted(groups)]


def _count(graph: Any, name: str) -> int:
    if len(graph) == 0:
        return 0
    job = current().run(graph, SERVED[name][0])
    return int(job.result(fields="summary").summary["count"])


def _one_component(graph: Any, name: str) -> bool:
    """Whether the components that ``name`` counts are one (an error for a graph without
    nodes, as NetworkX's)."""
    _nodes_needed(graph, "Connectivity is undefined for the null graph.")
    return _count(graph, name) == 1


def connected_components(G: Any) -> Any:  # noqa: N803
    """Generator of the node sets of the connected components, in the order of their smallest
    node (the service's numbering; NetworkX's follows its search)."""
    return iter(_sets(_served(G, "connected_components"), "connected_components"))


def number_connected_components(G: Any) -> int:  # noqa: N803
    """Number of connected components (the job's summary)."""
    graph = _served(G, "number_connected_components")
    return _count(graph, "number_connected_components")


def is_connected(G: Any) -> bool:  # noqa: N803
    """Whether the graph is connected (one component)."""
    return _one_component(_served(G, "is_connected"), "is_connected")


def node_connected_component(G: Any, n: Any) -> set[Any]:  # noqa: N803
    """The node set of the component holding ``n``."""
    graph = _served(G, "node_connected_component")
    if n not in graph:
        raise NotImplementedError("node_connected_component: NetworkX reports missing nodes")
    labels = _labels(graph, "node_connected_component")
    return {v for v, label in labels.items() if label == labels[n]}


def weakly_connected_components(G: Any) -> Any:  # noqa: N803
    """Generator of the weakly connected components of a directed graph."""
    name = "weakly_connected_components"
    return iter(_sets(_directed(G, name), name))


def number_weakly_connected_components(G: Any) -> int:  # noqa: N803
    """Number of weakly connected components of a directed graph."""
    name = "number_weakly_connected_components"
    return _count(_directed(G, name), name)


def is_weakly_connected(G: Any) -> bool:  # noqa: N803
    """Whether a directed graph is weakly connected."""
    name = "is_weakly_connected"
    return _one_component(_directed(G, name), name)


def strongly_connected_components(G: Any) -> Any:  # noqa: N803
    """Generator of the strongly connected components of a directed graph."""
    name = "strongly_connected_components"
    return iter(_sets(_directed(G, name), name))


def number_strongly_connected_components(G: Any) -> int:  # noqa: N803
    """Number of strongly connected components of a directed graph."""
    name = "number_strongly_connected_components"
    return _count(_directed(G, name), name)


def is_strongly_connected(G: Any) -> bool:  # noqa: N803
    """Whether a directed graph is strongly connected."""
    name = "is_strongly_connected"
    return _one_component(_directed(G, name), name)


def _isolated(graph: Any, name: str) -> list[Any]:
    """Nodes without neighbours, in graph order: the singleton (weak) components (the service
    drops no edge of a graph without self-loops, which it does not take)."""
    if len(graph) == 0:
        return []
    job = current().run(graph, "connected_components")
    sizes = job.array("sizes")
    labels = job.node_values("label")
    return [v for v in graph if sizes[labels[v]] == 1]


def isolates(G: Any) -> Any:  # noqa: N803
    """Iterator over the nodes with no neighbours."""
    return iter(_isolated(_served(G, "isolates"), "isolates"))


def number_of_isolates(G: Any) -> int:  # noqa: N803
    """Number of nodes with no neighbours."""
    return len(_isolated(_served(G, "number_of_isolates"), "number_of_isolates"))


def is_isolate(G: Any, n: Any) -> bool:  # noqa: N803
    """Whether ``n`` has no neighbours."""
    graph = _served(G, "is_isolate")
    if n not in graph:
        raise NotImplementedError("is_isolate: NetworkX reports missing nodes")
    return n in set(_isolated(graph, "is_isolate"))


def is_forest(G: Any) -> bool:  # noqa: N803
    """Whether the (underlying undirected) graph is a forest: edges = nodes - components."""
    graph = _served(G, "is_forest")
    _nodes_needed(graph, "G has no nodes.")
    return graph.number_of_edges() == len(graph) - _count(graph, "is_forest")


def is_tree(G: Any) -> bool:  # noqa: N803
    """Whether the (underlying undirected) graph is a tree: connected, edges = nodes - 1."""
    graph = _served(G, "is_tree")
    _nodes_needed(graph, "G has no nodes.")
    return graph.number_of_edges() == len(graph) - 1 and _count(graph, "is_tree") == 1


def _subset(graph: Any, values: dict[Any, Any], nodes: Any) -> Any:
    """NetworkX's ``nodes`` argument: one node -> its value, an iterable -> a dict."""
    if nodes is None:
        return {v: values[v] for v in graph}
    if nodes in graph:
        return values[nodes]
    return {v: values[v] for v in graph.nbunch_iter(nodes)}


def triangles(G: Any, nodes: Any = None) -> Any:  # noqa: N803
    """Triangles through each node (or through ``nodes``)."""
    graph = _served(G, "triangles")
    return _subset(graph, _values(graph, "triangles", "triangles"), nodes)


def _clustering(graph: Any, weight: Any) -> dict[Any, float]:
    """NetworkX's local clustering of every node: from ``triangles`` (undirected, unweighted:
    the cheaper count) or from ``clustering`` (directed, or weighted by the ``weight``
    attribute: the geometric mean of weights divided by the largest)."""
    if len(graph) == 0:
        return {}
    weight = weight if has_weight(graph, weight) else None  # else every weight 1: unweighted
    if weight is None and not graph.is_directed():
        return _values(graph, "triangles", "clustering")
    session = current()
    stored = session.stored(graph, weight)
    if weight is not None and session.cached(graph, weight)[2] <= 0 \
            and heaviest(graph, weight) == 0:
        raise NotImplementedError("clustering: NetworkX divides by the largest weight, 0 here")
    job = session.run_on(stored, "clustering", weighted=weight is not None)
    return job.node_values("clustering")


def clustering(G: Any, nodes: Any = None, weight: str | None = None) -> Any:  # noqa: N803
    """Local clustering coefficient (directed: Fagiolo's; ``weight``: geometric mean)."""
    graph = _served(G, "clustering")
    return _subset(graph, _clustering(graph, weight), nodes)


def average_clustering(G: Any, nodes: Any = None, weight: str | None = None,  # noqa: N803
                       count_zeros: bool = True) -> float:
    """Mean local clustering over ``nodes`` (default all), zeros left out unless
    ``count_zeros``; summed in node order, as NetworkX sums."""
    graph = _served(G, "average_clustering")
    values = _clustering(graph, weight)
    chosen = [values[v] for v in (graph if nodes is None else graph.nbunch_iter(nodes))]
    if not count_zeros:
        chosen = [c for c in chosen if abs(c) > 0]
    return sum(chosen) / len(chosen)  # ZeroDivisionError on no nodes, as NetworkX


def transitivity(G: Any) -> float:  # noqa: N803
    """Global transitivity: 3 x triangles / connected triples (the job's summary)."""
    graph = _served(G, "transitivity")
    if len(graph) == 0:
        return 0
    return float(current().run(graph, "triangles").result(fields="summary")
                 .summary["transitivity"])
