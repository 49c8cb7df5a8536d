"""Upload parsers: bytes in one of the supported graph formats -> edge arrays for ``build_graph``.

Formats (any of them may be gzip'd; gzip is recognised by its magic bytes, not by a file name):

``edgelist``
    SNAP style: ``u v`` or ``u v weight`` per line, separated by spaces/tabs or one comma; ``#``
    and ``%`` comment lines, blank lines, CRLF and trailing blanks are allowed.
``metis``
    METIS graph: header ``n m [fmt [ncon]]``, then exactly ``n`` adjacency lines (1-based ids).
    Ids become ``0..n-1``. Never auto-detected (it looks like an edge list): pass ``metis``.
``mtx``
    Matrix Market ``coordinate`` (pattern / real / integer / double, general / symmetric).
``cnp``
    Critical-node benchmark: ``n`` on the first line, then ``i: j k ...`` (0-based ids).
``json``
    ``{"edges": [[u, v(, w)], ...], "nodes": [...]}`` or a bare list of rows.
``npz``, ``parquet``
    Binary columns ``src``, ``dst`` (optional ``weight``; ``nodes`` in an ``.npz``), read
    without parsing text: :mod:`graphgpu.kernels.core.io.columns`.

Parse errors are :class:`InvalidInput` with the 1-based ``line`` of the (decompressed) text and a
message that quotes the offending token; codes: ``bad_node_id``, ``bad_number``, ``bad_weight``,
``bad_columns``, ``bad_header``, ``bad_gzip``, ``bad_json``, ``unsupported_mtx``. Limits raise
:class:`LimitExceeded` (``node_id_too_large``, ``too_many_nodes``, ``decompressed_too_large``,
``upload_too_large``, ``graph_too_sparse``). Text is scanned by the Numba kernels in
:mod:`graphgpu.kernels.core.io.textscan` (node labels, as in ``alice bob`` on the first data line
of an edge list: :mod:`graphgpu.kernels.core.io.labelscan`).
"""

from __future__ import annotations

import json
import os
import re
import zlib
from dataclasses import dataclass

import numpy as np

from graphgpu.kernels.core import labels as node_labels
from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded, UnknownName
from graphgpu.kernels.core.graph import build_graph
from graphgpu.kernels.core.io import columns, labelscan
from graphgpu.kernels.core.io import textscan as ts
from graphgpu.kernels.core.io.budget import (
    BYTES_PER_JSON_BYTE,
    MAX_JSON_DEPTH,
    STORED_BYTES_PER_NODE,
    check_budget,
    check_stored_bytes,
    json_depth,
)
from graphgpu.kernels.core.io.gzipped import GZIP_MAGIC, gunzip
from graphgpu.kernels.core.settings import Settings, get_settings
from graphgpu.kernels.core.threads import map_shared

FORMATS: tuple[str, ...] = ("auto", "edgelist", "metis", "mtx", "cnp", "json", "npz", "parquet")
#: Formats of binary columns: no text, their own size checks (from the headers they declare).
BINARY_FORMATS = ("npz", "parquet")

#: Edge-list text per thread, at least: with threads started per upload, 4 MB had left
#: dblp-2010's 10.6 MB to 2 threads (35 ms on the GPU host); the shared pool's cost little.
_MIN_CHUNK = 1 << 20
MAX_PARSE_THREADS = 8  # threads scanning one edge list
_EMPTY_I = np.empty(0, np.int64)
_EMPTY_F = np.empty(0, np.float64)

# What every format parser returns: src, dst, weights or None, extra_nodes or None (+ Labels).
_Edges = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]


@dataclass(frozen=True)
class ParsedGraph:
    """Edges of an upload, ready for :func:`graphgpu.kernels.core.graph.build_graph` (original
    ids)."""

    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray | None
    extra_nodes: np.ndarray | None
    format: str
    compressed: bool
    labels: node_labels.Labels | None = None  # src, dst, extra_nodes are then label ids


#: The warm-up's upload: a triangle and an edge beside it, with an id missing between them,
#: so that the relabelling's table is built (ids with gaps), not only checked (every id
#: present: :func:`graphgpu.kernels.core.csr.dense_relabel`).
WARM_UP_EDGES = b"0 1\n1 2\n2 0\n4 5\n"


