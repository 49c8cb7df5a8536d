"""NetworkX backend ``graphgpu``: NetworkX calls answered by a running graphgpu service.

Registered through the ``networkx.backends`` entry point, so that::

    nx.pagerank(G, backend="graphgpu")            # or nx.config.backend_priority = ["graphgpu"]

uploads ``G`` to the service at ``$GRAPHGPU_URL`` (key ``$GRAPHGPU_API_KEY``) with the public SDK
(:class:`graphgpu.client.Client`), runs the job there (on a GPU worker when one is up), and
returns what NetworkX returns: dicts keyed by the original nodes, a generator of sets for
components, a list of sets for communities, a generator of ``(u, v, p)`` for Jaccard.

A graph is uploaded once per edge-weight attribute (:mod:`.nx_session`): the stored graph is
cached per NetworkX graph object (weakly) with a fingerprint of its nodes, edges and weights, and
uploaded again only when the graph changed; NetworkX's own conversion cache is not used, so it
prints no cache warning. The service stores graphs by content.

Only what the service can answer exactly (or as documented below) is taken; anything else raises
``NotImplementedError``, on which NetworkX falls back to its own code when
``nx.config.fallback_to_nx`` (``NETWORKX_FALLBACK_TO_NX=True``) is set: multigraphs (but for
``betweenness_centrality``, where NetworkX counts parallel edges by the lightest), graphs with
self-loops or without nodes, directed graphs where a function does not take them, and the
parameters listed per function. The functions served, by module: this one (centralities,
communities, similarity, independent sets, cores), :mod:`.nx_structure` (components, isolates,
trees, clustering) and :mod:`.nx_paths` (shortest path lengths, reachability); the README lists
them with the arguments they take.
Which functions are served depends on the algorithms the service offers (checked once per
process through its algorithm list).

Documented differences:

* ``maximal_independent_set``: a maximal independent set, but not NetworkX's random one (the
  service's ``mis`` of the graph less ``nodes`` and their neighbours; ``seed`` only seeds it).
* ``louvain_communities``: the service's deterministic Louvain (a partition of at least the same
  modularity on the SNAP graphs, not the same partition); ``threshold`` is ignored and
  ``max_level`` not supported.
* ``pagerank``: the service's power iteration with NetworkX's stopping rule; values agree to the
  tolerance, not to the last digit; ``nstart`` is not supported.
* ``strongly_connected_components`` (and the other component generators): the components come
  in the order of their smallest member (NetworkX's order follows its search), so code that
  relies on that order (``condensation``'s numbering) numbers them differently.
* ``leiden_communities``: the service's deterministic Leiden (NetworkX has no implementation of
  its own); ``max_level`` not supported.
* ``betweenness_centrality``: directed graphs and ``weight`` by attribute name (positive
  weights; missing ones count 1; zero or negative weights and weight functions fall back); the
  ``k`` sampled sources are drawn from ``seed`` exactly as NetworkX draws them, and equal path
  lengths are detected by the exact float comparison NetworkX makes, so the scores are
  NetworkX's (but for a weight lost in the rounding of a distance: the family's notes).
* ``clustering``, ``average_clustering`` with ``weight``: sums of cube roots of the scaled
  weights (``diag(S^3)``, the ``triangles`` family's notes) where NetworkX sums cube roots of
  each triangle's product, so the values agree to rounding (unweighted ones, directed or not,
  are NetworkX's bit for bit).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from functools import wraps
from typing import Any

from graphgpu.client import nx_paths, nx_session, nx_structure
from graphgpu.client.models import Graph as StoredGraph
from graphgpu.client.nx_session import (
    BACKEND_NAME,
    ServiceGraph,
    current,
    has_weight,
    served_graph,
)

__all__ = ["BACKEND_NAME", "FUNCTIONS", "ServiceGraph", "backend_info", "backend_interface",
           "reset", "uploaded"]

#: NetworkX functions of this module -> (service algorithm, whether directed graphs are taken).
SERVED: dict[str, tuple[str, bool]] = {
    "closeness_centrality": ("closeness", False),
    "maximal_independent_set": ("mis", False),
    "betweenness_centrality": ("betweenness_centrality", True),
    "louvain_communities": ("louvain", False),
    "leiden_communities": ("leiden", False),
    "jaccard_coefficient": ("jaccard", False),
    "pagerank": ("pagerank", True),
    "core_number": ("core_number", False),
}
#: The functions of this module served on multigraphs: betweenness follows each neighbour once,
#: weighted by the lightest parallel edge, as NetworkX's does (and as a multigraph is uploaded).
MULTIGRAPHS = frozenset({"betweenness_centrality"})
#: Every served NetworkX function -> the service algorithm it runs (a function is offered when
#: the service lists that algorithm).
FUNCTIONS: dict[str, str] = {name: algorithm for table in (SERVED, nx_structure.SERVED,
                                                          nx_paths.SERVED)
                             for name, (algorithm, _) in table.items()}
#: The served functions that take directed graphs.
DIRECTED = frozenset(name for table in (SERVED, nx_structure.SERVED, nx_paths.SERVED)
                     for name, (_, directed) in table.items() if directed)


def reset() -> None:
    """Forget the connection, the algorithm list and the uploads (after changing
    ``GRAPHGPU_URL`` or ``GRAPHGPU_API_KEY``: the next call connects again)."""
    nx_session.reset()


def uploaded(G: Any, weight: str | None = None) -> StoredGraph | None:  # noqa: N803
    """The stored graph cached for ``G`` (and ``weight``), or None before its first upload."""
    cached = current().cached(G, weight)
    return None if cached is None else cached[1]


def _graph(G: Any, name: str) -> Any:  # noqa: N803
    return served_graph(G, name, SERVED, MULTIGRAPHS)


def _in_order(G: Any, values: dict[Any, Any]) -> dict[Any, Any]:  # noqa: N803
    """``values`` in the graph's node order, as NetworkX builds its dicts."""
    return {v: values[v] for v in G}


