"""How a finished job's result folder is rendered for ``GET /v1/jobs/{id}/result``: JSON, CSV,
Parquet, npy and matrix rows, read from the ``.npy`` files its
:class:`~graphgpu.kernels.core.protocol.ResultManifest` names (memory-mapped, streamed in
chunks).

Workers write node ids. For a graph named by labels, JSON, CSV and Parquet name nodes by label:
the node column, the keys of node values, and every value of the manifest's
``node_id_fields`` (``-1``, no node, becomes null or an empty cell), and the summary fields
that the algorithm's result model marks ``registry.NODE_ID_VALUE`` (a bfs ``source``, a
``top_node``); ``?rows=`` takes labels. ``?format=npy`` stays numeric: ids index the graph's
labels (``GET /v1/graphs/{id}/labels``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
from fastapi import Response
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.errors import KernelError
from graphgpu.kernels.core.labels import Labels
from graphgpu.kernels.core.protocol import ResultManifest
from graphgpu.kernels.core.registry import algorithms, node_id_summary_fields
from graphgpu.kernels.core.store import load_npy
from graphgpu.service.deps import AppState
from graphgpu.service.errors import ApiError, Conflict, NotFound

Format = Literal["json", "csv", "npy", "parquet"]

#: Rows formatted per chunk of a streamed CSV.
CSV_CHUNK_ROWS = 1 << 16


def result_node_ids(folder: Path) -> np.ndarray:
    """The original node ids of a result's rows (memory-mapped): every renderer reads them
    here."""
    return protocol.read_array(folder, protocol.NODE_ID)


def graph_labels(st: AppState, record: dict[str, Any]) -> Labels | None:
    """The labels of the graph a job ran on (None: a graph without, or a generator job); 409
    ``labels_deleted`` when the job ran on labels (its record says so) and the graph has been
    deleted since, rather than ids in their place."""
    try:
        return st.graphs.labels(record["graph_id"]) if record.get("graph_id") else None
    except KernelError:
        if record.get("labelled"):
            raise Conflict("labels_deleted", f"graph {record['graph_id']} and its node labels "
                           "were deleted; ?format=npy gives the result's node ids") from None
        return None


def named(values: np.ndarray, labels: Labels | None) -> list[Any]:
    """Node ids as the client knows the nodes: their labels (None for -1), or the ids."""
    return np.asarray(values).tolist() if labels is None else labels.decode(values)


def named_summary(summary: dict[str, Any], record: dict[str, Any],
                  labels: Labels | None) -> dict[str, Any]:
    """A result's summary as the client knows its nodes: on a labelled graph, each field the
    algorithm's result model marks as a node id (a list: each item) holds labels instead."""
    algorithm = algorithms().get(record["algorithm"]) if record["kind"] != "generate" else None
    if labels is None or algorithm is None:
        return summary
    out = dict(summary)
    for key in node_id_summary_fields(algorithm.result_model) & out.keys():
        value = out[key]
        if isinstance(value, list):
            out[key] = named(np.asarray(value, dtype=np.int64), labels)
        elif isinstance(value, int):
            out[key] = labels.decode([value])[0]
    return out


def csv_rows(folder: Path, fields: list[str], labels: Labels | None = None,
             id_fields: frozenset[str] = frozenset()) -> Iterator[bytes]:
    """The node values as CSV: ``node_id`` then a column per field, a row per node."""
    if labels is not None:
        yield from _labelled_csv_rows(folder, fields, labels, id_fields)
        return
    columns = [result_node_ids(folder), *(load_npy(folder / f"{f}.npy") for f in fields)]
    formats = ["%d" if np.issubdtype(c.dtype, np.integer) else "%.17g" for c in columns]
    yield (",".join(["node_id", *fields]) + "\n").encode()
    for start in range(0, columns[0].shape[0], CSV_CHUNK_ROWS):
        block = [np.asarray(c[start:start + CSV_CHUNK_ROWS]) for c in columns]
        buffer = io.StringIO()
        table = np.rec.fromarrays(block)
        np.savetxt(buffer, table, fmt=formats, delimiter=",")
        yield buffer.getvalue().encode()


