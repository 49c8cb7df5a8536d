"""Worker-only routes: what a worker on another host (``graphgpu worker``) needs from the API.

Such a worker shares Redis with the API but not its data folder: it fetches a job's graph by
content id, hands the result folder back, uploads the graphs that its generator jobs make, and
fetches the shards' results when it reduces a fanned-out job. Everything travels as the
uncompressed tar of the store's own files (:mod:`graphgpu.kernels.core.transfer`).

Only ``GRAPHGPU_WORKER_KEY`` opens these routes (compared in constant time); a tenant's API key
is refused here, as the worker key is refused on every tenant route (``service/auth.py``).
Without a worker key configured the routes answer 404. They are left out of the OpenAPI
document: they are not the users' API.

A result is accepted only from the worker that owns the job's current attempt: the job is
``running`` and its record names that worker, or (a fanned-out parent) RQ runs the parent's
reduce job on it. It lands by renames under the API's result folder, so a reader sees the
whole result or none.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.errors import InvalidInput, KernelError, LimitExceeded
from graphgpu.kernels.core.graph import NormalizationReport, content_id
from graphgpu.kernels.core.store import GraphStore
from graphgpu.kernels.core.transfer import (
    CHUNK,
    INTERNAL_PREFIX,
    WORKER_HEADER,
    FolderStream,
    replace_folder,
    unpack,
)
from graphgpu.service.auth import is_worker_key
from graphgpu.service.deps import State, state
from graphgpu.service.errors import ApiError, Conflict, NotFound, check_id
from graphgpu.service.limits import check_rate

_bearer = HTTPBearer(auto_error=False)
#: Bytes of tar headers and padding allowed above a body's content limit.
_TAR_OVERHEAD = 1 << 20
_TAR = "application/x-tar"


def authenticate_worker(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Let only the worker key through (401 otherwise; 404 when the API has none)."""
    st = state(request)
    if st.settings.worker_key is None:
        raise NotFound("this API has no worker routes (GRAPHGPU_WORKER_KEY is not set)")
    if credentials is None or not is_worker_key(st, credentials.credentials):
        # Wrong keys share their address's bucket, as on the tenant routes.
        address = request.client.host if request.client else "unknown"
        check_rate(st.redis, st.settings, f"address:{address}", f"address {address}")
        raise ApiError(401, "invalid_worker_key", "worker routes need the worker key "
                       "(GRAPHGPU_WORKER_KEY); API keys are not accepted here",
                       field="Authorization", headers={"WWW-Authenticate": "Bearer"})
    for name, what in (("job_id", "job"), ("graph_id", "graph")):
        if name in request.path_params:
            check_id(request.path_params[name], what, name)


router = APIRouter(prefix=INTERNAL_PREFIX, include_in_schema=False,
                   dependencies=[Depends(authenticate_worker)])


@router.get("/ping")
def ping() -> dict[str, Any]:
    """What a worker asks at start-up: the URL and the key are right."""
    return {"worker_routes": True}


def _stream(folder: Path, missing: str) -> StreamingResponse:
    try:
        stream = FolderStream(folder)
    except (FileNotFoundError, NotADirectoryError):
        raise NotFound(missing) from None
    return StreamingResponse(iter(stream), media_type=_TAR)


@router.get("/graphs/{graph_id}")
def get_graph(graph_id: str, request: Request) -> StreamingResponse:
    """A stored graph's folder (its ``.npy`` arrays and ``meta.json``) as a tar stream."""
    st = state(request)
    if not st.graphs.exists(graph_id):
        raise NotFound(f"graph {graph_id!r} does not exist", field="graph_id")
    return _stream(st.graphs.path(graph_id), f"graph {graph_id!r} does not exist")


@router.get("/jobs/{job_id}/result")
def get_result(job_id: str, request: Request) -> StreamingResponse:
    """A job's result folder as a tar stream (the shards' results, for a remote reduce)."""
    folder = protocol.result_folder(state(request).settings, job_id)
    return _stream(folder, f"job {job_id!r} has no result")