def _ids(stored: StoredGraph, nodes: Iterable[Any]) -> list[Any]:
    """Service ids of nodes (the SDK maps node parameters, but not dict keys)."""
    if stored.labels is None:
        return list(nodes)
    index = {v: i for i, v in enumerate(stored.labels)}
    return [index[v] for v in nodes]


def _communities(graph: Any, algorithm: str, weight: str | None, resolution: float,
                 seed: Any) -> list[set[Any]]:
    salt = seed.randrange(2**31) if hasattr(seed, "randrange") else 0
    job = current().run(graph, algorithm, weight if has_weight(graph, weight) else None,
                        resolution=float(resolution), seed=salt)
    groups: dict[int, set[Any]] = {}
    for node, community in job.node_values("community").items():
        groups.setdefault(community, set()).add(node)
    return [groups[c] for c in sorted(groups)]


def closeness_centrality(G: Any, u: Any = None, distance: Any = None,  # noqa: N803
                         wf_improved: bool = True) -> Any:
    """Closeness (hops, Wasserman-Faust improved); ``distance`` and ``wf_improved=False`` are
    not served."""
    graph = _graph(G, "closeness_centrality")
    if distance is not None or not wf_improved:
        raise NotImplementedError("closeness_centrality: hop distances with wf_improved only")
    values = current().run(graph, "closeness").node_values("closeness")
    return values[u] if u is not None else _in_order(graph, values)


def maximal_independent_set(G: Any, nodes: Any = None, seed: Any = None) -> list[Any]:  # noqa: N803
    """A maximal independent set (the service's ``mis``; not NetworkX's random one) containing
    ``nodes``: those, then a maximal independent set of the rest of the graph (the nodes neither
    in ``nodes`` nor next to one), which the service computes."""
    import networkx as nx

    graph = _graph(G, "maximal_independent_set")
    chosen = set(nodes or ())
    if not chosen.issubset(graph):
        raise nx.NetworkXUnfeasible(f"{chosen} is not a subset of the nodes of G")
    neighbours = set().union(*(graph._adj[v] for v in chosen))
    if neighbours & chosen:
        raise nx.NetworkXUnfeasible(f"{chosen} is not an independent set of G")
    rest = graph.subgraph(v for v in graph if v not in chosen and v not in neighbours).copy() \
        if chosen else graph
    if len(rest) == 0:
        return list(chosen)
    params = {"seed": seed.randrange(2**31)} if hasattr(seed, "randrange") else {}
    in_set = current().run(rest, "mis", **params).node_values("in_set")
    return [*chosen, *(v for v in rest if in_set[v])]


