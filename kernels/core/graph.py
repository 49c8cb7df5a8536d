"""The graph container: a simple graph in CSR form with its original node ids.

Every graph that enters the system (upload or generator) goes through :func:`build_graph`, which
symmetrises (unless ``directed``: then it keeps arc directions and builds the in-CSR too), drops
self-loops, merges duplicate edges and relabels the original ids to dense internal ids ``0..n-1``
in ascending order of original id. Internal id ``i`` is original id
``node_ids[i]``; results are translated back with :meth:`Graph.to_original`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from graphgpu.kernels.core import csr
from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded
from graphgpu.kernels.core.settings import Settings, get_settings
from graphgpu.kernels.core.threads import map_shared

INDEX_DTYPE = np.int32
OFFSET_DTYPE = np.int64
ID_DTYPE = np.int64


@dataclass(frozen=True)
class NormalizationReport:
    """What :func:`build_graph` changed in the input edges."""

    edges_read: int
    self_loops_dropped: int
    duplicates_merged: int

    def as_dict(self) -> dict[str, int]:
        return {
            "edges_read": self.edges_read,
            "self_loops_dropped": self.self_loops_dropped,
            "duplicates_merged": self.duplicates_merged,
        }


@dataclass(frozen=True)
class Graph:
    """Simple graph in CSR form: undirected (each edge appears as two arcs) or directed.

    A directed graph keeps each arc once in the out-CSR (``indptr``, ``indices``, ``weights``:
    the arcs leaving each node, so code that follows out-edges runs unchanged) and again in the
    in-CSR (``in_indptr``, ``in_indices``, ``in_weights``: the arcs entering each node).

    Attributes
    ----------
    indptr : ndarray of int64, shape (n + 1,)
    indices : ndarray of int32, shape (2 m,) undirected, (m,) directed
        Neighbours (directed: out-neighbours) of each node, sorted ascending within a row.
    node_ids : ndarray of int64, shape (n,)
        Original id of each internal node, strictly increasing.
    weights : ndarray of float64, or None
        Weight of each arc (both arcs of an undirected edge carry the same weight).
    graph_id : str
        Content address (see :func:`content_id`); empty until stored.
    directed : bool
        Whether arcs have a direction (then the ``in_*`` arrays are set).
    in_indptr, in_indices, in_weights : ndarray or None
        Directed graphs: the in-CSR, rows (in-neighbours) sorted ascending.
    """

    indptr: np.ndarray
    indices: np.ndarray
    node_ids: np.ndarray
    weights: np.ndarray | None = None
    graph_id: str = field(default="", compare=False)
    directed: bool = False
    in_indptr: np.ndarray | None = None
    in_indices: np.ndarray | None = None
    in_weights: np.ndarray | None = None
    # Derived graphs (the symmetrised view), computed once; not copied by dataclasses.replace.
    _views: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def n(self) -> int:
        return int(self.node_ids.shape[0])

    @property
    def m(self) -> int:
        """Number of undirected edges, or of arcs of a directed graph."""
        arcs = int(self.indices.shape[0])
        return arcs if self.directed else arcs // 2

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    def degrees(self) -> np.ndarray:
        """Degree of each node (directed: out-degree)."""
        return np.diff(self.indptr)

    def in_degrees(self) -> np.ndarray:
        """In-degree of each node (undirected: the degree)."""
        return np.diff(self.in_indptr if self.directed else self.indptr)

    def undirected(self) -> Graph:
        """The symmetrised view: every arc an undirected edge (reciprocal arcs merge, keeping the
        smaller weight, as :func:`build_graph` merges duplicates). The graph itself when it is
        undirected; computed once per graph object. Its ``graph_id`` is the graph's with a ``u``
        appended (so device caches keep the two apart)."""
        if not self.directed:
            return self
        if "undirected" not in self._views:
            src = np.repeat(np.arange(self.n, dtype=ID_DTYPE), np.diff(self.indptr))
            view, _ = build_graph(self.node_ids[src], self.node_ids[self.indices], self.weights,
                                  extra_nodes=self.node_ids)
            self._views["undirected"] = Graph(
                indptr=view.indptr, indices=view.indices, node_ids=view.node_ids,
                weights=view.weights, graph_id=f"{self.graph_id}u" if self.graph_id else "")
        return self._views["undirected"]

    def internal_ids(self, original: np.ndarray | list[int] | int) -> np.ndarray:
        """Internal ids of original ids; raises :class:`InvalidInput` for ids not in the graph."""
        ids = np.atleast_1d(np.asarray(original, dtype=ID_DTYPE))
        pos = np.searchsorted(self.node_ids, ids)
        pos_clipped = np.minimum(pos, max(self.n - 1, 0))
        missing = (pos >= self.n) | (self.node_ids[pos_clipped] != ids)
        if self.n == 0 or missing.any():
            bad = ids[missing][0] if self.n else ids[0]
            raise InvalidInput(f"node {int(bad)} is not in the graph", field="node")
        return pos.astype(INDEX_DTYPE)

    def to_original(self, internal: np.ndarray) -> np.ndarray:
        """Original ids of internal ids; negative entries (``-1`` = none) stay ``-1``."""
        internal = np.asarray(internal)
        out = np.full(internal.shape, -1, dtype=ID_DTYPE)
        valid = internal >= 0
        out[valid] = self.node_ids[internal[valid]]
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays that define the graph, by file stem, as stored on disk."""
        out = {"indptr": self.indptr, "indices": self.indices, "node_ids": self.node_ids}
        if self.weights is not None:
            out["weights"] = self.weights
        if self.directed:
            out["in_indptr"] = self.in_indptr
            out["in_indices"] = self.in_indices
            if self.in_weights is not None:
                out["in_weights"] = self.in_weights
        return out

    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays().values())


