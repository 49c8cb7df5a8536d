"""How a finished job's result folder is rendered for ``GET /v1/jobs/{id}/result``: JSON, CSV,
Parquet, npy and matrix rows, read from the ``.npy`` files its
:class:`~graphgpu.kernels.core.protocol.ResultManifest` names (memory-mapped, streamed in
chunks)."""

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
from graphgpu.kernels.core.protocol import ResultManifest
from graphgpu.kernels.core.store import load_npy
from graphgpu.service.deps import AppState
from graphgpu.service.errors import ApiError, Conflict, NotFound

Format = Literal["json", "csv", "npy", "parquet"]

#: Rows formatted per chunk of a streamed CSV.
CSV_CHUNK_ROWS = 1 << 16


def csv_rows(folder: Path, fields: list[str]) -> Iterator[bytes]:
    columns = [protocol.read_array(folder, f) for f in ["node_id", *fields]]
    formats = ["%d" if np.issubdtype(c.dtype, np.integer) else "%.17g" for c in columns]
    yield (",".join(["node_id", *fields]) + "\n").encode()
    for start in range(0, columns[0].shape[0], CSV_CHUNK_ROWS):
        block = [np.asarray(c[start:start + CSV_CHUNK_ROWS]) for c in columns]
        buffer = io.StringIO()
        table = np.rec.fromarrays(block)
        np.savetxt(buffer, table, fmt=formats, delimiter=",")
        yield buffer.getvalue().encode()


def csv_without_node_values(folder: Path, arrays: list[str],
                             summary: dict[str, Any]) -> Iterator[bytes]:
    """The CSV of a result with no per-node values: its first node x node matrix (header
    ``node_id`` then the target ids; unreachable left empty), else its 1-D arrays as columns
    (shorter ones padded with empty cells), else its summary as ``name,value`` rows (list
    items as ``name.i``)."""
    loaded = {a: load_npy(folder / f"{a}.npy") for a in arrays}
    matrix = next((a for a, v in loaded.items() if v.ndim == 2), None)
    if matrix is not None:
        ids = np.asarray(protocol.read_array(folder, "node_id"))
        yield (",".join(["node_id", *map(str, ids.tolist())]) + "\n").encode()
        values = loaded[matrix]
        for source, row in zip(ids.tolist(), values, strict=True):
            cells = ["" if v is None else repr(v) for v in json_distances(np.asarray(row))]
            yield (",".join([str(source), *cells]) + "\n").encode()
        return
    columns = {a: np.asarray(v).tolist() for a, v in loaded.items() if v.ndim == 1}
    if columns:
        yield (",".join(columns) + "\n").encode()
        for i in range(max(len(c) for c in columns.values())):
            yield (",".join(repr(c[i]) if i < len(c) else "" for c in columns.values())
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


def parquet(folder: Path, node_fields: list[str], arrays: list[str]) -> bytes:
    """A Parquet table of the node values (``node_id`` plus a column per field), or of a
    result's 1-D arrays of one length; 422 for other results, 501 without pyarrow."""
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
    sink = io.BytesIO()
    pq.write_table(pa.table(dict(zip(names, columns, strict=True))), sink)
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
                 limit: int) -> dict[str, dict[str, Any]]:
    """Rows of a node x node result matrix by original node id, read from its memory map.

    Returns ``{source id: {target id: value}}`` with unreachable as null; 422 for a malformed
    list, an unknown node or a field that is no matrix; 413 when the slice passes ``limit``.
    """
    try:
        ids = np.array([int(x) for x in wanted.split(",") if x.strip()], dtype=np.int64)
    except OverflowError:  # no node id is outside int64
        raise ApiError(422, "unknown_node", f"{param}: a node id is outside the 64-bit range",
                       field=param) from None
    except ValueError:
        ids = np.zeros(0, dtype=np.int64)
    if ids.size == 0:
        raise ApiError(422, "invalid_rows", f"{param} must be comma-separated node ids",
                       field=param)
    matrix = load_npy(folder / f"{field}.npy") if field in arrays else None
    node_ids = protocol.read_array(folder, "node_id")
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
    targets = [str(i) for i in np.asarray(node_ids).tolist()]
    return {str(source): dict(zip(targets, json_distances(np.asarray(matrix[row])),
                                  strict=True))
            for source, row in zip(ids.tolist(), pos.tolist(), strict=True)}


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
    if rows is not None:
        param, wanted = rows
        if format != "json":
            raise ApiError(422, "invalid_rows", f"{param} needs format=json", field=param)
        return JSONResponse(matrix_rows(folder, arrays, field or "distance", wanted, param,
                                        limit))
    if format == "csv":
        body = (csv_rows(folder, node_fields) if node_fields
                else csv_without_node_values(folder, arrays, manifest.summary))
        return StreamingResponse(body, media_type="text/csv", headers={
            "Content-Disposition": f"attachment; filename={job_id}.csv"})
    if format == "parquet":
        return Response(parquet(folder, node_fields, arrays),
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
    return as_json(folder, manifest, record, summary_only, limit)


def as_json(folder: Path, manifest: ResultManifest, record: dict[str, Any], summary_only: bool,
            limit: int) -> dict[str, Any]:
    """The JSON result: node values keyed by original node id, arrays as lists (413 past
    ``limit`` nodes or matrix cells)."""
    node_fields, arrays = manifest.node_values, manifest.arrays
    head = {
        "job_id": record["id"],
        "algorithm": record["algorithm"],
        "graph_id": record.get("graph_id"),
        "backend": record["backend"],
        "device": record["device"],
        "graph_view": manifest.graph_view,
        "node_id_fields": manifest.node_id_fields,
        "summary": manifest.summary,
        "available": {"node_values": list(node_fields), "arrays": list(arrays)},
    }
    if summary_only:
        return {**head, "node_values": {}, "arrays": {}}
    if node_fields and manifest.n > limit:
        raise ApiError(413, "result_too_large", f"{manifest.n} nodes are too many for JSON; use "
                       "?fields=summary, ?format=csv or ?format=npy&field=...", field="format")
    ids = protocol.read_array(folder, "node_id").tolist() if node_fields else []
    return {
        **head,
        "node_values": {f: dict(zip(map(str, ids), load_npy(folder / f"{f}.npy").tolist(),
                                    strict=True)) for f in node_fields},
        "arrays": {a: json_array(folder / f"{a}.npy", limit) for a in arrays},
    }
