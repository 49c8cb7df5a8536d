"""The NetworkX backend's connection, its upload cache and the checks every served call makes.

A NetworkX graph is uploaded once per edge-weight attribute and cached per graph object (weakly)
with a fingerprint of its nodes, arcs and weights. The arcs and weights are read into NumPy
arrays by C-level iteration over the adjacency dicts (no Python loop per edge) and fingerprinted
by hashing those arrays. A call on a graph whose ``G.__networkx_cache__`` still holds the upload's
fingerprint reuses the stored graph at once: NetworkX empties that dict whenever the graph changes
through its methods (``add_edge``, ``remove_node``, ...), as its own conversion cache relies on.
Graphs changed by hand (``G[u][v]["weight"] = x``) need ``G.__networkx_cache__.clear()``, or
``nx.config.backends.graphgpu.verify_cache = True``, which fingerprints the graph on every call.
"""

from __future__ import annotations

import atexit
import gzip
import hashlib
import threading
import weakref
from dataclasses import dataclass, replace
from itertools import chain, repeat
from typing import Any

import numpy as np

from graphgpu.client import edgetext
from graphgpu.client.models import Graph as StoredGraph
from graphgpu.client.models import Job
from graphgpu.client.sdk import Client

BACKEND_NAME = "graphgpu"


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

    def __iter__(self) -> Any:
        return iter(self.G)

    def __contains__(self, node: object) -> bool:
        return node in self.G


@dataclass(frozen=True)
class Arcs:
    """A graph's arcs as arrays over node positions (``list(G)`` order).

    ``src``/``dst`` hold every arc of the adjacency (an undirected edge twice), ``weights`` the
    ``weight`` attribute of each (1 where missing) or None unweighted.
    """

    nodes: tuple[Any, ...]
    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None

    def fingerprint(self) -> str:
        digest = hashlib.blake2b(digest_size=16)
        digest.update(str(hash(self.nodes)).encode())
        for array in (self.src, self.dst, self.weights):
            if array is not None:
                digest.update(array.tobytes())
        return digest.hexdigest()


def read_arcs(G: Any, weight: str | None) -> Arcs:  # noqa: N803
    """The arcs of ``G`` (and their ``weight`` values) by C-level iteration; a multigraph's
    parallel edges are one arc, weighted by the lightest.

    Raises
    ------
    NotImplementedError
        A weight that is not a number (NetworkX then runs the call itself).
    """
    adj = G._adj  # the adjacency dicts NetworkX's own algorithms read (G.adj wraps them)
    nodes = tuple(adj)
    n = len(nodes)
    degree = np.fromiter(map(len, adj.values()), np.int64, n)
    arcs = int(degree.sum())
    index = {v: i for i, v in enumerate(nodes)}
    src = np.repeat(np.arange(n, dtype=np.int64), degree)
    dst = np.fromiter(map(index.__getitem__, chain.from_iterable(adj.values())), np.int64, arcs)
    weights = None
    if weight is not None:
        data = chain.from_iterable(map(dict.values, adj.values()))
        if G.is_multigraph():  # parallel edges: the lightest one, as NetworkX's shortest paths
            data = ({weight: min(d.get(weight, 1) for d in keyed.values())} for keyed in data)
        try:
            weights = np.fromiter(map(dict.get, data, repeat(weight), repeat(1)),
                                  np.float64, arcs)
        except (TypeError, ValueError):
            raise NotImplementedError(f"graphgpu takes numeric {weight!r} weights only") from None
        if not np.isfinite(weights).all():
            raise NotImplementedError("graphgpu takes finite weights only")
    return Arcs(nodes, src, dst, weights)


#: Key of the upload fingerprints in ``G.__networkx_cache__``.
TOKENS = "graphgpu_uploads"


def _tokens(G: Any) -> dict[Any, str]:  # noqa: N803
    """The fingerprints of ``G``'s uploads by weight, kept in ``G.__networkx_cache__`` (which
    NetworkX empties when the graph changes); a scratch dict where the graph has no cache."""
    cache = getattr(G, "__networkx_cache__", None)
    return {} if cache is None else cache.setdefault(TOKENS, {})


def verify_cache() -> bool:
    """``nx.config.backends.graphgpu.verify_cache``: fingerprint graphs on every call."""
    import networkx as nx

    config = getattr(nx.config, "backends", None)
    return bool(getattr(getattr(config, BACKEND_NAME, None), "verify_cache", False))


