"""Job submission, polling, results and cancellation."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from pydantic import ValidationError

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.errors import KernelError
from graphgpu.kernels.core.registry import (
    Algorithm,
    Backend,
    Estimate,
    get_algorithm,
    graph_view,
)
from graphgpu.kernels.core.store import load_npy
from graphgpu.service import results
from graphgpu.service.auth import caller
from graphgpu.service.deps import State, state
from graphgpu.service.errors import ApiError, Conflict, NotFound, check_id
from graphgpu.service.limits import (
    check_device_memory,
    check_host_memory,
    default_device_bytes,
    default_host_bytes,
    job_slots,
)
from graphgpu.service.schemas import (
    ErrorBody,
    JobList,
    JobOut,
    JobRequest,
    JobStatus,
    ResultOut,
)
from graphgpu.service.validation import check_node_values, strict_params

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (404, 409, 413, 422)
}
#: Longest long-poll (``GET /v1/jobs/{id}?wait=``), in seconds: below common proxy timeouts.
MAX_WAIT_SECONDS = 30


def job_out(record: dict[str, Any]) -> dict[str, Any]:
    """The public view of a job record."""
    out = {key: record.get(key) for key in JobOut.model_fields}
    out["timings"] = record.get("timings") or {}
    if record["status"] == "succeeded":
        out["result_url"] = f"/v1/jobs/{record['id']}/result"
    return out


def validation_error(exc: ValidationError, prefix: str = "params") -> ApiError:
    """422 naming the first invalid parameter, e.g. ``params.source``."""
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first["loc"])
    field = f"{prefix}.{loc}" if loc else prefix
    return ApiError(422, "invalid_params", f"{field}: {first['msg']}", field=field)


def require_backend(st: State, backend: str) -> None:
    """Refuse at submit time a backend that no live worker offers."""
    if backend == "cpu":
        return  # every worker runs the CPU backends
    workers = st.jobs.live_workers()
    if backend == "gpu" and not any(w["backend"] == "gpu" for w in workers):
        raise Conflict("no_gpu_worker", "backend=gpu was asked for but no GPU worker is running",
                       field="backend")


def _check_node_params(st: State, graph_id: str, names: tuple[str, ...], params: Any) -> None:
    if not names:
        return
    node_ids = st.graphs.node_ids(graph_id)
    for name in names:
        value = getattr(params, name)
        check_node_values(np.asarray(value if value is not None else [], dtype=object)
                          .ravel().tolist(), f"params.{name}")
        values = np.atleast_1d(np.asarray(value if value is not None else [], dtype=np.int64))
        pos = np.searchsorted(node_ids, values)
        found = (pos < node_ids.shape[0]) & (node_ids[np.minimum(pos, node_ids.shape[0] - 1)]
                                              == values)
        if not found.all():
            missing = int(values[~found][0])
            raise ApiError(422, "unknown_node", f"params.{name}: node {missing} is not in graph "
                           f"{graph_id}", field=f"params.{name}")


def _estimate_backend(st: State, requested: str) -> Backend:
    """The backend a job will most likely run on: ``auto`` goes to a GPU when one is live."""
    if requested in ("cpu", "gpu"):
        return "cpu" if requested == "cpu" else "gpu"
    return "gpu" if any(w["backend"] == "gpu" for w in st.jobs.live_workers()) else "cpu"


def _check_estimate(st: State, algorithm: Algorithm, graph_id: str, params: Any,
                    requested: str) -> dict[str, Any] | None:
    """Refuse, before queueing, a job whose estimated cost passes a limit; else its estimate.

    A job that may run on a GPU is also compared with the largest free GPU memory of the live
    GPU workers (with a default device estimate for algorithms that make none).
    """
    backend = _estimate_backend(st, requested)
    if algorithm.estimate is None and backend == "cpu":  # (the default is not recorded)
        check_host_memory(st.jobs.live_workers(), {
            "backend": backend, "host_bytes": default_host_bytes(st.graphs.meta(graph_id))})
        return None
    estimate = Estimate()
    if algorithm.estimate is not None:
        try:
            graph, _ = graph_view(algorithm, st.graphs.load(graph_id))
            estimate = algorithm.estimate(graph, params, backend)
        except KernelError as exc:
            raise ApiError(422, exc.code, exc.message,
                           field=f"params.{exc.field}" if exc.field else "params") from None
    record = {"backend": backend, **estimate.as_dict()}
    if backend == "gpu" and estimate.device_bytes is None:
        record["device_bytes"] = default_device_bytes(st.graphs.meta(graph_id))
    limits = st.settings
    if estimate.result_bytes is not None and estimate.result_bytes > limits.max_result_bytes:
        raise ApiError(413, "result_too_large",
                       f"the result would take about {estimate.result_bytes:,} bytes, over "
                       f"GRAPHGPU_MAX_RESULT_BYTES={limits.max_result_bytes:,}"
                       f"{'; ' + estimate.detail if estimate.detail else ''}",
                       field="params", extra={"estimate": record})
    if estimate.seconds is not None and estimate.seconds > limits.max_job_seconds:
        raise ApiError(422, "job_too_long",
                       f"the job would take about {estimate.seconds:,.0f} s on the {backend}, over "
                       f"GRAPHGPU_MAX_JOB_SECONDS={limits.max_job_seconds}"
                       f"{'; ' + estimate.detail if estimate.detail else ''}",
                       field="params", extra={"estimate": record})
    host = {} if estimate.host_bytes is not None else {  # (a default, not recorded)
        "host_bytes": default_host_bytes(st.graphs.meta(graph_id), estimate.result_bytes)}
    check_host_memory(st.jobs.live_workers(), {**record, **host})
    if backend == "gpu":
        check_device_memory(st.jobs.live_workers(), record)
    return record


@router.post("", operation_id="jobs-submit", summary="Run an algorithm on a graph",
             status_code=202, response_model=JobOut,
             responses={200: {"model": JobOut, "description": "The job an earlier request with "
                                                              "this Idempotency-Key created."},
                        **_ERRORS})
def submit_job(
    body: JobRequest,
    request: Request,
    response: Response,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> dict[str, Any]:
    """Validate and queue a job. Poll the `Location` it returns.

    The same `Idempotency-Key` with the same body returns the same job; with another body, 422.
    """
    st = state(request)
    try:
        algorithm = get_algorithm(body.algorithm)
        params = strict_params(algorithm.params_model, body.params, st.settings)
    except KernelError as exc:
        raise ApiError(422, exc.code, exc.message, field="algorithm") from None
    except ValidationError as exc:
        raise validation_error(exc) from None
    check_id(body.graph_id, "graph", "graph_id")
    who = caller(request)
    if not who.admin and not st.owners.owns(body.graph_id, who.tenant):
        raise NotFound(f"graph {body.graph_id!r} does not exist", field="graph_id")
    if st.graphs.meta(body.graph_id).get("directed") and algorithm.directed == "refuse":
        raise ApiError(422, "directed_graph", f"{algorithm.name} does not run on directed "
                       "graphs; upload the graph without directed=true", field="directed")
    _check_node_params(st, body.graph_id, algorithm.node_params, params)
    require_backend(st, body.backend)
    estimate = _check_estimate(st, algorithm, body.graph_id, params, body.backend)
    record, created = st.jobs.submit(
        kind="algorithm", name=algorithm.name, graph_id=body.graph_id,
        params=params.model_dump(mode="json"), backend=body.backend,
        idempotency_key=idempotency_key, owner=who.tenant, key_id=who.key_id,
        extra={**({"estimate": estimate} if estimate else {}),
               **job_slots(algorithm, params, st.settings)} or None,
    )
    response.status_code = 202 if created else 200
    response.headers["Location"] = f"/v1/jobs/{record['id']}"
    return job_out(record)


@router.get("", operation_id="jobs-list", summary="Recent jobs", response_model=JobList)
def list_jobs(
    request: Request,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The caller's jobs, newest first (every tenant's for an admin)."""
    who = caller(request)
    return {"jobs": [job_out(r) for r in state(request).jobs.list(
        limit, status, tenant=None if who.admin else who.tenant)]}