async def _receive(request: Request, target: Path, limit: int, setting: str) -> None:
    """Unpack the request's tar body into the new folder ``target`` (413 past ``limit`` bytes
    of content, the setting ``setting``; 400 for anything but a flat folder of plain files)."""
    too_large = ApiError(413, "too_large", f"more than {limit} bytes (GRAPHGPU_{setting})")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + _TAR_OVERHEAD:
        raise too_large
    target.parent.mkdir(parents=True, exist_ok=True)
    spool = target.parent / "body.tar"
    received, pending = 0, bytearray()
    with open(spool, "wb") as out:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit + _TAR_OVERHEAD:
                raise too_large
            pending += chunk
            if len(pending) >= 4 * CHUNK:  # the disk writes off the event loop
                await run_in_threadpool(out.write, bytes(pending))
                pending.clear()
        await run_in_threadpool(out.write, bytes(pending))

    def unpack_spool() -> None:
        with open(spool, "rb") as body:
            unpack(body, target, limit)

    try:
        await run_in_threadpool(unpack_spool)
    except LimitExceeded:
        raise too_large from None
    except InvalidInput as exc:
        raise ApiError(400, exc.code, exc.message) from None
    finally:
        spool.unlink(missing_ok=True)


def _store_graph(st: State, folder: Path, graph_id: str) -> bool:
    """Store the uploaded graph folder ``folder / graph_id`` (its content checked against the
    id, its numbers recomputed); True when it was new."""
    upload = GraphStore(folder, folder / "tmp")  # a store of one graph, read as any other
    try:
        graph = upload.load(graph_id)
        sent = upload.meta(graph_id)
        report = NormalizationReport(**sent["normalization"])
        if content_id(graph) != graph_id:
            raise InvalidInput(f"the graph sent is not graph {graph_id!r}")
        _, created = st.graphs.put(graph, name=sent.get("name"), source=sent["source"],
                                   report=report)
    except (KernelError, KeyError, TypeError, ValueError) as exc:
        raise ApiError(400, "invalid_graph", f"not a stored graph's folder: {exc}") from None
    return created


@router.put("/graphs/{graph_id}")
async def put_graph(graph_id: str, request: Request) -> dict[str, Any]:
    """Store a graph that a worker's generator job made (capped as a decompressed upload)."""
    st = state(request)
    staging = st.settings.tmp_dir / f"graph-upload.{uuid.uuid4().hex}"
    try:
        await _receive(request, staging / graph_id, st.settings.max_decompressed_bytes,
                       "MAX_DECOMPRESSED_BYTES")
        created = await run_in_threadpool(_store_graph, st, staging, graph_id)
    finally:
        await run_in_threadpool(shutil.rmtree, staging, True)
    return {"id": graph_id, "created": created}


def reduce_runs_on(st: State, job_id: str, worker: str) -> bool:
    """Whether RQ runs the reduce job of the fanned-out job ``job_id`` on ``worker`` now."""
    try:
        job = Job.fetch(protocol.reduce_job_id(job_id), connection=st.redis,
                        serializer=JSONSerializer)
    except NoSuchJobError:
        return False
    return job.worker_name == worker and job.get_status() == JobStatus.STARTED


def check_owner(st: State, job_id: str, worker: str) -> None:
    """Refuse a result for ``job_id`` unless ``worker`` owns its current attempt.

    Raises
    ------
    ApiError
        404 for an unknown job, 409 when it is not running, 403 when another worker owns it.
    """
    record = st.jobs.get(job_id)
    if record["status"] != "running":
        raise Conflict("job_not_running", f"job {job_id} is {record['status']}: its result "
                       "is no longer wanted")
    if record.get("worker") == worker or (
            record.get("shards") and reduce_runs_on(st, job_id, worker)):
        return
    raise ApiError(403, "not_job_owner", f"job {job_id} does not run on worker {worker!r}",
                   field=WORKER_HEADER)


def _place_result(st: State, job_id: str, worker: str, staging: Path) -> None:
    if not (staging / "result" / protocol.RESULT_MANIFEST).is_file():
        raise ApiError(400, "invalid_result", f"a result needs {protocol.RESULT_MANIFEST}")
    check_owner(st, job_id, worker)  # again: the job may have been taken away meanwhile
    replace_folder(staging / "result", protocol.result_folder(st.settings, job_id),
                   staging / "replaced")


@router.put("/jobs/{job_id}/result", status_code=204)
async def put_result(job_id: str, request: Request,
                     worker: Annotated[str, Header(alias=WORKER_HEADER)]) -> Response:
    """Take a job's result folder from the worker that ran it (capped by
    ``GRAPHGPU_MAX_RESULT_BYTES``) and put it in place in one rename."""
    st = state(request)
    await run_in_threadpool(check_owner, st, job_id, worker)  # before reading the body
    staging = st.settings.tmp_dir / f"result-upload.{job_id}.{uuid.uuid4().hex}"
    try:
        await _receive(request, staging / "result", st.settings.max_result_bytes,
                       "MAX_RESULT_BYTES")
        await run_in_threadpool(_place_result, st, job_id, worker, staging)
    finally:
        await run_in_threadpool(shutil.rmtree, staging, True)
    return Response(status_code=204)