def json_body(columns: list[np.ndarray], n: int) -> bytes:
    """The JSON upload ``{"edges": [[u, v(, w)], ...], "nodes": [0..n-1]}`` (gzip'd), its rows
    made by :func:`graphgpu.client.edgetext.edge_text` (NumPy) and two byte replacements."""
    text = b"".join(edgetext.edge_text(columns)) if columns[0].size else b""
    rows = text.rstrip(b"\n").replace(b" ", b",").replace(b"\n", b"],[")
    edges = b"[[" + rows + b"]]" if rows else b"[]"
    nodes = ",".join(map(str, range(n))).encode()
    return gzip.compress(b'{"edges":' + edges + b',"nodes":[' + nodes + b"]}", compresslevel=1)


class Session:
    """The process's connection, the service's algorithm names and the upload cache.

    ``calls`` counts the served calls, ``jobs`` the jobs they ran and ``fallbacks`` the calls
    that raised ``NotImplementedError`` (NetworkX then ran its own code); ``bench/nx_suite.py``
    reads them.
    """

    def __init__(self) -> None:
        self._client: Client | None = None
        self._algorithms: set[str] | None = None
        self._uploads: weakref.WeakKeyDictionary[
            Any, dict[Any, tuple[str, StoredGraph, float]]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.calls = 0
        self.jobs = 0
        self.fallbacks = 0

    def client(self) -> Client:
        if self._client is None:
            self._client = Client(timeout=None)
        return self._client

    def close(self) -> None:
        """Close the connection (the next call opens a new one)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def algorithms(self) -> set[str]:
        if self._algorithms is None:
            self._algorithms = {a["name"] for a in self.client().algorithms()}
        return self._algorithms

    def cached(self, G: Any, weight: str | None  # noqa: N803
               ) -> tuple[str, StoredGraph, float] | None:
        """``(fingerprint, stored graph, lightest weight)`` of ``G``'s last upload, or None."""
        with self._lock:
            return self._uploads.get(G, {}).get(weight)

    def stored(self, G: Any, weight: str | None,  # noqa: N803
               nonnegative: bool = False) -> StoredGraph:
        """The stored graph of ``G`` weighted by ``weight`` (None: unweighted), uploaded once.

        Raises
        ------
        NotImplementedError
            No nodes (the service stores no such graph), self-loops (the service drops them),
            non-numeric weights, or with ``nonnegative`` a negative weight.
        """
        if len(G) == 0:
            raise NotImplementedError("graphgpu stores no graph without nodes")
        cached = self.cached(G, weight)
        if cached is not None and not verify_cache() and _tokens(G).get(weight) == cached[0]:
            if nonnegative and cached[2] < 0:
                raise NotImplementedError("graphgpu's shortest paths take non-negative weights")
            return cached[1]  # unchanged since its upload (NetworkX would have cleared the token)
        arcs = read_arcs(G, weight)
        if (arcs.src == arcs.dst).any():
            raise NotImplementedError("graphgpu drops self-loops, so it does not take them")
        if nonnegative and arcs.weights is not None and (arcs.weights < 0).any():
            raise NotImplementedError("graphgpu's shortest paths take non-negative weights")
        fingerprint = arcs.fingerprint()
        cached = self.cached(G, weight)
        if cached is not None and cached[0] == fingerprint:
            _tokens(G)[weight] = fingerprint
            return cached[1]
        directed = G.is_directed()
        keep = slice(None) if directed else arcs.src < arcs.dst  # an edge once
        columns = [arcs.src[keep], arcs.dst[keep]]
        if arcs.weights is not None:
            columns.append(arcs.weights[keep])
        stored = self.client().upload(json_body(columns, len(arcs.nodes)), format="json",
                                      directed=directed)
        identity = arcs.nodes == tuple(range(len(arcs.nodes)))
        stored = stored if identity else replace(stored, labels=arcs.nodes)
        lightest = float(arcs.weights.min()) if arcs.weights is not None and arcs.weights.size \
            else 1.0
        with self._lock:
            self._uploads.setdefault(G, {})[weight] = (fingerprint, stored, lightest)
        _tokens(G)[weight] = fingerprint
        return stored

    def run(self, G: Any, algorithm: str, weight: str | None = None,  # noqa: N803
            **params: Any) -> Job:
        """Run ``algorithm`` on ``G`` and wait for it (raises the SDK's JobFailed on failure)."""
        return self.run_on(self.stored(G, weight), algorithm, **params)

    def run_on(self, stored: StoredGraph, algorithm: str, **params: Any) -> Job:
        """Run ``algorithm`` on a stored graph and wait for it; counted in ``jobs``."""
        job = self.client().run(stored, algorithm, **params).wait(progress=False)
        self.jobs += 1
        return job


session = Session()


def reset() -> None:
    """Forget the connection, the algorithm list and the uploads (after changing
    ``GRAPHGPU_URL`` or ``GRAPHGPU_API_KEY``: the next call connects again)."""
    global session
    session.close()
    session = Session()


@atexit.register
def _close_at_exit() -> None:
    # An open keep-alive connection left to the garbage collector at exit is a ResourceWarning.
    session.close()


def current() -> Session:
    """The session (replaced by :func:`reset`)."""
    return session


def forget_conversion(G: Any) -> None:  # noqa: N803
    """Drop NetworkX's cached conversion of ``G`` to this backend.

    The conversion is a wrapper (free), and the upload cache above checks a fingerprint; a
    conversion NetworkX keeps would only make it warn, on every later call, that its cache may be
    stale after manual mutation (which the fingerprint catches).
    """
    cache = getattr(G, "__networkx_cache__", None)
    if cache:
        cache.get("backends", {}).pop(BACKEND_NAME, None)


def edge_data(graph: Any) -> Any:
    """An iterator over the attribute dicts of every arc (a multigraph's: of every parallel
    edge) of a NetworkX graph, by C-level iteration."""
    data = chain.from_iterable(map(dict.values, graph._adj.values()))
    if graph.is_multigraph():  # neighbour -> {key: attributes}
        data = chain.from_iterable(map(dict.values, data))
    return data


def has_weight(graph: Any, weight: str | None) -> bool:
    """Whether some edge has the ``weight`` attribute (C-level iteration, first hit ends it)."""
    return weight is not None and any(map(dict.__contains__, edge_data(graph), repeat(weight)))


def heaviest(graph: Any, weight: str) -> float:
    """The largest ``weight`` of an edge (1 where missing), as NetworkX's weighted clustering
    takes it; 1 for a graph without edges."""
    return max(map(dict.get, edge_data(graph), repeat(weight), repeat(1)), default=1)


def serving(algorithm: str, directed: bool, *names: str) -> dict[str, tuple[str, bool]]:
    """Rows of a module's ``SERVED`` table: the NetworkX functions ``names`` run ``algorithm``
    on the service; ``directed``: they take directed graphs."""
    return dict.fromkeys(names, (algorithm, directed))


def served_graph(G: Any, name: str, served: dict[str, tuple[str, bool]],  # noqa: N803
                 multigraphs: frozenset[str] = frozenset()) -> Any:
    """The NetworkX graph behind ``G`` for served function ``name``.

    Parameters
    ----------
    G : networkx.Graph or ServiceGraph
        The call's graph.
    name : str
        The NetworkX function.
    served : dict
        Its module's table: name -> (service algorithm, whether directed graphs are taken).
    multigraphs : frozenset of str
        The functions whose answer on a multigraph is that on its simple graph with the lightest
        of parallel edges (connectivity, reachability, shortest paths, tree tests).

    Raises
    ------
    NotImplementedError
        A multigraph, a directed graph where not taken, or a service without the algorithm
        (NetworkX then runs its own code, with fallback on). A graph without nodes passes: the
        function answers it (as NetworkX does) or :meth:`Session.stored` refuses it.
    """
    graph = G.G if isinstance(G, ServiceGraph) else G
    forget_conversion(graph)
    algorithm, directed = served[name]
    if graph.is_multigraph() and len(graph) and name not in multigraphs:
        raise NotImplementedError(f"{name}: graphgpu serves simple graphs, not multigraphs")
    if graph.is_directed() and not directed:
        raise NotImplementedError(f"{name}: graphgpu serves it on undirected graphs")
    if algorithm not in current().algorithms():
        raise NotImplementedError(f"{name}: the service has no {algorithm!r} algorithm")
    return graph
