"""Edge tables on the client: the columns of the binary upload body of edge arrays, and the
files the service's parser does not take.

Edges held as arrays (NumPy, pandas, a NetworkX graph with integer nodes) go up as an
uncompressed ``.npz`` of ``src``, ``dst`` and optionally ``weight`` and ``nodes``
(:func:`edge_columns`, sent by :func:`graphgpu.client.bodies.npz_pieces`; the service's
``format=npz``): no text is written or parsed. The service parses edge lists itself
(``u v [w]``, any of space, tab or one comma between fields; nodes named by integers, or by
labels such as ``alice bob``, which it keeps). A CSV/TSV with a header row
(``source,target,weight``) or weights picked by column name are read here instead: integer
nodes are uploaded as arrays (:meth:`graphgpu.client.Client.upload_edges`), labelled ones as
JSON edges (:func:`labelled_json`), so the service keeps the labels.
"""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import math
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from graphgpu.client.edgetext import id_column

#: Column names taken as a header row when they appear in the first line.
HEADER_WORDS = frozenset({"source", "target", "src", "dst", "from", "to", "u", "v", "weight",
                          "w", "node1", "node2", "node", "head", "tail", "cost", "length"})
#: Bytes looked at to decide whether the client must read the file itself.
HEAD_BYTES = 1 << 16
#: JSON bodies above this size are gzip'd before upload; below it compression is not worth it.
GZIP_ABOVE = 64 * 1024


@dataclass(frozen=True)
class EdgeTable:
    """Edges read on the client: integer id columns, or for labelled nodes the labels.

    Attributes
    ----------
    src, dst : numpy.ndarray or None
        int64 node ids (None when the nodes are labels).
    weights : numpy.ndarray or None
        float64 weights, or None for an unweighted graph.
    labels : numpy.ndarray or None
        ``(m, 2)`` strings, the two ends of each edge, when the file names nodes by labels.
    """

    src: np.ndarray | None
    dst: np.ndarray | None
    weights: np.ndarray | None
    labels: np.ndarray | None


def read_bytes(source: str | Path | IO[bytes]) -> bytes:
    """The file's bytes, gunzipped when they are gzip'd."""
    data = source.read() if hasattr(source, "read") else Path(source).read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def read_head(path: str | Path) -> bytes:
    """The first :data:`HEAD_BYTES` of a file, decompressed when it is gzip'd."""
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    with (gzip.open if gzipped else open)(path, "rb") as f:
        return f.read(HEAD_BYTES)


def _rows(text: str, delimiter: str | None) -> list[list[str]]:
    lines = [ln for ln in text.splitlines() if ln.strip() and ln.lstrip()[:1] not in "#%"]
    if delimiter is None:
        return [ln.split() for ln in lines]
    return [[f.strip() for f in row] for row in csv.reader(lines, delimiter=delimiter)]


def sniff_delimiter(text: str) -> str | None:
    """``","`` or ``"\\t"`` when the first data line uses it, else None (runs of blanks)."""
    for line in text.splitlines():
        if line.strip() and line.lstrip()[:1] not in "#%":
            return "," if "," in line else "\t" if "\t" in line else None
    return None


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def has_header(rows: list[list[str]]) -> bool:
    """Whether the first row names the columns: a known column name in it, or a third field
    that is not a number above rows whose third fields are."""
    if not rows:
        return False
    first = rows[0]
    if any(f.lower() in HEADER_WORDS for f in first):
        return True
    return (len(first) > 2 and len(rows) > 1 and len(rows[1]) > 2 and not _is_number(first[2])
            and _is_number(rows[1][2]))


def needs_client(head: bytes, header: bool | None, weight_column: str | None) -> bool:
    """Whether an edge list must be read here rather than by the service's parser.

    Parameters
    ----------
    head : bytes
        The start of the (decompressed) file.
    header : bool or None
        ``--header`` (True), ``--no-header`` (False) or detect (None).
    weight_column : str or None
        ``--weight-column``.

    Returns
    -------
    bool
        True for a header row or a weight column by name (labelled nodes the service reads).
    """
    if header or weight_column is not None:
        return True
    text = head.decode("utf-8", "replace")
    if len(head) >= HEAD_BYTES:
        text = text[:text.rfind("\n") + 1]  # the last line may be cut short
    return header is None and has_header(_rows(text, sniff_delimiter(text)))