def warm_up_upload_path(settings: Settings | None = None) -> None:
    """Parse and build a small graph as an upload does (nothing is stored), so that the
    parser's and the CSR builder's compiled code is compiled (a worker's warm-up, which fills
    the disk caches) or loaded from the caches (the API, once a worker is live) before the
    first upload: loading it took 0.5 s of the first 10 MB upload on the VM, 4x the next."""
    parsed = parse_graph(WARM_UP_EDGES, "edgelist", settings=settings)
    build_graph(parsed.src, parsed.dst, parsed.weights, settings=settings)


def parse_graph(data: bytes, fmt: str = "auto", *, settings: Settings | None = None) -> ParsedGraph:
    """Parse an uploaded graph file.

    Parameters
    ----------
    data : bytes-like
        The upload, plain or gzip'd.
    fmt : str
        One of :data:`FORMATS`; ``auto`` detects it with :func:`detect_format`.
    settings : Settings, optional
        Limits (``max_upload_bytes``, ``max_decompressed_bytes``, ``max_node_id``,
        ``max_nodes``); defaults to the process settings.

    Returns
    -------
    ParsedGraph
        Pass ``src, dst, weights, extra_nodes=extra_nodes`` to ``build_graph``, which rejects an
        empty graph (e.g. a file of comments only).

    Raises
    ------
    UnknownName
        ``fmt`` is not in :data:`FORMATS`.
    InvalidInput
        Malformed input; ``line`` is the 1-based line in the decompressed text.
    LimitExceeded
        Upload, decompressed text, node id or node count over the configured limit.
    """
    settings = settings or get_settings()
    if fmt not in FORMATS:
        raise UnknownName(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}",
                          field="format")
    if len(data) > settings.max_upload_bytes:
        raise LimitExceeded(f"upload of {len(data)} bytes exceeds the limit "
                            f"{settings.max_upload_bytes}", code="upload_too_large")
    if not isinstance(data, bytes | bytearray):
        data = bytes(data)  # the scanners use .find; a memoryview has none
    compressed = data[:2] == GZIP_MAGIC
    text = gunzip(data, settings.max_decompressed_bytes, settings) if compressed else data
    resolved = fmt if fmt != "auto" else "parquet" if columns.is_parquet(text) else \
        detect_format(bytes(text[:65536]))
    if resolved in BINARY_FORMATS:
        src, dst, weights, extra = _PARSERS[resolved](text, settings)
        return ParsedGraph(src, dst, weights, extra, resolved, compressed)
    if resolved in ("cnp", "mtx", "metis"):
        _check_declared_size(text, resolved, settings, len(data))
    if resolved not in ("json", "edgelist"):  # (those check their own, JSON's from its size,
        # an edge list's from the lines its threads count; a gzip'd one's while inflating too)
        check_budget(settings, "the upload", len(text) + (len(data) if compressed else 0),
                     rows=_rows_estimate(text, resolved))
    if text[:3] == b"\xef\xbb\xbf":
        text = text[3:]  # a UTF-8 byte-order mark (Windows editors): not part of the first line
    try:
        src, dst, weights, extra, *table = _PARSERS[resolved](text, settings)
    except InvalidInput as exc:
        if fmt != "auto" or resolved != "edgelist" or exc.code != "bad_columns":
            raise
        hint = " (METIS files are not auto-detected: pass format 'metis')"
        raise InvalidInput(exc.message + hint, line=exc.line, field=exc.field,
                           code=exc.code) from None
    return ParsedGraph(src, dst, weights, extra, resolved, compressed, *table)


def _rows_estimate(text: bytes, fmt: str) -> int:
    """Most edge rows the text can hold: one a line, or one a token in the adjacency formats
    (CNP, METIS: a line lists many neighbours)."""
    rows = text.count(b"\n") + 1
    if fmt in ("cnp", "metis"):
        rows += text.count(b" ") + text.count(b"\t")
    return rows