#: Bytes per hashed piece of a stored array in :func:`content_id`: 4 MB pieces left dblp-2010's
#: 11.7 MB of arrays in 4 pieces, 14 ms on the GPU host's cores (one piece, then the longest,
#: is the time); 1 MB ones take a dozen threads.
HASH_PIECE = 1 << 20
#: Marks ids of the piecewise scheme and its piece size (a digest parameter, so the ids of
#: earlier schemes and of this one never collide by construction).
HASH_PERSON = b"graphgpu-ids-3"


def _piece_digest(piece: memoryview) -> bytes:
    return hashlib.blake2b(piece, digest_size=32).digest()


def content_id(graph: Graph, labels: dict[str, np.ndarray] | None = None) -> str:
    """Content address of a graph: same nodes, edges, weights and directedness (and node
    labels: the arrays of a :class:`graphgpu.kernels.core.labels.Labels` table) give the same
    id (a directed build of some edges never shares the id of their undirected build).

    Each array is hashed in pieces of :data:`HASH_PIECE` bytes on all cores (BLAKE2b releases
    the GIL), and the id is the BLAKE2b of the names, lengths and piece digests in order: one
    thread over the whole arrays took 120-260 ms of a 128 MB binary upload on the GPU host,
    as long as the CSR build. This scheme replaced a single pass over the arrays on
    2026-11-26, and its pieces shrank from 4 MB to 1 MB on 2026-11-27: graphs stored before
    keep their ids (their folders are named by them), but the same content uploaded again now
    gets a new id and is stored a second time.
    """
    digest = hashlib.blake2b(digest_size=16, person=HASH_PERSON)
    if graph.directed:
        digest.update(b"directed")
    named = []
    for name, array in {**graph.arrays(), **(labels or {})}.items():
        data = memoryview(np.ascontiguousarray(array).view(np.uint8).reshape(-1))
        named.append((name, data.nbytes,
                      [data[i:i + HASH_PIECE] for i in range(0, data.nbytes, HASH_PIECE)]))
    digests = iter(map_shared(_piece_digest, [piece for _, _, parts in named for piece in parts]))
    for name, nbytes, parts in named:
        digest.update(name.encode() + b"\0" + nbytes.to_bytes(8, "little"))
        for _ in parts:
            digest.update(next(digests))
    return digest.hexdigest()