def betweenness_centrality(G: Any, k: int | None = None, normalized: bool = True,  # noqa: N803
                           weight: str | None = None, endpoints: bool = False,
                           seed: Any = None) -> dict[Any, float]:
    """Betweenness (hops, or the positive ``weight`` of each edge; directed graphs by
    out-edges), NetworkX's rescaling; ``k`` sources drawn as NetworkX draws them."""
    import random

    graph = _graph(G, "betweenness_centrality")
    if callable(weight):
        raise NotImplementedError("betweenness_centrality: weights by attribute name only")
    params: dict[str, Any] = {"normalized": bool(normalized), "endpoints": bool(endpoints)}
    if k is not None and k != len(graph):
        rng = seed if hasattr(seed, "sample") else random.Random(seed)
        params["sources"] = rng.sample(list(graph), k)  # NetworkX's own draw, same order
        if not params["sources"]:
            raise ZeroDivisionError("k=0 sampled sources: NetworkX divides by k")
    weight = weight if has_weight(graph, weight) else None  # else every edge counts 1
    session = current()
    stored = session.stored(graph, weight, nonnegative=True)
    if weight is not None and session.cached(graph, weight)[2] <= 0:
        raise NotImplementedError("betweenness_centrality: graphgpu takes positive weights")
    job = session.run_on(stored, "betweenness_centrality", **params)
    return _in_order(graph, job.node_values("betweenness"))


def louvain_communities(G: Any, weight: str | None = "weight", resolution: float = 1,  # noqa: N803
                        threshold: float = 1e-07, max_level: int | None = None,
                        seed: Any = None) -> list[set[Any]]:
    """Communities of the service's Louvain (deterministic; ``seed`` salts its order)."""
    graph = _graph(G, "louvain_communities")
    if max_level is not None or resolution <= 0:
        raise NotImplementedError("louvain_communities: max_level and resolution <= 0 are not "
                                  "served")
    return _communities(graph, "louvain", weight, resolution, seed)


def leiden_communities(G: Any, weight: str | None = "weight", resolution: float = 1,  # noqa: N803
                       max_level: int | None = None, seed: Any = None) -> list[set[Any]]:
    """Communities of the service's Leiden (deterministic; ``seed`` salts its order)."""
    graph = _graph(G, "leiden_communities")
    if max_level is not None or resolution <= 0:
        raise NotImplementedError("leiden_communities: max_level and resolution <= 0 are not "
                                  "served")
    return _communities(graph, "leiden", weight, resolution, seed)


def jaccard_coefficient(G: Any, ebunch: Any = None) -> Iterator[tuple[Any, Any, float]]:  # noqa: N803
    """``(u, v, p)`` for each pair of ``ebunch`` (default: every non-edge), in that order."""
    import networkx as nx

    graph = _graph(G, "jaccard_coefficient")
    if ebunch is None:
        pairs = list(nx.non_edges(graph))
    else:
        pairs = [(u, v) for u, v in ebunch]
        for u, v in pairs:
            for node in (u, v):
                if node not in graph:
                    raise nx.NodeNotFound(f"Node {node} not in G.")
    if not pairs:
        return iter(())
    job = current().run(graph, "jaccard", pairs=[[u, v] for u, v in pairs])
    values = job.array("jaccard").tolist()
    return ((u, v, p) for (u, v), p in zip(pairs, values, strict=True))