@router.get("/{job_id}", operation_id="jobs-get", summary="Poll a job", response_model=JobOut,
            responses=_ERRORS)
async def get_job(
    job_id: str,
    request: Request,
    response: Response,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_SECONDS, description=(
        "Long-poll: answer as soon as the job ends, or after this many seconds."))] = 0,
) -> dict[str, Any]:
    """The job as it is now; with `wait`, as soon as it has ended (or when `wait` runs out)."""
    st = state(request)
    if wait > 0:
        record = await _long_poll(request, st, job_id, wait)
    else:
        record = await run_in_threadpool(st.jobs.get, job_id)
    if record["status"] not in protocol.FINISHED:
        response.headers["Retry-After"] = "1"
    return job_out(record)


async def _long_poll(request: Request, st: State, job_id: str, seconds: float) -> dict[str, Any]:
    """The job's record once it has ended, or after ``seconds``.

    Subscribes to the job's done channel (workers publish on it in the transaction that records
    the final status) before reading the record, so an ending between the two is not missed.
    """
    pubsub = request.app.state.async_redis.pubsub()
    try:
        await pubsub.subscribe(protocol.job_done_channel(st.settings, job_id))
        record = await run_in_threadpool(st.jobs.get, job_id)
        deadline = time.monotonic() + seconds
        while record["status"] not in protocol.FINISHED:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            # Blocks on the socket; returns None at once for the subscribe confirmation.
            if await pubsub.get_message(ignore_subscribe_messages=True, timeout=left):
                record = await run_in_threadpool(st.jobs.get, job_id)
    finally:
        await pubsub.aclose()
    return record


@router.delete("/{job_id}", operation_id="jobs-cancel", summary="Cancel a job",
               response_model=JobOut, responses=_ERRORS)