def _labelled_csv_rows(folder: Path, fields: list[str], labels: Labels,
                       id_fields: frozenset[str]) -> Iterator[bytes]:
    columns = [result_node_ids(folder), *(load_npy(folder / f"{f}.npy") for f in fields)]
    is_id = [True, *(f in id_fields for f in fields)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["node_id", *fields])
    for start in range(0, columns[0].shape[0], CSV_CHUNK_ROWS):
        block = [c[start:start + CSV_CHUNK_ROWS] for c in columns]
        writer.writerows(zip(*(named(b, labels) if i else np.asarray(b).tolist()
                               for b, i in zip(block, is_id, strict=True)), strict=True))
        yield buffer.getvalue().encode()
        buffer.seek(0)
        buffer.truncate()


def csv_without_node_values(folder: Path, arrays: list[str], summary: dict[str, Any],
                             labels: Labels | None = None,
                             id_fields: frozenset[str] = frozenset()) -> Iterator[bytes]:
    """The CSV of a result with no per-node values: its first node x node matrix (header
    ``node_id`` then the target ids; unreachable left empty), else its 1-D arrays as columns
    (shorter ones padded with empty cells), else its summary as ``name,value`` rows (list
    items as ``name.i``)."""
    loaded = {a: load_npy(folder / f"{a}.npy") for a in arrays}
    matrix = next((a for a, v in loaded.items() if v.ndim == 2), None)
    if matrix is not None:
        ids = _csv_cells(named(result_node_ids(folder), labels))
        yield (",".join(["node_id", *ids]) + "\n").encode()
        values = loaded[matrix]
        for source, row in zip(ids, values, strict=True):
            cells = ["" if v is None else repr(v) for v in json_distances(np.asarray(row))]
            yield (",".join([source, *cells]) + "\n").encode()
        return
    columns = {a: _csv_cells(named(v, labels if a in id_fields else None))
               for a, v in loaded.items() if v.ndim == 1}
    if columns:
        yield (",".join(columns) + "\n").encode()
        for i in range(max(len(c) for c in columns.values())):
            yield (",".join(c[i] if i < len(c) else "" for c in columns.values())
                   + "\n").encode()
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["name", "value"])
    for name, value in summary.items():
        items = enumerate(value) if isinstance(value, list) else [(None, value)]
        for i, item in items:
            cell = item if item is None or isinstance(item, str | int | float) else json.dumps(item)
            writer.writerow([name if i is None else f"{name}.{i}", cell])
    yield buffer.getvalue().encode()


def _csv_cells(values: list[Any]) -> list[str]:
    """Values as CSV cells: numbers as ``repr`` writes them, None empty, strings quoted where
    CSV needs it."""
    return ["" if v is None else f'"{v.replace(chr(34), chr(34) * 2)}"'
            if isinstance(v, str) and any(ch in v for ch in ',"\r\n') else
            v if isinstance(v, str) else repr(v) for v in values]