def build_graph(
    src: np.ndarray,
    dst: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    extra_nodes: np.ndarray | None = None,
    settings: Settings | None = None,
    directed: bool = False,
) -> tuple[Graph, NormalizationReport]:
    """Normalise an edge list to a simple graph in CSR form (undirected unless ``directed``).

    Parameters
    ----------
    src, dst : ndarray of int
        Original ids of the edge endpoints (any direction; both directions may appear).
    weights : ndarray of float, optional
        Weight of each input edge. Duplicate edges keep the smallest weight.
    extra_nodes : ndarray of int, optional
        Original ids of nodes that exist even without edges (formats that declare ``n``).
    settings : Settings, optional
        Limits to enforce; defaults to the process settings.
    directed : bool
        Keep each edge as the arc ``src -> dst`` (duplicate arcs merged, self-loops dropped; the
        arcs ``u -> v`` and ``v -> u`` are distinct) and build the in-CSR too.

    Returns
    -------
    graph : Graph
    report : NormalizationReport

    Raises
    ------
    InvalidInput
        Negative ids, non-finite or negative-zero weights, or an empty graph.
    LimitExceeded
        An id over ``max_node_id``, or more nodes or edges than allowed.
    """
    settings = settings or get_settings()
    src = np.asarray(src, dtype=ID_DTYPE).ravel()
    dst = np.asarray(dst, dtype=ID_DTYPE).ravel()
    extra = np.zeros(0, ID_DTYPE) if extra_nodes is None else np.asarray(extra_nodes, ID_DTYPE)
    edges_read = int(src.shape[0])
    if src.shape != dst.shape:
        raise InvalidInput("source and target arrays differ in length", field="edges")
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64).ravel()
        if weights.shape != src.shape:
            raise InvalidInput("one weight per edge is required", field="weights")
        if not np.isfinite(weights).all():
            raise InvalidInput("weights must be finite numbers (NaN or inf found)", field="weights")
    if edges_read == 0 and extra.size == 0:
        raise InvalidInput("the graph is empty: no edges and no nodes", code="empty_graph")
    src_low, src_high, dst_low, dst_high, self_loops = (
        csr.edge_ends(src, dst) if edges_read else (0, -1, 0, -1, 0))
    ranges = [(src_low, src_high), (dst_low, dst_high)]
    if extra.size:
        ranges.append((int(extra.min()), int(extra.max())))
    for low, high in ranges:
        if low < 0:
            raise InvalidInput("node ids must be non-negative integers", field="node")
        if high > settings.max_node_id:
            raise LimitExceeded(f"node id {high} exceeds the limit {settings.max_node_id}",
                                field="node", code="node_id_too_large")

    # Each edge as given ("lo -> hi" is the arc of a directed graph; an undirected CSR takes
    # both ends' rows, so no min/max is needed), without copies when there are no self-loops
    # (their nodes stay, as extra nodes).
    lo, hi, w, looped = src, dst, weights, extra
    if self_loops:
        loops = src == dst
        keep = ~loops
        lo, hi = src[keep], dst[keep]
        w = None if weights is None else weights[keep]
        looped = np.concatenate([extra, src[loops]])

    top = max(high for _, high in ranges)  # every id, also those of the loops
    node_ids, lo_i, hi_i = _relabel(lo, hi, looped, top)
    n = int(node_ids.shape[0])
    if n > settings.max_nodes:
        raise LimitExceeded(f"{n} nodes exceed the limit {settings.max_nodes}",
                            code="too_many_nodes")
    if not directed:
        indptr, indices, arc_weights = csr.undirected_csr(
            lo_i, hi_i, np.zeros(0) if w is None else w, n, INDEX_DTYPE, OFFSET_DTYPE)
        _check_edges(int(indices.shape[0]) // 2, settings)
        graph = Graph(indptr=indptr, indices=indices, node_ids=node_ids,
                      weights=None if w is None else arc_weights)
        return graph, NormalizationReport(edges_read, self_loops,
                                          int(lo.shape[0]) - int(indices.shape[0]) // 2)

    key = lo_i * n + hi_i
    if w is None:
        key.sort()
    else:  # duplicates keep their smallest weight: sort by weight within each key
        order = np.lexsort((w, key))
        key, w = key[order], w[order]
    first = np.ones(key.shape[0], dtype=bool)
    first[1:] = key[1:] != key[:-1]
    unique_key = key[first]
    m = int(unique_key.shape[0])
    _check_edges(m, settings)
    u, v = np.divmod(unique_key, max(n, 1))
    graph = _directed_csr(u, v, None if w is None else w[first], node_ids)
    return graph, NormalizationReport(edges_read, self_loops, int(lo.shape[0]) - m)


def simple_graph(src: np.ndarray, dst: np.ndarray,
                 extra_nodes: np.ndarray | None = None, directed: bool = False) -> Graph:
    """The graph :func:`build_graph` gives for unweighted edges (the same arrays: loops
    dropped, their nodes kept, duplicates merged, ids relabelled in ascending order, rows
    sorted; ``directed``: arcs ``src -> dst``), built with NumPy alone, without the limits'
    checks: for small trusted graphs where no compiled code may be needed. Worker warm-up builds
    its graphs with it: in a first start's compile pool every process built its own and compiled
    the CSR builder's Numba code to do it, about 10 s in each of the 15 processes on the GPU
    host (2026-11-26)."""
    src = np.asarray(src, dtype=ID_DTYPE).ravel()
    dst = np.asarray(dst, dtype=ID_DTYPE).ravel()
    extra = np.zeros(0, ID_DTYPE) if extra_nodes is None else np.asarray(extra_nodes, ID_DTYPE)
    node_ids = _sorted_unique(np.concatenate([src, dst, extra]))
    n = int(node_ids.shape[0])
    lo, hi = np.searchsorted(node_ids, src), np.searchsorted(node_ids, dst)
    keep = lo != hi
    lo, hi = lo[keep], hi[keep]
    if directed:
        arcs = _sorted_unique(lo * n + hi)
        return _directed_csr(arcs // n, arcs % n, None, node_ids)
    arcs = _sorted_unique(np.concatenate([lo * n + hi, hi * n + lo]))
    indptr = np.zeros(n + 1, OFFSET_DTYPE)
    np.cumsum(np.bincount(arcs // n, minlength=n), out=indptr[1:])
    return Graph(indptr=indptr, indices=(arcs % n).astype(INDEX_DTYPE), node_ids=node_ids)


def _check_edges(m: int, settings: Settings) -> None:
    if m > settings.max_edges:
        raise LimitExceeded(f"{m} edges exceed the limit {settings.max_edges}",
                            code="too_many_edges")


def _directed_csr(u: np.ndarray, v: np.ndarray, w: np.ndarray | None, node_ids: np.ndarray
                  ) -> Graph:
    """Out- and in-CSR of the distinct arcs ``u -> v``, given sorted by ``(u, v)``."""
    n = int(node_ids.shape[0])
    indptr = np.zeros(n + 1, dtype=OFFSET_DTYPE)
    np.cumsum(np.bincount(u, minlength=n), out=indptr[1:])
    # A stable sort by head keeps the tails ascending within each in-row.
    order = np.argsort(v, kind="stable")
    in_indptr = np.zeros(n + 1, dtype=OFFSET_DTYPE)
    np.cumsum(np.bincount(v, minlength=n), out=in_indptr[1:])
    return Graph(indptr=indptr, indices=v.astype(INDEX_DTYPE), node_ids=node_ids,
                 weights=None if w is None else np.ascontiguousarray(w, dtype=np.float64),
                 directed=True, in_indptr=in_indptr, in_indices=u[order].astype(INDEX_DTYPE),
                 in_weights=None if w is None else np.ascontiguousarray(w[order],
                                                                       dtype=np.float64))


#: Ids up to this many times the endpoint count are relabelled through a dense lookup table.
_DENSE_RELABEL_FACTOR = 8
#: Ids past that bound are relabelled apart (sorted) while they are at most this share of the
#: endpoints; more of them and every id is.
_OUTLIER_SHARE = 1 / 8


def _relabel(lo: np.ndarray, hi: np.ndarray, extra: np.ndarray, top: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct original ids, and ``lo``/``hi`` as internal ids (their ranks); ``top``
    is the largest id among them (-1: none).

    Dense ids (the usual case: 0..n-1 with gaps) use a lookup table, which is O(m) with no
    sort or binary search. Ids past the table's bound are ranked apart, after the table's, by
    a sort of those alone while they are few (an edge list with one id of 10^9 among 6.5 M
    edges took 8.7 s instead of 0.6 s on the VM when one outlier sent every id to the
    sort); sparse ids (hashes, huge values) are all sorted.
    """
    arrays = (lo, hi, extra)
    bound = _DENSE_RELABEL_FACTOR * (2 * lo.size + extra.size) + (1 << 20)
    if top < bound:
        return csr.dense_relabel(lo, hi, extra, top)
    past = [a >= bound for a in arrays]
    outliers = np.concatenate([a[p] for a, p in zip(arrays, past, strict=True)])
    if outliers.size > _OUTLIER_SHARE * sum(a.size for a in arrays):
        node_ids = _sorted_unique(np.concatenate(arrays))
        return node_ids, np.searchsorted(node_ids, lo), np.searchsorted(node_ids, hi)
    # An id within the bound stands in for the outliers in the table (it is present anyway).
    stand_in = next(a[~p][0] for a, p in zip(arrays, past, strict=True) if (~p).any())
    inside = [np.where(p, stand_in, a) for a, p in zip(arrays, past, strict=True)]
    node_ids, lo_i, hi_i = csr.dense_relabel(*inside, max(int(a.max()) for a in inside if a.size))
    far = _sorted_unique(outliers)
    for ranks, ids, p in ((lo_i, lo, past[0]), (hi_i, hi, past[1])):
        ranks[p] = node_ids.size + np.searchsorted(far, ids[p])
    return np.concatenate([node_ids, far]), lo_i, hi_i


def _sorted_unique(ids: np.ndarray) -> np.ndarray:
    """The distinct values of ``ids``, sorted: one sort and a comparison of neighbours
    (NumPy 2.4's hash-based ``np.unique`` took 5.8 s for 13 M int64 on the VM, this 0.85 s)."""
    ids = np.sort(ids)
    keep = np.empty(ids.shape[0], bool)
    keep[:1] = True
    np.not_equal(ids[1:], ids[:-1], out=keep[1:])
    return ids[keep]
