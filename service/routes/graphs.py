"""Graph upload, listing, metadata, deletion and generation."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.types import Receive, Scope, Send

from graphgpu.kernels.core.errors import KernelError
from graphgpu.kernels.core.graph import Graph, build_graph, content_id
from graphgpu.kernels.core.io.budget import check_stored_bytes
from graphgpu.kernels.core.io.columns import FormatUnavailable
from graphgpu.kernels.core.io.formats import FORMATS, parse_graph
from graphgpu.kernels.core.io.npz import edges_npz
from graphgpu.kernels.core.registry import Generator, get_generator
from graphgpu.kernels.generators import preferred_backend, validate_params
from graphgpu.service.admission import require_backend, validation_error
from graphgpu.service.auth import Caller, caller
from graphgpu.service.deps import State, state
from graphgpu.service.errors import ApiError, Conflict, from_kernel_error
from graphgpu.service.jobs import NoRoom
from graphgpu.service.limits import check_device_memory, check_host_memory, check_tenant_quota
from graphgpu.service.routes.jobs import job_out
from graphgpu.service.schemas import ErrorBody, GenerateRequest, GraphList, GraphOut, JobOut
from graphgpu.service.uploads import parse_slot, read_upload
from graphgpu.service.validation import check_name, file_name, strict_params

router = APIRouter(prefix="/v1/graphs", tags=["graphs"])
#: Seconds a client over the download limit is told to wait.
DOWNLOAD_RETRY_AFTER = 5

_UPLOAD_DOC = """Upload a graph file as the raw request body or as a multipart field `file`.

Formats: `edgelist` (SNAP style: whitespace/comma/tab separated `u v [w]`, `#`/`%` comments;
nodes named by labels such as `alice bob` when the first data line names one so),
`metis`, `mtx` (Matrix Market coordinate), `cnp` (`n`, then `i: j k ...`), `json`
(`{"edges": [[u, v], ...]}`; nodes may be strings or numbers), or `auto` (detected; never picks
METIS). Any of them may be gzip'd.

Binary edges, no text parsed: `npz` (NumPy `.npz` of 1-D arrays `src`, `dst`: integer node
ids, one per edge; optional `weight`: numbers, one per edge; optional `nodes`: ids of nodes
without edges; what `GET /v1/graphs/{id}/edges` serves) and `parquet` (columns `src`, `dst`,
optional `weight`; no nulls; needs pyarrow on the service, else 415 `parquet_unavailable`). Both
are detected by `auto`. A missing or unexpected column is 400 `bad_columns`, a wrong type
`bad_dtype`, columns of different lengths `bad_length`, a negative id `bad_node_id`, a
non-finite weight `bad_weight`, each with `field` naming the column.

A graph named by labels (`labelled: true`) takes labels as node parameters and answers with
them; `GET /v1/graphs/{id}/labels` lists them by node id.

The graph is normalised to an undirected simple graph (symmetrised, self-loops dropped, duplicate
edges merged; the response counts each), or with `directed=true` to a directed one (arcs keep
their direction; duplicate arcs merged, self-loops dropped), and stored content-addressed:
uploading the same graph again returns the existing id with status 200 instead of 201. Graphs
belong to the API key's tenant: another tenant uploading the same content gets the same id but
its own copy of the metadata (name, time), and neither sees the other's.