def parse_table(data: bytes, header: bool | None = None,
                weight_column: str | None = None) -> EdgeTable:
    """Read an edge table: the first two columns (or ``source``/``target`` by name) are the
    nodes, ``weight_column`` (a name, or by default a third column) the weights.

    Raises
    ------
    ValueError
        A named column that the header lacks, a row with too few fields, or a weight that is
        not a number (the message names the line).
    """
    text = data.decode("utf-8-sig")
    rows = _rows(text, sniff_delimiter(text))
    named = has_header(rows) if header is None else header
    columns = [f.lower() for f in rows[0]] if named else []
    body = rows[1:] if named else rows
    if not body:
        raise ValueError("the file holds no edges")

    def column(wanted: tuple[str, ...], default: int | None) -> int | None:
        for name in wanted:
            if name.lower() in columns:
                return columns.index(name.lower())
        return default

    u = column(("source", "src", "from", "u", "node1", "tail"), 0)
    v = column(("target", "dst", "to", "v", "node2", "head"), 1)
    if weight_column is not None and weight_column.lower() not in columns:
        where = f"the header has {', '.join(rows[0])}" if named else "the file has no header"
        raise ValueError(f"no weight column {weight_column!r}: {where}")
    if weight_column is not None:
        w = columns.index(weight_column.lower())
    else:
        w = column(("weight", "w", "cost", "length"), 2 if not named or len(columns) > 2 else None)
    width = max(u, v) + 1
    short = next((i for i, r in enumerate(body) if len(r) < width), None)
    if short is not None:
        raise ValueError(f"line {short + 1 + named}: {len(body[short])} field(s), expected at "
                         f"least {width}")
    weighted = w is not None and all(len(r) > w for r in body)
    table = np.array([[r[u], r[v]] for r in body], dtype=object)
    weights = None
    if weighted:
        try:
            weights = np.array([r[w] for r in body], dtype=np.float64)
        except ValueError as exc:
            raise ValueError(f"a weight is not a number ({exc})") from None
    try:
        ids = table.astype(np.int64)
        if ids.size and ids.min() < 0:
            raise ValueError
        return EdgeTable(ids[:, 0], ids[:, 1], weights, None)
    except ValueError:
        pass
    return EdgeTable(None, None, weights, table.astype(str))


def labelled_json(table: EdgeTable) -> bytes:
    """A JSON upload body of a labelled table's edges (``[u, v]`` or ``[u, v, w]`` rows of
    labels), which the service stores with its labels."""
    rows = table.labels.tolist()
    if table.weights is not None:
        rows = [[u, v, w] for (u, v), w in zip(rows, table.weights.tolist(), strict=True)]
    return json.dumps({"edges": rows}, separators=(",", ":")).encode()


def edge_columns(src: Any, dst: Any, weights: Any = None,
                 nodes: Any = None) -> dict[str, np.ndarray]:
    """The arrays of a binary edge upload, checked as the service checks them.

    Parameters
    ----------
    src, dst : array_like of int
        Endpoints of each edge: non-negative integer node ids, same length (their dtype is
        kept: narrow ids make a smaller body).
    weights : array_like of float, optional
        Finite edge weights, one per edge.
    nodes : array_like of int, optional
        Ids of nodes that exist even without edges.

    Raises
    ------
    ValueError
        Arrays of other shapes, non-integer or negative ids, non-finite weights.
    """
    columns = {"src": id_column(src, "src"), "dst": id_column(dst, "dst")}
    if columns["src"].shape != columns["dst"].shape:
        raise ValueError(f"src and dst differ in length: {columns['src'].size} != "
                         f"{columns['dst'].size}")
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != columns["src"].shape or not np.isfinite(w).all():
            raise ValueError("weights must be finite numbers, one per edge")
        columns["weight"] = w
    if nodes is not None:
        columns["nodes"] = id_column(nodes, "nodes")
    return columns


def networkx_columns(G: Any) -> dict[str, np.ndarray] | None:  # noqa: N803
    """The columns of a NetworkX graph whose nodes are all non-negative integers (every node in
    ``nodes``; ``weight`` when every edge has a number there), or None for any other graph.

    Raises
    ------
    ValueError
        An edge weight that is not a number.
    """
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0
               for v in G.nodes):
        return None
    try:
        nodes = np.fromiter(G.nodes, np.int64, count=G.number_of_nodes())
        ends = np.fromiter(itertools.chain.from_iterable(G.edges()), np.int64,
                           count=2 * G.number_of_edges())
    except OverflowError:
        return None  # ids past 64 bits: the JSON upload lets the service say so
    weights = [w for _, _, w in G.edges(data="weight")]
    columns = {"src": ends[0::2], "dst": ends[1::2], "nodes": nodes}
    if weights and all(w is not None for w in weights):
        columns["weight"] = np.fromiter(map(_weight, weights), np.float64, count=len(weights))
    return columns


def networkx_json(G: Any) -> tuple[bytes, tuple[Any, ...] | None]:  # noqa: N803
    """The JSON upload body of a NetworkX graph whose nodes are not all integer ids (gzip'd
    when large), and the node order the body numbers them by (None when the service keeps the
    nodes as labels: strings and finite numbers).

    Raises
    ------
    ValueError
        An edge weight that is not a number.
    """
    nodes = list(G.nodes)
    labels = None if all(_is_label(v) for v in nodes) else tuple(nodes)
    index = {v: i for i, v in enumerate(nodes)} if labels is not None else None
    node = _plain if index is None else index.__getitem__
    edges = list(G.edges(data="weight"))
    weighted = bool(edges) and all(w is not None for _, _, w in edges)
    rows = [[node(u), node(v), _weight(w)] if weighted else [node(u), node(v)]
            for u, v, w in edges]
    body = json.dumps({"edges": rows, "nodes": [node(v) for v in nodes]},
                      separators=(",", ":")).encode()
    return (gzip.compress(body, compresslevel=1) if len(body) > GZIP_ABOVE else body), labels


def _is_label(value: Any) -> bool:
    """Whether the service keeps ``value`` as a node label: a string or a finite number."""
    return isinstance(value, str) or (isinstance(value, numbers.Real) and not isinstance(
        value, bool) and math.isfinite(value))


def _plain(value: Any) -> Any:
    """A node label as JSON writes it (NumPy integers and floats as Python numbers)."""
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value) if isinstance(value, numbers.Real) else value


def _weight(value: Any) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"edge weight {value!r} is not a number")