def detect_format(text_head: bytes) -> str:
    """Guess the format from the first bytes of an upload (gzip'd or not).

    Parameters
    ----------
    text_head : bytes
        The start of the file; 64 KiB is plenty.

    Returns
    -------
    str
        ``npz`` (a zip archive), ``mtx`` (``%%MatrixMarket`` banner), ``json`` (starts with
        ``{`` or ``[``), ``cnp`` (a lone integer line followed by an ``i:`` line) or
        ``edgelist``. Never ``metis``, which cannot be told from an edge list reliably, nor
        ``parquet``, told by both ends of the file (:func:`columns.is_parquet`).
    """
    head = bytes(text_head)
    if head[:2] == GZIP_MAGIC:
        try:
            head = zlib.decompressobj(31).decompress(head, 65536)  # a prefix is enough
        except zlib.error:
            return "edgelist"  # parse_graph reports the corrupt stream
    if columns.is_npz(head):
        return "npz"
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:14].lower() == b"%%matrixmarket":
        return "mtx"
    if head[:1] in (b"{", b"["):
        return "json"
    lines = [ln.strip() for ln in head.split(b"\n")[:64]]
    data = [ln for ln in lines if ln and ln[:1] not in (b"#", b"%")]
    if len(data) >= 2 and data[0].isdigit() and re.match(rb"\d+\s*:", data[1]):
        return "cnp"
    return "edgelist"


# --- edge list --------------------------------------------------------------------------------

def _edge_error(text: bytes, err: int, line: int, pos: int, ncols: int, max_id: int) -> Exception:
    tok = ts.token_at(text, pos)
    if err == ts.E_TOKEN:
        if not tok:
            return InvalidInput(f"line {line}: empty field (stray comma?)", line=line,
                                field="edges", code="bad_node_id")
        return InvalidInput(f"line {line}: node id '{tok}' is not a non-negative integer",
                            line=line, field="edges", code="bad_node_id")
    if err == ts.E_ID_RANGE:
        return LimitExceeded(f"line {line}: node id '{tok}' exceeds the limit {max_id}",
                             line=line, field="edges", code="node_id_too_large")
    if err == ts.E_WEIGHT:
        return InvalidInput(f"line {line}: weight '{tok}' is not a number", line=line,
                            field="weights", code="bad_weight")
    if err == ts.E_NONFINITE:
        return InvalidInput(f"line {line}: weight '{tok}' is not a finite number", line=line,
                            field="weights", code="bad_weight")
    k = len(ts.line_fields(text, pos))
    if err == ts.E_NCOLS:
        msg = f"line {line} has {k} columns but the first data line has {ncols}"
    else:
        msg = f"line {line} has {k} column(s); expected 'u v' or 'u v weight'"
    return InvalidInput(msg, line=line, field="edges", code="bad_columns")