def pagerank(G: Any, alpha: float = 0.85, personalization: Any = None,  # noqa: N803
             max_iter: int = 100, tol: float = 1e-06, nstart: Any = None,
             weight: str | None = "weight", dangling: Any = None) -> dict[Any, float]:
    """PageRank by the service's power iteration (NetworkX's stopping rule)."""
    import networkx as nx

    graph = _graph(G, "pagerank")
    if len(graph) == 0:
        return {}
    if nstart is not None:
        raise NotImplementedError("pagerank: nstart is not supported")
    if max_iter < 1:  # NetworkX runs no iteration, so it has not converged
        raise nx.PowerIterationFailedConvergence(max_iter)
    weighted = has_weight(graph, weight)
    stored = current().stored(graph, weight if weighted else None)
    # NetworkX stops below n * tol; the service's tol is the L1 change itself.
    params: dict[str, Any] = {"alpha": alpha, "max_iter": max_iter,
                              "tol": tol * graph.number_of_nodes(), "weighted": weighted}
    if personalization is not None and sum(personalization.get(v, 0) for v in graph) == 0:
        raise ZeroDivisionError("the personalization vector is zero")  # as NetworkX
    for name, mapping in (("personalization", personalization), ("dangling", dangling)):
        if mapping is not None:
            known = {v: x for v, x in mapping.items() if v in graph}
            params[name] = dict(zip(_ids(stored, known), known.values(), strict=True))
    job = current().run_on(stored, "pagerank", **params)
    if not job.result(fields="summary").summary.get("converged", True):
        raise nx.PowerIterationFailedConvergence(max_iter)
    return _in_order(graph, job.node_values("pagerank"))


def core_number(G: Any) -> dict[Any, int]:  # noqa: N803
    """Core number of each node."""
    import networkx as nx

    graph = _graph(G, "core_number")
    if len(graph) == 0:
        return {}
    if any(map(operator.contains, graph._adj.values(), graph._adj)):  # u in adj[u]: a loop
        raise nx.NetworkXNotImplemented(
            "Input graph has self loops which is not permitted; "
            "Consider using G.remove_edges_from(nx.selfloop_edges(G)).")
    return _in_order(graph, current().run(graph, "core_number").node_values("core_number"))



def _counted(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, counting in the session its calls and those that fall back to NetworkX."""
    @wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        current().calls += 1
        try:
            return function(*args, **kwargs)
        except NotImplementedError:
            current().fallbacks += 1
            raise
    return call


class BackendInterface:
    """What the ``networkx.backends`` entry point names: conversions and the served functions."""

    def __init__(self, functions: dict[str, Callable[..., Any]]) -> None:
        for name, function in functions.items():
            setattr(self, name, _counted(function))

    @staticmethod
    def convert_from_nx(G: Any, edge_attrs: Any = None, node_attrs: Any = None,  # noqa: N803
                        preserve_edge_attrs: bool = False, preserve_node_attrs: bool = False,
                        preserve_graph_attrs: bool = False, name: str | None = None,
                        graph_name: str | None = None) -> ServiceGraph:
        """Wrap the graph; it is uploaded when a function first needs it."""
        return ServiceGraph(G)

    @staticmethod
    def convert_to_nx(obj: Any, *, name: str | None = None) -> Any:
        """Results are NetworkX objects already; a wrapped graph gives back its graph."""
        return obj.G if isinstance(obj, ServiceGraph) else obj

    @staticmethod
    def can_run(name: str, args: Any, kwargs: Any) -> bool | str:
        """Whether the service offers the algorithm behind ``name`` (asked once per process)."""
        if name not in FUNCTIONS:
            return f"graphgpu does not serve {name}"
        try:
            available = current().algorithms()
        except Exception as exc:  # the service is down: NetworkX may run it instead
            return f"the graphgpu service is unreachable ({exc})"
        return FUNCTIONS[name] in available or f"the service has no {FUNCTIONS[name]!r}"

    @staticmethod
    def should_run(name: str, args: Any, kwargs: Any) -> bool:
        return True


def _function(name: str) -> Callable[..., Any]:
    for module in (nx_structure, nx_paths):
        if name in module.SERVED:
            return getattr(module, name)
    return globals()[name]


backend_interface = BackendInterface({name: _function(name) for name in FUNCTIONS})


def backend_info() -> dict[str, Any]:
    """The ``networkx.backend_info`` entry point: name, summary and functions served."""
    return {
        "backend_name": BACKEND_NAME,
        "project": "graphgpu",
        "package": "graphgpu",
        "short_summary": "Runs NetworkX calls on a graphgpu service (GPU workers).",
        "functions": {name: {"additional_docs": f"Runs the service's {algo!r} algorithm."}
                      for name, algo in FUNCTIONS.items()},
        # True: fingerprint every graph on every call (catches graphs changed by hand).
        "default_config": {"verify_cache": False},
    }