def parquet(folder: Path, node_fields: list[str], arrays: list[str],
            labels: Labels | None = None, id_fields: frozenset[str] = frozenset()) -> bytes:
    """A Parquet table of the node values (``node_id`` plus a column per field), or of a
    result's 1-D arrays of one length; 422 for other results, 501 without pyarrow. Labels of
    one type make a column of that type; mixed ones, a column of their text."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ApiError(501, "parquet_unavailable", "the service has no pyarrow; install "
                       "graphgpu[dataframes] there, or use ?format=csv", field="format") from None
    names = ["node_id", *node_fields] if node_fields else arrays
    columns = [np.asarray(protocol.read_array(folder, name)) for name in names]
    if not columns or any(c.ndim != 1 or c.shape != columns[0].shape for c in columns):
        raise ApiError(422, "unsupported_format", "this result has no table for Parquet (a "
                       "matrix, or arrays of different lengths); use ?format=npy&field=...",
                       field="format")
    table = {}
    for name, column in zip(names, columns, strict=True):
        if labels is None or (name != "node_id" and name not in id_fields):
            table[name] = column
            continue
        values = labels.decode(column)
        try:
            table[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: their text
            table[name] = pa.array([None if v is None else str(v) for v in values])
    sink = io.BytesIO()
    pq.write_table(pa.table(table), sink)
    return sink.getvalue()


def json_distances(values: np.ndarray) -> list[Any]:
    """A row of a distance matrix for JSON: unreachable (-1 hop count, inf) becomes null."""
    unreachable = values < 0 if np.issubdtype(values.dtype, np.integer) else ~np.isfinite(values)
    out: list[Any] = values.tolist()
    for i in np.flatnonzero(unreachable).tolist():
        out[i] = None
    return out


def json_array(path: Path, limit: int) -> list[Any]:
    """An array for the JSON result; a node x node matrix row by row, refused over ``limit``."""
    array = load_npy(path)
    if array.ndim != 2:
        return np.asarray(array).tolist()
    if array.size > limit:
        raise ApiError(413, "result_too_large",
                       f"the {array.shape[0]:,} x {array.shape[1]:,} matrix '{path.stem}' is too "
                       "large for JSON; ask for ?fields=summary, ?rows=<ids> or "
                       "?format=npy&field=" + path.stem,
                       field="format")
    return [json_distances(np.asarray(row)) for row in array]


def matrix_rows(folder: Path, arrays: list[str], field: str, wanted: str, param: str,
                 limit: int, labels: Labels | None = None) -> dict[str, dict[str, Any]]:
    """Rows of a node x node result matrix by original node id (or label), read from its
    memory map.

    Returns ``{source id: {target id: value}}`` with unreachable as null; 422 for a malformed
    list, an unknown node or a field that is no matrix; 413 when the slice passes ``limit``.
    """
    try:
        tokens = [x.strip() for x in wanted.split(",") if x.strip()]
        if labels is not None:  # labels are named as the query writes them (strings)
            found = labels.find(tokens)
            if (found < 0).any():
                raise ApiError(422, "unknown_node", f"{param}: node "
                               f"{tokens[int(np.argmax(found < 0))]!r} is not in the graph",
                               field=param)
            tokens = found.tolist()
        ids = np.array([int(x) for x in tokens], dtype=np.int64)
    except OverflowError:  # no node id is outside int64
        raise ApiError(422, "unknown_node", f"{param}: a node id is outside the 64-bit range",
                       field=param) from None
    except ValueError:
        ids = np.zeros(0, dtype=np.int64)
    if ids.size == 0:
        raise ApiError(422, "invalid_rows", f"{param} must be comma-separated node ids",
                       field=param)
    matrix = load_npy(folder / f"{field}.npy") if field in arrays else None
    node_ids = result_node_ids(folder)
    n = node_ids.shape[0]
    if matrix is None or matrix.shape != (n, n):
        matrices = [a for a in arrays if load_npy(folder / f"{a}.npy").ndim == 2]
        raise ApiError(422, "unknown_field", f"field must be a node x node matrix of this result "
                       f"({', '.join(matrices) or 'it has none'})", field="field")
    pos = np.searchsorted(node_ids, ids)
    found = (pos < n) & (np.asarray(node_ids[np.minimum(pos, n - 1)]) == ids)
    if not found.all():
        raise ApiError(422, "unknown_node", f"{param}: node {int(ids[~found][0])} is not in the "
                       "graph", field=param)
    if ids.size * n > limit:
        raise ApiError(413, "result_too_large", f"{ids.size} rows of {n:,} values are too many "
                       "for JSON; ask for fewer rows or ?format=npy&field=" + field, field=param)
    targets = [_key(i) for i in named(node_ids, labels)]
    return {_key(source): dict(zip(targets, json_distances(np.asarray(matrix[row])),
                                   strict=True))
            for source, row in zip(named(ids, labels), pos.tolist(), strict=True)}


def _key(node: Any) -> str:
    """A node id or label as a JSON object key (a number as JSON writes it)."""
    return node if isinstance(node, str) else json.dumps(node)


def generated_graph(st: AppState, record: dict[str, Any]) -> str | None:
    """The id of the graph a succeeded generator job made (None for other jobs, or once its
    result expired), granted to the job's tenant: this is where the tenant learns the id.
    Named as the worker named it, not by whoever stored the same graph first."""
    if record["kind"] != "generate" or record["status"] != "succeeded":
        return None
    try:
        graph_id = protocol.read_manifest(st.settings, record["id"]).summary["graph_id"]
    except FileNotFoundError:
        return None
    if record.get("owner") is not None:
        name = record.get("graph_name") or f"{record['algorithm']}-{record['params']['seed']}"
        st.owners.grant(graph_id, record["owner"], name)
    return graph_id


def manifest_of(st: AppState, record: dict[str, Any]) -> tuple[Path, ResultManifest]:
    """A succeeded job's result folder and manifest (409 for a job that did not succeed, 404
    once the result expired)."""
    if record["status"] != "succeeded":
        error = record.get("error") or {}
        detail = f": {error.get('message')}" if error else ""
        raise Conflict("job_not_succeeded", f"job {record['id']} is {record['status']}{detail}")
    try:
        manifest = protocol.read_manifest(st.settings, record["id"])
    except FileNotFoundError:
        raise NotFound(f"the result of job {record['id']} has expired") from None
    generated_graph(st, record)
    return protocol.result_folder(st.settings, record["id"]), manifest


def render(st: AppState, record: dict[str, Any], format: Format, field: str | None,
           rows: tuple[str, str] | None, summary_only: bool) -> Any:
    """The response of ``GET /v1/jobs/{id}/result`` for a job's record.

    Parameters
    ----------
    st : AppState
    record : dict
        The job's record.
    format : {"json", "csv", "npy", "parquet"}
    field : str, optional
        The array of ``format=npy`` or of ``rows``.
    rows : (str, str), optional
        The query parameter's name (``rows`` or ``sources``) and its comma-separated ids.
    summary_only : bool
        JSON without node values and arrays.
    """
    folder, manifest = manifest_of(st, record)
    job_id, limit = record["id"], st.settings.max_json_result_nodes
    node_fields, arrays = manifest.node_values, manifest.arrays
    labels = graph_labels(st, record) if format != "npy" else None
    id_fields = frozenset(manifest.node_id_fields)
    if rows is not None:
        param, wanted = rows
        if format != "json":
            raise ApiError(422, "invalid_rows", f"{param} needs format=json", field=param)
        return JSONResponse(matrix_rows(folder, arrays, field or "distance", wanted, param,
                                        limit, labels))
    if format == "csv":
        body = (csv_rows(folder, node_fields, labels, id_fields) if node_fields
                else csv_without_node_values(folder, arrays,
                                             named_summary(manifest.summary, record, labels),
                                             labels, id_fields))
        return StreamingResponse(body, media_type="text/csv", headers={
            "Content-Disposition": f"attachment; filename={job_id}.csv"})
    if format == "parquet":
        return Response(parquet(folder, node_fields, arrays, labels, id_fields),
                        media_type="application/vnd.apache.parquet",
                        headers={"Content-Disposition":
                                 f"attachment; filename={job_id}.parquet"})
    if format == "npy":
        available = ["node_id", *node_fields, *arrays]
        name = field or (node_fields[0] if node_fields else None)
        if name not in available:
            raise ApiError(422, "unknown_field", f"field must be one of {', '.join(available)}",
                           field="field")
        path, filename = folder / f"{name}.npy", f"{job_id}.{name}.npy"
        if not path.exists():  # identity node ids, not written: sent as rebuilt
            buffer = io.BytesIO()
            np.save(buffer, protocol.read_array(folder, name))
            return Response(buffer.getvalue(), media_type="application/octet-stream", headers={
                "Content-Disposition": f'attachment; filename="{filename}"'})
        return FileResponse(path, media_type="application/octet-stream", filename=filename)
    return as_json(folder, manifest, record, summary_only, limit, labels)


def as_json(folder: Path, manifest: ResultManifest, record: dict[str, Any], summary_only: bool,
            limit: int, labels: Labels | None = None) -> dict[str, Any]:
    """The JSON result: node values keyed by original node id (or label), arrays as lists
    (413 past ``limit`` nodes or matrix cells); ``labelled`` says which."""
    node_fields, arrays = manifest.node_values, manifest.arrays
    head = {
        "job_id": record["id"],
        "algorithm": record["algorithm"],
        "graph_id": record.get("graph_id"),
        "backend": record["backend"],
        "device": record["device"],
        "graph_view": manifest.graph_view,
        "node_id_fields": manifest.node_id_fields,
        "labelled": labels is not None,
        "summary": named_summary(manifest.summary, record, labels),
        "available": {"node_values": list(node_fields), "arrays": list(arrays)},
    }
    if summary_only:
        return {**head, "node_values": {}, "arrays": {}}
    if node_fields and manifest.n > limit:
        raise ApiError(413, "result_too_large", f"{manifest.n} nodes are too many for JSON; use "
                       "?fields=summary, ?format=csv or ?format=npy&field=...", field="format")
    ids = named(result_node_ids(folder), labels) if node_fields else []
    keys = [_key(i) for i in ids]

    def values(name: str) -> list[Any]:
        array = load_npy(folder / f"{name}.npy")
        if labels is not None and name in manifest.node_id_fields and array.ndim == 1:
            return named(array, labels)
        return json_array(folder / f"{name}.npy", limit)

    return {
        **head,
        "node_values": {f: dict(zip(keys, values(f), strict=True)) for f in node_fields},
        "arrays": {a: values(a) for a in arrays},
    }