def _parse_edgelist(text: bytes, settings: Settings) -> _Edges:
    arr = ts.as_array(text)
    max_id = int(settings.max_node_id)
    err, ncols, line, pos, _ = ts.scan_edges(arr, 0, arr.size, 1, 0, max_id,
                                            _EMPTY_I, _EMPTY_I, _EMPTY_F)
    if err == ts.E_TOKEN and ts.token_at(text, pos):  # a label in the first data line
        check_budget(settings, "the upload", len(text),
                     rows=ts.count_newlines(arr, 0, arr.size) + 1)
        return labelscan.parse_edgelist(text, settings)
    if err:
        raise _edge_error(text, err, line, pos, 0, max_id)
    if ncols == 0:  # comments only: build_graph reports the empty graph
        return _EMPTY_I.copy(), _EMPTY_I.copy(), None, None
    # Threads scan whole-line chunks into one output: chunk k writes from the number of line
    # breaks before it, so chunks never collide (every line of a chunk but the last ends with a
    # break); the gaps that comment and blank lines leave are closed afterwards.
    threads = max(1, min(len(os.sched_getaffinity(0)), MAX_PARSE_THREADS,
                         (arr.size - pos) // _MIN_CHUNK))
    bounds = [pos]
    for k in range(1, threads):
        nl = text.find(b"\n", pos + (arr.size - pos) * k // threads)
        if nl < 0 or nl + 1 >= arr.size:
            break
        bounds.append(max(bounds[-1], nl + 1))
    bounds.append(arr.size)
    spans = list(zip(bounds[:-1], bounds[1:], strict=True))
    # the counts too in threads: a pass over the text
    offs = np.cumsum([0, *map_shared(lambda span: ts.count_newlines(arr, *span), spans)])
    cap = int(offs[-1]) + 1
    check_budget(settings, "the upload", len(text), rows=cap)  # before a row is taken
    src, dst = np.empty(cap, np.int64), np.empty(cap, np.int64)
    w = np.empty(cap, np.float64) if ncols == 3 else _EMPTY_F

    def work(k: int) -> tuple[int, int, int, int, int]:
        a, b = int(offs[k]), int(offs[k + 1]) + (k == len(spans) - 1)
        return ts.scan_edges(arr, *spans[k], 0, ncols, max_id, src[a:b], dst[a:b],
                             w[a:b] if ncols == 3 else w)

    results = map_shared(work, range(len(spans)))
    rows = 0
    for k, (err, got, rel, tpos, _) in enumerate(results):
        if err:
            raise _edge_error(text, err, line + int(offs[k]) + rel, tpos, ncols, max_id)
        if offs[k] != rows:  # overlapping move down; NumPy buffers overlapping copies
            src[rows:rows + got] = src[offs[k]:offs[k] + got]
            dst[rows:rows + got] = dst[offs[k]:offs[k] + got]
            if ncols == 3:
                w[rows:rows + got] = w[offs[k]:offs[k] + got]
        rows += got
    trim = (lambda a: a[:rows].copy()) if rows < 0.9 * cap else (lambda a: a[:rows])
    return trim(src), trim(dst), (trim(w) if ncols == 3 else None), None


# --- METIS / Matrix Market / CNP: generic tokens, checks in NumPy -----------------------------

def _declared_nodes(n: int, line: int, settings: Settings, text_bytes: int = 0,
                    rows: int = 0) -> np.ndarray:
    """Ids ``0..n-1`` of a header's node count, after the limits and the parse budget (for
    ``rows`` declared edge rows) are checked: nothing is allocated for a size refused."""
    _check_node_limits(n, line, settings)
    check_budget(settings, f"line {line}: the declared graph ({n:,} nodes, {rows:,} edge rows)",
                 text_bytes, rows=rows, nodes=n, line=line)
    return np.arange(n, dtype=np.int64)


def _check_node_limits(n: int, line: int, settings: Settings) -> None:
    if n > settings.max_nodes:
        raise LimitExceeded(f"line {line}: {n} nodes exceed the limit {settings.max_nodes}",
                            line=line, code="too_many_nodes")
    if n - 1 > settings.max_node_id:
        raise LimitExceeded(f"line {line}: node ids up to {n - 1} exceed the limit "
                            f"{settings.max_node_id}", line=line, code="node_id_too_large")


def _parse_metis(text: bytes, settings: Settings) -> _Edges:
    tk = ts.tokenize(text, 0, 1, keep_blank=True, want_float=True)
    data_lines = np.flatnonzero(tk.ntok)
    if data_lines.size == 0:
        raise InvalidInput("METIS file has no header line", line=1, code="bad_header")
    h = int(data_lines[0])
    hline = int(tk.line_no[h])
    head = tk.header_ints(h, "METIS header 'n m [fmt [ncon]]'")
    if not 2 <= len(head) <= 4:
        raise InvalidInput(f"line {hline}: METIS header must be 'n m [fmt [ncon]]'", line=hline,
                           code="bad_header")
    n, m, fmt = head[0], head[1], (head[2] if len(head) > 2 else 0)
    sizes, vwgt, ewgt = fmt // 100, fmt // 10 % 10, fmt % 10
    if fmt >= 1000 or max(sizes, vwgt, ewgt) > 1:
        raise InvalidInput(f"line {hline}: unknown METIS fmt {fmt}", line=hline,
                           code="bad_header")
    ncon = head[3] if len(head) > 3 else 1
    nodes = _declared_nodes(n, hline, settings, len(text), rows=2 * m)
    vlines = tk.ntok[h + 1:]
    if vlines.size > n and not vlines[n:].any():
        vlines = vlines[:n]  # blank lines after the last vertex are not vertices
    if vlines.size != n:
        raise InvalidInput(f"header says n={n} but file has {vlines.size} vertex lines",
                           line=hline, code="bad_header")
    skip, stride = sizes + vwgt * ncon, 1 + ewgt
    bad = (vlines < skip) | ((vlines - skip) % stride != 0)
    if bad.any():
        line = int(tk.line_no[h + 1 + int(np.argmax(bad))])
        raise InvalidInput(f"line {line}: vertex line must hold {skip} vertex value(s) then "
                           f"{'(neighbour weight) pairs' if ewgt else 'neighbours'}",
                           line=line, code="bad_columns")
    first = int(tk.line_tok[h + 1]) if n else 0
    idx = np.arange(first, first + int(vlines.sum()))
    rel = idx - np.repeat(tk.line_tok[h + 1:h + 1 + n], vlines)
    nb = (rel >= skip) & ((rel - skip) % stride == 0)
    sel = idx[nb]
    dst = tk.check_ids(sel, 1, n, "neighbour") - 1
    if sel.size != 2 * m:
        raise InvalidInput(f"header says m={m} ({2 * m} adjacency entries) but the file has "
                           f"{sel.size}", line=hline, code="bad_header")
    src = np.repeat(nodes, vlines)[nb]
    weights = tk.check_weights(sel + 1) if ewgt else None
    return src, dst, weights, nodes


def _parse_mtx(text: bytes, settings: Settings) -> _Edges:
    first = bytes(text[:1024]).split(b"\n", 1)[0].decode("ascii", "replace").lower().split()
    if len(first) != 5 or first[0] != "%%matrixmarket":
        raise InvalidInput("line 1: expected '%%MatrixMarket matrix coordinate <field> "
                           "<symmetry>'", line=1, code="bad_header")
    obj, layout, field, symmetry = first[1:]
    if (obj, layout) != ("matrix", "coordinate") or symmetry not in ("general", "symmetric") \
            or field not in ("pattern", "real", "integer", "double"):
        raise InvalidInput(f"line 1: unsupported Matrix Market type '{' '.join(first[1:])}': "
                           "only coordinate pattern/real/integer, general/symmetric",
                           line=1, code="unsupported_mtx")
    nl = bytes(text[:1024]).find(b"\n")
    tk = ts.tokenize(text, len(text) if nl < 0 else nl + 1, 2, want_float=field != "pattern")
    if tk.ntok.size == 0 or tk.ntok[0] != 3:
        raise InvalidInput("missing size line 'rows cols nnz'", line=2, code="bad_header")
    sline = int(tk.line_no[0])
    rows, cols, nnz = tk.header_ints(0, "size line 'rows cols nnz'")
    if rows != cols:
        raise InvalidInput(f"line {sline}: the matrix is {rows}x{cols}; an adjacency matrix "
                           "is square", line=sline, code="bad_header")
    nodes = _declared_nodes(rows, sline, settings, len(text), rows=nnz)
    k = 2 if field == "pattern" else 3
    bad = tk.ntok[1:] != k
    if bad.any():
        line = int(tk.line_no[1 + int(np.argmax(bad))])
        raise InvalidInput(f"line {line}: a {field} entry has {k} columns", line=line,
                           code="bad_columns")
    if tk.ntok.size - 1 != nnz:
        line = int(tk.line_no[1 + nnz]) if tk.ntok.size - 1 > nnz else sline
        raise InvalidInput(f"size line declares nnz={nnz} but the file has "
                           f"{tk.ntok.size - 1} entries", line=line, code="bad_header")
    idx = np.arange(3, 3 + k * nnz).reshape(nnz, k)
    src = tk.check_ids(idx[:, 0], 1, rows, "row index") - 1
    dst = tk.check_ids(idx[:, 1], 1, rows, "column index") - 1
    weights = tk.check_weights(idx[:, 2]) if k == 3 else None
    return src, dst, weights, nodes


def _parse_cnp(text: bytes, settings: Settings) -> _Edges:
    tk = ts.tokenize(text, 0, 1, colon=True)
    if tk.ntok.size == 0 or tk.ntok[0] != 1:
        raise InvalidInput("the first line of a CNP file must be the node count n", line=1,
                           code="bad_header")
    (n,) = tk.header_ints(0, "node count")
    nodes = _declared_nodes(n, int(tk.line_no[0]), settings, len(text), rows=tk.ival.size)
    idx = np.arange(1, tk.ival.size)
    tk.check_ids(idx, 0, n - 1, "node id")
    heads = tk.line_tok[1:]
    is_head = np.zeros(tk.ival.size, bool)
    is_head[heads] = True
    src = np.repeat(tk.ival[heads], tk.ntok[1:] - 1)
    return src, tk.ival[~is_head & (np.arange(tk.ival.size) > 0)], None, nodes


def _check_declared_size(text: bytes, fmt: str, settings: Settings, upload_bytes: int) -> None:
    """Refuse, before tokenizing, a CNP, MTX or METIS file whose header declares more nodes than
    the limits allow, or than its upload may store (``graph_too_sparse``); for CNP also more
    than fit in the parse budget. A 16-byte CNP file declaring 200,000,000 nodes once took 8 GB
    and 73 s; a 15-byte one declaring 99,999,999 stored 1.5 GB."""
    head = bytes(text[:1 << 16]).lstrip(b"\xef\xbb\xbf")
    numbered = ((i, raw.split()) for i, raw in enumerate(head.split(b"\n"), start=1))
    line, tokens = next(((i, t) for i, t in numbered if t and t[0][:1] not in (b"%", b"#")),
                        (0, []))
    if not tokens or not tokens[0].isdigit():
        return  # no header in sight, or not a count: the parser reports it
    n, what = int(tokens[0]), f"line {line}: the declared graph ({int(tokens[0]):,} nodes)"
    _check_node_limits(n, line, settings)
    if fmt == "cnp":
        check_budget(settings, what, len(text), rows=text.count(b"\n"), nodes=n, line=line)
    check_stored_bytes(settings, what, STORED_BYTES_PER_NODE * n, upload_bytes, line=line)


# --- JSON -------------------------------------------------------------------------------------

def _parse_json(text: bytes, settings: Settings) -> _Edges:
    check_budget(settings, "the JSON upload", BYTES_PER_JSON_BYTE * len(text))
    if (depth := json_depth(bytes(text))) > MAX_JSON_DEPTH:
        raise InvalidInput(f"the JSON is nested {depth} deep; a graph needs 3 levels (at most "
                           f"{MAX_JSON_DEPTH} accepted)", code="bad_json")
    try:
        doc = json.loads(bytes(text))
    except ValueError as exc:
        # Also UnicodeDecodeError, and an integer of more than 4,300 digits (Python's limit on
        # int <-> str conversion), which json.loads raises as a plain ValueError.
        line = getattr(exc, "lineno", None)
        where = f"line {line}: " if line else ""
        raise InvalidInput(f"{where}invalid JSON: {exc}", line=line, code="bad_json") from None
    except RecursionError:
        raise InvalidInput("the JSON is nested too deeply", code="bad_json") from None
    rows, nodes = doc, None
    if isinstance(doc, dict):
        rows, nodes = doc.get("edges", []), doc.get("nodes")
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise InvalidInput("'edges' must be a list of [u, v] or [u, v, w] rows", field="edges")
    widths = {len(r) for r in rows}
    if not widths <= {2, 3} or len(widths) > 1:
        raise InvalidInput("every edge row must be [u, v] or every row [u, v, w]",
                           field="edges", code="bad_columns")
    ends = [r[0] for r in rows] + [r[1] for r in rows] + (nodes if isinstance(nodes, list) else [])
    try:
        ids, table = _json_ids(ends, "edges"), None
    except InvalidInput:  # nodes named by labels (strings, numbers)
        ids, table = node_labels.encode(ends, "edges")
    src, dst, extra = ids[:(m := len(rows))], ids[m:2 * m], None if nodes is None else ids[2 * m:]
    weights = None
    if widths == {3}:
        ws = [r[2] for r in rows]
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in ws):
            raise InvalidInput("edge weights must be numbers", field="weights", code="bad_weight")
        weights = np.asarray(ws, np.float64)
        if not np.isfinite(weights).all():
            raise InvalidInput("edge weights must be finite numbers", field="weights",
                               code="bad_weight")
    if nodes is not None and not isinstance(nodes, list):
        raise InvalidInput("'nodes' must be a list of node ids", field="nodes")
    for ids, name in ((src, "edges"), (dst, "edges"), (extra, "nodes")):
        if ids is not None and ids.size and ids.max() > settings.max_node_id:
            raise LimitExceeded(f"node id {int(ids.max())} exceeds the limit "
                                f"{settings.max_node_id}", field=name, code="node_id_too_large")
    return (src, dst, weights, extra) if table is None else (src, dst, weights, extra, table)


def _json_ids(values: list, field: str) -> np.ndarray:
    if not all(type(v) is int for v in values):
        raise InvalidInput(f"'{field}' node ids must be integers", field=field,
                           code="bad_node_id")
    if any(v < 0 for v in values):
        raise InvalidInput(f"'{field}' node ids must be non-negative", field=field,
                           code="bad_node_id")
    try:
        return np.asarray(values, dtype=np.int64)
    except OverflowError:
        raise LimitExceeded(f"a node id in '{field}' does not fit in 64 bits", field=field,
                            code="node_id_too_large") from None


_PARSERS = {"edgelist": _parse_edgelist, "metis": _parse_metis, "mtx": _parse_mtx,
            "cnp": _parse_cnp, "json": _parse_json, "npz": columns.parse_npz,
            "parquet": columns.parse_parquet}