Limits: the body is at most `GRAPHGPU_MAX_UPLOAD_BYTES`; a gzip'd one inflates to at most
`GRAPHGPU_MAX_INFLATION_RATIO` times its size (beyond 64 MiB); the stored graph takes at most
`GRAPHGPU_STORED_BYTES_PER_UPLOAD_BYTE` times the upload plus `GRAPHGPU_STORED_BYTES_ALLOWANCE`
(413 `graph_too_sparse`: a header declaring a huge node count with few edges), and a tenant's
graphs at most `GRAPHGPU_MAX_TENANT_STORED_BYTES` (507 `storage_quota_exceeded`)."""

_UPLOAD_BODY: dict[str, Any] = {"requestBody": {"required": True, "content": {
    "application/octet-stream": {
        "schema": {"type": "string", "format": "binary"},
        "example": "# u v [weight]\n0 1\n1 2\n2 0\n",
    },
    "application/x-npz": {"schema": {
        "type": "string", "format": "binary",
        "description": "format=npz (or auto): a NumPy .npz of src, dst [, weight, nodes]"}},
    "application/vnd.apache.parquet": {"schema": {
        "type": "string", "format": "binary",
        "description": "format=parquet (or auto): columns src, dst [, weight]"}},
    "multipart/form-data": {"schema": {
        "type": "object", "required": ["file"],
        "properties": {"file": {"type": "string", "format": "binary"},
                       "format": {"type": "string", "enum": list(FORMATS)},
                       "name": {"type": "string"}},
    }},
}}}

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 404, 409, 413, 415, 422, 507)
}


#: Formats whose files can say which way an edge goes (MTX only when its symmetry is general).
DIRECTED_FORMATS = ("edgelist", "mtx", "json", "npz", "parquet")


def _mtx_symmetric(data: bytes) -> bool:
    """Whether a Matrix Market upload (plain or gzip'd) declares ``symmetric`` on line 1."""
    head = bytes(data[:4096])
    if head[:2] == b"\x1f\x8b":
        head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(bytes(data[:65536]), 4096)
    return b"symmetric" in head.split(b"\n", 1)[0].lower()


def _parse_and_store(data: bytes, fmt: str, name: str | None, st: State,
                     tenant: str, directed: bool = False) -> tuple[dict, bool]:
    """Store the graph and give ``tenant`` its claim; True if the claim is new.

    ``directed`` keeps arc directions for the formats that carry them (:data:`DIRECTED_FORMATS`,
    MTX ``general``); a symmetric MTX, METIS or CNP file is stored undirected.
    """
    parsed = parse_graph(data, fmt, settings=st.settings)
    directed = directed and parsed.format in DIRECTED_FORMATS and not (
        parsed.format == "mtx" and _mtx_symmetric(data))
    graph, report = build_graph(parsed.src, parsed.dst, parsed.weights,
                                extra_nodes=parsed.extra_nodes, settings=st.settings,
                                directed=directed)
    source = {"format": parsed.format, "compressed": parsed.compressed, "bytes": len(data)}
    labels = parsed.labels
    del parsed  # its edge arrays: the graph holds what is kept
    check_stored_bytes(st.settings, "the graph", graph.nbytes(), len(data))
    _check_quota(st, tenant, graph)
    meta, _ = st.graphs.put(graph, name=name, source=source, report=report, labels=labels)
    # The last other owner's delete may remove the files between the put and the claim: claim
    # under the graph's lock, and store again if they went.
    with st.owners.lock(meta["id"]):
        if not st.graphs.exists(meta["id"]):
            meta, _ = st.graphs.put(graph, name=name, source=source, report=report,
                                    labels=labels)
        return meta, st.owners.grant(meta["id"], tenant, name)


def _check_quota(st: State, tenant: str, graph: Graph) -> None:
    """507 when storing ``graph`` for ``tenant`` would pass ``max_tenant_stored_bytes`` (a
    graph the tenant already holds costs nothing more)."""
    quota = st.settings.max_tenant_stored_bytes
    if not quota:
        return
    used = 0
    for graph_id in st.owners.graphs_of(tenant):
        try:
            used += int(st.graphs.meta(graph_id)["bytes"])
        except KernelError:
            continue  # deleted meanwhile
    adding = graph.nbytes()
    if used + adding > quota and st.owners.owns(content_id(graph), tenant):
        return  # held already: storing it again takes nothing more
    check_tenant_quota(st.settings, tenant, used, adding)


@router.post("", operation_id="graphs-upload", summary="Upload a graph", description=_UPLOAD_DOC,
             status_code=201, response_model=GraphOut, openapi_extra=_UPLOAD_BODY,
             responses={200: {"model": GraphOut, "description": "Already stored: its metadata."},
                        **_ERRORS})
async def upload_graph(
    request: Request,
    response: Response,
    format: Annotated[str, Query(description=f"One of {', '.join(FORMATS)}.")] = "auto",
    name: Annotated[str | None, Query(max_length=200)] = None,
    directed: Annotated[bool, Query(description=(
        "Keep edge directions (edgelist, json, npz, parquet, mtx general: `u v` is the arc "
        "u -> v); the graph then has an in- and an out-CSR. Symmetric MTX, METIS and CNP stay "
        "undirected."))] = False,
) -> dict[str, Any]:
    st = state(request)
    if format not in FORMATS:
        raise ApiError(422, "unknown_format", f"format must be one of {', '.join(FORMATS)}",
                       field="format")
    upload = await read_upload(request, st.settings.max_upload_bytes)
    fmt = upload.fields.get("format", format)
    if fmt not in FORMATS:  # the multipart field, checked as the query parameter is
        raise ApiError(422, "unknown_format", f"format must be one of {', '.join(FORMATS)}",
                       field="format")
    name = check_name(upload.fields.get("name", name), st.settings) or file_name(
        upload.filename, st.settings)
    tenant = caller(request).tenant
    try:
        # New for this tenant, whoever stored the content first (not the caller's business).
        async with parse_slot(upload.data):
            meta, created = await run_in_threadpool(_parse_and_store, upload.data, fmt, name,
                                                    st, tenant, directed)
    except FormatUnavailable as exc:
        raise from_kernel_error(exc, status=415) from None
    except KernelError as exc:
        raise from_kernel_error(exc) from None
    response.status_code = 201 if created else 200
    response.headers["Location"] = f"/v1/graphs/{meta['id']}"
    return st.owners.view(meta, tenant)


@router.get("", operation_id="graphs-list", summary="List stored graphs", response_model=GraphList)
def list_graphs(request: Request) -> dict[str, Any]:
    """The caller's graphs (every graph for an admin)."""
    st, who = state(request), caller(request)
    if who.admin:
        metas = st.graphs.list()
    else:
        metas = []
        for graph_id in st.owners.graphs_of(who.tenant):
            try:
                metas.append(st.graphs.meta(graph_id))
            except KernelError:
                continue  # deleted by an admin meanwhile
    views = [st.owners.view(meta, who.tenant) for meta in metas]
    return {"graphs": sorted(views, key=lambda meta: meta["created_at"])}


@router.get("/{graph_id}", operation_id="graphs-get", summary="A graph's metadata",
            response_model=GraphOut, responses=_ERRORS)
def get_graph(graph_id: str, request: Request) -> dict[str, Any]:
    st = state(request)
    return st.owners.view(st.graphs.meta(graph_id), caller(request).tenant)


def _jobs_using(st: State, graph_id: str, who: Caller) -> bool:
    """Whether a queued or running job that the caller can see uses the graph."""
    return any(who.sees(st.jobs.owner(job_id)) for job_id in st.jobs.graph_jobs(graph_id))


@router.delete("/{graph_id}", operation_id="graphs-delete", summary="Delete a graph",
               status_code=204, responses=_ERRORS)
def delete_graph(graph_id: str, request: Request) -> Response:
    """Drop the caller's claim on the graph (an admin's delete drops every claim); the files go
    when no claim is left. 409 while one of the caller's jobs uses it."""
    st, who = state(request), caller(request)
    st.graphs.meta(graph_id)  # 404 first
    if _jobs_using(st, graph_id, who):
        raise Conflict("graph_in_use", f"graph {graph_id} is used by a queued or running job")
    owners = st.owners.owners(graph_id) if who.admin else [who.tenant]
    with st.owners.lock(graph_id):  # against an upload of the same graph claiming it meanwhile
        if st.owners.release(graph_id, owners) == 0 and not st.jobs.graph_in_use(graph_id):
            st.graphs.delete(graph_id)
    return Response(status_code=204)


def _check_generator_memory(st: State, generator: Generator, params: Any,
                            requested: str) -> dict[str, Any] | None:
    """The generator's memory estimate on the backend it will likely run on, refused (413) when
    no live worker has that much host (or GPU) memory available."""
    if generator.estimate is None:
        return None
    workers = st.jobs.capacity()  # free memory less what admitted jobs take
    gpu = requested != "cpu" and any(w["backend"] == "gpu" for w in workers)
    backend = preferred_backend(generator.name, params, gpu=gpu)
    record = {"backend": backend, **generator.estimate(params, backend).as_dict()}
    check_host_memory(workers, record)
    if backend == "gpu":
        check_device_memory(workers, record)
    return record


@router.post("/generate", operation_id="graphs-generate", summary="Generate a graph",
             status_code=202, response_model=JobOut, responses=_ERRORS,
             description="Queue a generator job; its result's summary holds the new `graph_id`. "
                         "Same generator, params and seed give the same graph on a given backend.")
def generate_graph(body: GenerateRequest, request: Request, response: Response) -> dict[str, Any]:
    st = state(request)
    try:
        generator = get_generator(body.generator)
    except KernelError as exc:
        raise from_kernel_error(exc, status=422, field="generator") from None
    check_name(body.name, st.settings)
    try:
        params = validate_params(generator.name, strict_params(generator.params_model,
                                                               body.params, st.settings))
    except ValidationError as exc:
        raise validation_error(exc) from None
    except KernelError as exc:
        raise from_kernel_error(exc, field_prefix="params.") from None
    require_backend(st.jobs.live_workers(), body.backend)
    who = caller(request)
    estimate = _check_generator_memory(st, generator, params, body.backend)
    needs = {k: int(estimate[k]) for k in ("host_bytes", "device_bytes")
             if estimate and estimate.get(k) is not None
             and (k == "host_bytes" or estimate["backend"] == "gpu")}
    try:  # memory checked again and the job recorded as one step
        record, _ = st.jobs.submit(kind="generate", name=generator.name, graph_id=None,
                                   params=params.model_dump(mode="json"), backend=body.backend,
                                   idempotency_key=None, owner=who.tenant, key_id=who.key_id,
                                   extra={"graph_name": body.name,
                                          **({"estimate": estimate} if estimate else {})},
                                   needs=needs)
    except NoRoom as exc:
        check_host_memory(exc.workers, estimate or {})
        if estimate and estimate["backend"] == "gpu":
            check_device_memory(exc.workers, estimate)
        raise
    response.headers["Location"] = f"/v1/jobs/{record['id']}"
    return job_out(record)


class _HeldStream(StreamingResponse):
    """A streamed response that gives back its download slot when it ends, however it ends."""

    def __init__(self, content: Iterator[bytes], release: Callable[[], None],
                 **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.release()


@router.get("/{graph_id}/edges", operation_id="graphs-edges", summary="A graph's edges",
            responses={200: {"content": {"application/octet-stream": {}},
                             "description": "NumPy .npz (uncompressed, streamed): `src`, `dst` "
                                            "(original ids), `nodes` and, for a weighted "
                                            "graph, `weight`."},
                       429: {"model": ErrorBody, "description": "Too many downloads at once "
                             "(GRAPHGPU_MAX_CONCURRENT_DOWNLOADS): retry after `Retry-After`."},
                       **_ERRORS},
            response_class=Response)
def get_edges(graph_id: str, request: Request) -> Response:
    """The stored graph's edges as a NumPy ``.npz`` of ``src``, ``dst`` (original node ids) and
    ``weight`` when weighted: each undirected edge once (``src < dst``), each arc of a directed
    graph once. Every node is in ``nodes``. Streamed from the stored arrays block by block."""
    st = state(request)
    graph = st.graphs.load(graph_id)  # 404 before a slot is taken
    slots = request.app.state.downloads
    if not slots.acquire(blocking=False):
        raise ApiError(429, "too_many_downloads",
                       f"{st.settings.max_concurrent_downloads} edge downloads are being served "
                       "(GRAPHGPU_MAX_CONCURRENT_DOWNLOADS); retry shortly",
                       headers={"Retry-After": str(DOWNLOAD_RETRY_AFTER)})
    return _HeldStream(edges_npz(graph), slots.release, media_type="application/octet-stream",
                       headers={"Content-Disposition": f"attachment; filename={graph_id}.npz"})


@router.get("/{graph_id}/labels", operation_id="graphs-labels", summary="A graph's node labels",
            responses={200: {"content": {"application/json": {}},
                             "description": "JSON array: the label of node id i at index i."},
                       **_ERRORS},
            response_class=Response)
def get_labels(graph_id: str, request: Request) -> Response:
    """The node labels of a graph uploaded with labels (an edge list or JSON naming nodes by
    strings or numbers): a JSON array, entry ``i`` the label of node id ``i`` (the ids that
    ``?format=npy`` results hold). 409 ``no_labels`` for a graph whose ids are its names (404 is
    kept for a graph that does not exist or is not the caller's)."""
    labels = state(request).graphs.labels(graph_id)
    if labels is None:
        raise ApiError(409, "no_labels", f"graph {graph_id} has no labels: its node ids are "
                       "the names its upload gave", field="graph_id")
    return StreamingResponse(labels.json_chunks(), media_type="application/json")
