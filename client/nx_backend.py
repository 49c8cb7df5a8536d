"""NetworkX backend ``graphgpu``: NetworkX calls answered by a running graphgpu service.

Registered through the ``networkx.backends`` entry point, so that::

    nx.pagerank(G, backend="graphgpu")            # or nx.config.backend_priority = ["graphgpu"]

uploads ``G`` to the service at ``$GRAPHGPU_URL`` (key ``$GRAPHGPU_API_KEY``) with the public SDK
(:class:`graphgpu.client.Client`), runs the job there (on a GPU worker when one is up), and
returns what NetworkX returns: dicts keyed by the original nodes, a generator of sets for
components, a list of sets for communities, a generator of ``(u, v, p)`` for Jaccard.

A graph is uploaded once per edge-weight attribute: the stored graph is cached per NetworkX graph
object (weakly, so it goes with the graph) together with a fingerprint of its nodes and edges, and
uploaded again only when the graph changed. The service stores graphs by content, so the same
graph from two processes is stored once.

Only what the service can answer exactly (or as documented below) is taken; anything else raises
``NotImplementedError``, on which NetworkX falls back to its own code when
``nx.config.fallback_to_nx`` (``NETWORKX_FALLBACK_TO_NX=True``) is set: multigraphs, graphs
with self-loops or without nodes, directed graphs except for PageRank and strongly connected
components, and the parameters listed per function.
Which functions are served depends on the algorithms the service offers (checked once per
process through its algorithm list).

Documented differences:

* ``maximal_independent_set``: a maximal independent set, but not NetworkX's random one (the
  service's ``mis``; ``seed`` only seeds it); ``nodes`` is not supported.
* ``louvain_communities``: the service's deterministic Louvain (a partition of at least the same
  modularity on the SNAP graphs, not the same partition); ``threshold`` is ignored and
  ``max_level`` not supported.
* ``pagerank``: the service's power iteration with NetworkX's stopping rule; values agree to the
  tolerance, not to the last digit; ``nstart`` is not supported.
* ``strongly_connected_components`` (and ``connected_components``): the components come in
  the order of their smallest member (NetworkX's order follows its search), so code that relies
  on that order (``condensation``'s numbering) numbers them differently.
* ``betweenness_centrality``: hop distances only (``weight`` not supported); the ``k`` sampled
  sources are drawn from ``seed`` exactly as NetworkX draws them, so the scores are NetworkX's.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from graphgpu.client.models import Graph as StoredGraph
from graphgpu.client.models import Job
from graphgpu.client.sdk import Client

BACKEND_NAME = "graphgpu"

#: NetworkX function -> the service algorithm it runs (a function is offered when the service
#: lists that algorithm).
FUNCTIONS: dict[str, str] = {
    "connected_components": "connected_components",
    "number_connected_components": "connected_components",
    "single_source_shortest_path_length": "bfs",
    "closeness_centrality": "closeness",
    "maximal_independent_set": "mis",
    "betweenness_centrality": "betweenness_centrality",
    "louvain_communities": "louvain",
    "jaccard_coefficient": "jaccard",
    "pagerank": "pagerank",
    "core_number": "core_number",
    "triangles": "triangles",
    "clustering": "triangles",
    "strongly_connected_components": "strongly_connected_components",
    "number_strongly_connected_components": "strongly_connected_components",
}
#: Functions that take directed graphs (uploaded directed; the others refuse them).
DIRECTED = frozenset({"pagerank", "strongly_connected_components",
                      "number_strongly_connected_components"})


class ServiceGraph:
    """A NetworkX graph on its way to the service (what ``convert_from_nx`` returns).

    Attributes
    ----------
    G : networkx.Graph
        The original graph; results are keyed by its nodes.
    """

    __networkx_backend__ = BACKEND_NAME

    def __init__(self, G: Any) -> None:  # noqa: N803
        self.G = G

    def is_directed(self) -> bool:
        return self.G.is_directed()

    def is_multigraph(self) -> bool:
        return self.G.is_multigraph()

    def __len__(self) -> int:
        return len(self.G)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.G)

    def __contains__(self, node: object) -> bool:
        return node in self.G


class _Session:
    """The process's connection, the service's algorithm names and the upload cache."""

    def __init__(self) -> None:
        self._client: Client | None = None
        self._algorithms: set[str] | None = None
        self._uploads: weakref.WeakKeyDictionary[Any, dict[Any, tuple[int, StoredGraph]]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def client(self) -> Client:
        if self._client is None:
            self._client = Client(timeout=None)
        return self._client

    def algorithms(self) -> set[str]:
        if self._algorithms is None:
            self._algorithms = {a["name"] for a in self.client().algorithms()}
        return self._algorithms

    def cached(self, G: Any, weight: str | None) -> tuple[int, StoredGraph] | None:  # noqa: N803
        with self._lock:
            return self._uploads.get(G, {}).get(weight)

    def stored(self, G: Any, weight: str | None) -> StoredGraph:  # noqa: N803
        """The stored graph of ``G`` weighted by ``weight`` (None: unweighted), uploaded once."""
        edges = list(G.edges(data=weight, default=1)) if weight is not None else list(G.edges)
        fingerprint = hash((tuple(G), tuple(edges)))
        cached = self.cached(G, weight)
        if cached is not None and cached[0] == fingerprint:
            return cached[1]
        import networkx as nx

        plain = nx.DiGraph() if G.is_directed() else nx.Graph()
        plain.add_nodes_from(G)
        if weight is None:
            plain.add_edges_from(edges)
        else:
            plain.add_weighted_edges_from(edges)
        stored = self.client().upload_networkx(plain, directed=G.is_directed())
        with self._lock:
            self._uploads.setdefault(G, {})[weight] = (fingerprint, stored)
        return stored

    def run(self, G: Any, algorithm: str, weight: str | None = None,  # noqa: N803
            **params: Any) -> Job:
        """Run ``algorithm`` on ``G`` and wait for it (raises the SDK's JobFailed on failure)."""
        return self.client().run(self.stored(G, weight), algorithm, **params).wait(
            progress=False)


_session = _Session()


def reset() -> None:
    """Forget the connection, the algorithm list and the uploads (after changing
    ``GRAPHGPU_URL`` or ``GRAPHGPU_API_KEY``: the next call connects again)."""
    global _session
    _session = _Session()


def uploaded(G: Any, weight: str | None = None) -> StoredGraph | None:  # noqa: N803
    """The stored graph cached for ``G`` (and ``weight``), or None before its first upload."""
    cached = _session.cached(G, weight)
    return None if cached is None else cached[1]


def _graph(G: Any, name: str) -> Any:  # noqa: N803
    """The NetworkX graph behind ``G``, or NotImplementedError when the service cannot take it."""
    import networkx as nx

    graph = G.G if isinstance(G, ServiceGraph) else G
    if graph.is_multigraph() or (graph.is_directed() and name not in DIRECTED):
        raise NotImplementedError(f"{name}: graphgpu serves simple graphs, directed ones only "
                                  f"to {', '.join(sorted(DIRECTED))}")
    if len(graph) == 0:
        raise NotImplementedError(f"{name}: graphgpu stores no graph without nodes")
    if nx.number_of_selfloops(graph):
        raise NotImplementedError(f"{name}: graphgpu drops self-loops, so it does not take them")
    if FUNCTIONS[name] not in _session.algorithms():
        raise NotImplementedError(f"{name}: the service has no {FUNCTIONS[name]!r} algorithm")
    return graph


def _in_order(G: Any, values: dict[Any, Any]) -> dict[Any, Any]:  # noqa: N803
    """``values`` in the graph's node order, as NetworkX builds its dicts."""
    return {v: values[v] for v in G}


def _ids(stored: StoredGraph, nodes: Iterable[Any]) -> list[Any]:
    """Service ids of nodes (the SDK maps node parameters, but not dict keys)."""
    if stored.labels is None:
        return list(nodes)
    index = {v: i for i, v in enumerate(stored.labels)}
    return [index[v] for v in nodes]


def _component_sets(G: Any, name: str, field: str) -> Iterator[set[Any]]:  # noqa: N803
    """The node sets of the components that NetworkX function ``name`` asks for (labels in
    ``field`` of its algorithm's result), in the order of the service's numbering."""
    graph = _graph(G, name)
    labels = _session.run(graph, FUNCTIONS[name]).node_values(field)
    groups: dict[int, set[Any]] = {}
    for node in graph:
        groups.setdefault(labels[node], set()).add(node)
    return (groups[c] for c in sorted(groups))


def _component_count(G: Any, name: str) -> int:  # noqa: N803
    """The component count that NetworkX function ``name`` asks for (its job's summary)."""
    job = _session.run(_graph(G, name), FUNCTIONS[name])
    return int(job.result(fields="summary").summary["count"])


def connected_components(G: Any) -> Iterator[set[Any]]:  # noqa: N803
    """Generator of the node sets of the connected components, in the order of their smallest
    node id (the service's numbering; NetworkX's follows its search)."""
    return _component_sets(G, "connected_components", "label")


def number_connected_components(G: Any) -> int:  # noqa: N803
    """Number of connected components (the job's summary)."""
    return _component_count(G, "number_connected_components")


def strongly_connected_components(G: Any) -> Iterator[set[Any]]:  # noqa: N803
    """Generator of the node sets of the strongly connected components of a directed graph."""
    return _component_sets(G, "strongly_connected_components", "component")


def number_strongly_connected_components(G: Any) -> int:  # noqa: N803
    """Number of strongly connected components (the job's summary)."""
    return _component_count(G, "number_strongly_connected_components")


def single_source_shortest_path_length(G: Any, source: Any,  # noqa: N803
                                       cutoff: int | None = None) -> dict[Any, int]:
    """Hop distance from ``source`` to each node it reaches (within ``cutoff``), in BFS order."""
    import networkx as nx

    graph = _graph(G, "single_source_shortest_path_length")
    if source not in graph:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    levels = _session.run(graph, "bfs", source=source).node_values("level")
    limit = math.inf if cutoff is None else cutoff
    reached = [(d, i, v) for i, (v, d) in enumerate(_in_order(graph, levels).items())
               if 0 <= d <= limit]
    return {v: d for d, _, v in sorted(reached, key=lambda t: t[:2])}


def closeness_centrality(G: Any, u: Any = None, distance: Any = None,  # noqa: N803
                         wf_improved: bool = True) -> Any:
    """Closeness (hops, Wasserman-Faust improved); ``distance`` and ``wf_improved=False`` are
    not served."""
    graph = _graph(G, "closeness_centrality")
    if distance is not None or not wf_improved:
        raise NotImplementedError("closeness_centrality: hop distances with wf_improved only")
    values = _session.run(graph, "closeness").node_values("closeness")
    return values[u] if u is not None else _in_order(graph, values)


def maximal_independent_set(G: Any, nodes: Any = None, seed: Any = None) -> list[Any]:  # noqa: N803
    """A maximal independent set (the service's ``mis``; not NetworkX's random one)."""
    graph = _graph(G, "maximal_independent_set")
    if nodes is not None:
        raise NotImplementedError("maximal_independent_set: nodes is not supported")
    params = {"seed": seed.randrange(2**31)} if hasattr(seed, "randrange") else {}
    in_set = _session.run(graph, "mis", **params).node_values("in_set")
    return [v for v in graph if in_set[v]]


def betweenness_centrality(G: Any, k: int | None = None, normalized: bool = True,  # noqa: N803
                           weight: str | None = None, endpoints: bool = False,
                           seed: Any = None) -> dict[Any, float]:
    """Betweenness (hops), NetworkX's rescaling; ``k`` sources drawn as NetworkX draws them."""
    import random

    graph = _graph(G, "betweenness_centrality")
    if weight is not None:
        raise NotImplementedError("betweenness_centrality: weighted paths are not served")
    params: dict[str, Any] = {"normalized": bool(normalized), "endpoints": bool(endpoints)}
    if k is not None and k != len(graph):
        rng = seed if hasattr(seed, "sample") else random.Random(seed)
        params["sources"] = rng.sample(list(graph), k)  # NetworkX's own draw, same order
        if not params["sources"]:
            raise ZeroDivisionError("k=0 sampled sources: NetworkX divides by k")
    values = _session.run(graph, "betweenness_centrality", **params).node_values("betweenness")
    return _in_order(graph, values)


def louvain_communities(G: Any, weight: str | None = "weight", resolution: float = 1,  # noqa: N803
                        threshold: float = 1e-07, max_level: int | None = None,
                        seed: Any = None) -> list[set[Any]]:
    """Communities of the service's Louvain (deterministic; ``seed`` salts its order)."""
    graph = _graph(G, "louvain_communities")
    if max_level is not None or resolution <= 0:
        raise NotImplementedError("louvain_communities: max_level and resolution <= 0 are not "
                                  "served")
    salt = seed.randrange(2**31) if hasattr(seed, "randrange") else 0
    has_weight = weight is not None and any(weight in d for _, _, d in graph.edges(data=True))
    job = _session.run(graph, "louvain", weight if has_weight else None,
                       resolution=float(resolution), seed=salt)
    community = job.node_values("community")
    groups: dict[int, set[Any]] = {}
    for node in graph:
        groups.setdefault(community[node], set()).add(node)
    return [groups[c] for c in sorted(groups)]


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
    job = _session.run(graph, "jaccard", pairs=[[u, v] for u, v in pairs])
    values = job.array("jaccard").tolist()
    return ((u, v, p) for (u, v), p in zip(pairs, values, strict=True))


def pagerank(G: Any, alpha: float = 0.85, personalization: Any = None,  # noqa: N803
             max_iter: int = 100, tol: float = 1e-06, nstart: Any = None,
             weight: str | None = "weight", dangling: Any = None) -> dict[Any, float]:
    """PageRank by the service's power iteration (NetworkX's stopping rule)."""
    import networkx as nx

    graph = _graph(G, "pagerank")
    if nstart is not None:
        raise NotImplementedError("pagerank: nstart is not supported")
    if max_iter < 1:  # NetworkX runs no iteration, so it has not converged
        raise nx.PowerIterationFailedConvergence(max_iter)
    has_weight = weight is not None and any(weight in d for _, _, d in graph.edges(data=True))
    stored = _session.stored(graph, weight if has_weight else None)
    # NetworkX stops below n * tol; the service's tol is the L1 change itself.
    params: dict[str, Any] = {"alpha": alpha, "max_iter": max_iter,
                              "tol": tol * graph.number_of_nodes(), "weighted": has_weight}
    if personalization is not None and sum(personalization.get(v, 0) for v in graph) == 0:
        raise ZeroDivisionError("the personalization vector is zero")  # as NetworkX
    for name, mapping in (("personalization", personalization), ("dangling", dangling)):
        if mapping is not None:
            known = {v: x for v, x in mapping.items() if v in graph}
            params[name] = dict(zip(_ids(stored, known), known.values(), strict=True))
    job = _session.client().run(stored, "pagerank", **params).wait(progress=False)
    if not job.result(fields="summary").summary.get("converged", True):
        raise nx.PowerIterationFailedConvergence(max_iter)
    return _in_order(graph, job.node_values("pagerank"))


def core_number(G: Any) -> dict[Any, int]:  # noqa: N803
    """Core number of each node."""
    graph = _graph(G, "core_number")
    return _in_order(graph, _session.run(graph, "core_number").node_values("core_number"))


def _subset(graph: Any, values: dict[Any, Any], nodes: Any) -> Any:
    """NetworkX's ``nodes`` argument: one node -> its value, an iterable -> a dict."""
    if nodes is None:
        return _in_order(graph, values)
    if nodes in graph:
        return values[nodes]
    return {v: values[v] for v in graph.nbunch_iter(nodes)}


def triangles(G: Any, nodes: Any = None) -> Any:  # noqa: N803
    """Triangles through each node (or through ``nodes``)."""
    graph = _graph(G, "triangles")
    return _subset(graph, _session.run(graph, "triangles").node_values("triangles"), nodes)


def clustering(G: Any, nodes: Any = None, weight: str | None = None) -> Any:  # noqa: N803
    """Local clustering coefficient (unweighted; ``weight`` is not served)."""
    graph = _graph(G, "clustering")
    if weight is not None:
        raise NotImplementedError("clustering: the weighted coefficient is not served")
    return _subset(graph, _session.run(graph, "triangles").node_values("clustering"), nodes)


class BackendInterface:
    """What the ``networkx.backends`` entry point names: conversions and the served functions."""

    def __init__(self, functions: dict[str, Callable[..., Any]]) -> None:
        for name, function in functions.items():
            setattr(self, name, function)

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
            available = _session.algorithms()
        except Exception as exc:  # the service is down: NetworkX may run it instead
            return f"the graphgpu service is unreachable ({exc})"
        return FUNCTIONS[name] in available or f"the service has no {FUNCTIONS[name]!r}"

    @staticmethod
    def should_run(name: str, args: Any, kwargs: Any) -> bool:
        return True


backend_interface = BackendInterface({name: globals()[name] for name in FUNCTIONS})


def backend_info() -> dict[str, Any]:
    """The ``networkx.backend_info`` entry point: name, summary and functions served."""
    return {
        "backend_name": BACKEND_NAME,
        "project": "graphgpu",
        "package": "graphgpu",
        "short_summary": "Runs NetworkX calls on a graphgpu service (GPU workers).",
        "functions": {name: {"additional_docs": f"Runs the service's {algo!r} algorithm."}
                      for name, algo in FUNCTIONS.items()},
        "default_config": {},
    }