def cancel_job(job_id: str, request: Request) -> dict[str, Any]:
    """A queued job never runs; a running job stops at its next progress report."""
    st = state(request)
    record = st.jobs.cancel(job_id)
    if record["status"] in protocol.FINISHED:  # canceled while queued: wake its long-polls
        st.redis.publish(protocol.job_done_channel(st.settings, job_id), record["status"])
    return job_out(record)


def _manifest(st: State, record: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    if record["status"] != "succeeded":
        error = record.get("error") or {}
        detail = f": {error.get('message')}" if error else ""
        raise Conflict("job_not_succeeded", f"job {record['id']} is {record['status']}{detail}")
    folder = protocol.result_folder(st.settings, record["id"])
    try:
        manifest = protocol.read_manifest(st.settings, record["id"])
    except FileNotFoundError:
        raise NotFound(f"the result of job {record['id']} has expired") from None
    if record["kind"] == "generate" and record.get("owner") is not None:
        # The result is where the new graph's id is learnt: the job's tenant owns it from now.
        # Named as the worker names it, not by whoever stored the same graph first.
        name = record.get("graph_name") or f"{record['algorithm']}-{record['params']['seed']}"
        st.owners.grant(manifest["summary"]["graph_id"], record["owner"], name)
    return folder, manifest


@router.get("/{job_id}/result", operation_id="jobs-result", summary="A finished job's result",
            response_model=ResultOut,
            responses={**_ERRORS, 501: {"model": ErrorBody, "description":
                                        "format=parquet on a service without pyarrow."}})
def get_result(
    job_id: str,
    request: Request,
    format: Literal["json", "csv", "npy", "parquet"] = "json",
    field: Annotated[str | None, Query(description="Array to send with format=npy.")] = None,
    rows: Annotated[str | None, Query(description=(
        "Comma-separated original ids: JSON {source id: {target id: value}} of those rows of "
        "a node x node matrix (`field`, default `distance`), unreachable as null."))] = None,
    sources: Annotated[str | None, Query(description="Alias of `rows`.")] = None,
    fields: Annotated[Literal["all", "summary"], Query(description=(
        "`summary`: JSON without `node_values` and `arrays` (their names are in `available`), "
        "cheap whatever the result's size."))] = "all",
) -> Any:
    """Node values are keyed by original node id. `csv` streams one row per node (a result
    without node values: a node x node matrix row by row, else its arrays as columns, else its
    summary as `name,value` rows); `npy` sends one array (`field`: `node_id`, a node value or
    another array); `rows` (or `sources`) slices a node x node matrix such as apsp's `distance`
    without loading it."""
    st = state(request)
    record = st.jobs.get(job_id)
    folder, manifest = _manifest(st, record)
    node_fields, arrays = manifest["node_values"], manifest["arrays"]
    if rows is not None or sources is not None:
        param = "rows" if rows is not None else "sources"
        if format != "json":
            raise ApiError(422, "invalid_rows", f"{param} needs format=json", field=param)
        return JSONResponse(results.matrix_rows(folder, arrays, field or "distance",
                                                rows if rows is not None else sources, param,
                                                st.settings.max_json_result_nodes))
    if format == "csv":
        disposition = {"Content-Disposition": f"attachment; filename={job_id}.csv"}
        body = (results.csv_rows(folder, node_fields) if node_fields
                else results.csv_without_node_values(folder, arrays, manifest["summary"]))
        return StreamingResponse(body, media_type="text/csv", headers=disposition)
    if format == "parquet":
        return Response(results.parquet(folder, node_fields, arrays),
                        media_type="application/vnd.apache.parquet",
                        headers={"Content-Disposition":
                                 f"attachment; filename={job_id}.parquet"})
    if format == "npy":
        available = ["node_id", *node_fields, *arrays]
        name = field or (node_fields[0] if node_fields else None)
        if name not in available:
            raise ApiError(422, "unknown_field", f"field must be one of {', '.join(available)}",
                           field="field")
        return FileResponse(folder / f"{name}.npy", media_type="application/octet-stream",
                            filename=f"{job_id}.{name}.npy")
    head = {
        "job_id": job_id,
        "algorithm": record["algorithm"],
        "graph_id": record.get("graph_id"),
        "backend": record["backend"],
        "device": record["device"],
        "graph_view": manifest.get("graph_view"),
        "node_id_fields": manifest.get("node_id_fields", []),
        "summary": manifest["summary"],
        "available": {"node_values": list(node_fields), "arrays": list(arrays)},
    }
    if fields == "summary":
        return {**head, "node_values": {}, "arrays": {}}
    n = manifest["n"]
    if node_fields and n > st.settings.max_json_result_nodes:
        raise ApiError(413, "result_too_large", f"{n} nodes are too many for JSON; use "
                       "?fields=summary, ?format=csv or ?format=npy&field=...", field="format")
    ids = load_npy(folder / "node_id.npy").tolist() if node_fields else []
    return {
        **head,
        "node_values": {f: dict(zip(map(str, ids), load_npy(folder / f"{f}.npy").tolist(),
                                    strict=True)) for f in node_fields},
        "arrays": {a: results.json_array(folder / f"{a}.npy",
                                         st.settings.max_json_result_nodes) for a in arrays},
    }
