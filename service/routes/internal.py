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

import io
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
#: Body bytes kept in memory before the rest goes to a file.
IN_MEMORY_BYTES = 8 * CHUNK


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


def _stream(folder: Path, missing: str) -> Response:
    try:
        body = FolderStream(folder).body()
    except (FileNotFoundError, NotADirectoryError):
        raise NotFound(missing) from None
    if isinstance(body, bytes):
        return Response(body, media_type=_TAR)
    return StreamingResponse(iter(body), media_type=_TAR)


@router.get("/graphs/{graph_id}")
def get_graph(graph_id: str, request: Request) -> Response:
    """A stored graph's folder (its ``.npy`` arrays and ``meta.json``) as a tar stream."""
    st = state(request)
    if not st.graphs.exists(graph_id):
        raise NotFound(f"graph {graph_id!r} does not exist", field="graph_id")
    return _stream(st.graphs.path(graph_id), f"graph {graph_id!r} does not exist")


@router.get("/jobs/{job_id}/result")
def get_result(job_id: str, request: Request) -> Response:
    """A job's result folder as a tar stream (the shards' results, for a remote reduce)."""
    folder = protocol.result_folder(state(request).settings, job_id)
    return _stream(folder, f"job {job_id!r} has no result")


class Body:
    """A request's tar body, read whole: in memory while small, spilled to a file past
    :data:`IN_MEMORY_BYTES` (most results are small: no file, no thread hop per chunk)."""

    def __init__(self, spool: Path, limit: int, setting: str) -> None:
        self.data, self.spool, self.file = bytearray(), spool, None
        self.limit, self.setting, self.received = limit, setting, 0

    def too_large(self) -> ApiError:
        return ApiError(413, "too_large", f"more than {self.limit} bytes of content "
                        f"(GRAPHGPU_{self.setting})")

    async def read(self, request: Request) -> Body:
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.limit + _TAR_OVERHEAD:
            raise self.too_large()
        try:
            async for chunk in request.stream():
                self.received += len(chunk)
                if self.received > self.limit + _TAR_OVERHEAD:
                    raise self.too_large()
                self.data += chunk
                if len(self.data) >= IN_MEMORY_BYTES:  # the disk writes off the event loop
                    await run_in_threadpool(self.spill)
        except BaseException:
            # Refused or cut off: nothing stays behind (no await: the task may be cancelled).
            self.discard()
            raise
        return self

    def spill(self) -> None:
        if self.file is None:
            self.spool.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(self.spool, "wb")  # noqa: SIM115 (closed by unpack_into)
        self.file.write(self.data)
        self.data.clear()

    def discard(self) -> None:
        """Drop the spilled file, if any, and its folder."""
        if self.file is not None:
            self.file.close()
            shutil.rmtree(self.spool.parent, ignore_errors=True)

    def unpack_into(self, target: Path) -> None:
        """Unpack into the new folder ``target`` (413 past the limit, 400 for anything but a
        flat folder of plain files)."""
        try:
            if self.file is None:
                unpack(io.BytesIO(self.data), target, self.limit)
            else:
                self.spill()
                self.file.close()
                with open(self.spool, "rb") as body:
                    unpack(body, target, self.limit)
        except LimitExceeded:
            raise self.too_large() from None
        except InvalidInput as exc:
            raise ApiError(400, exc.code, exc.message) from None


def _store_graph(st: State, body: Body, folder: Path, graph_id: str) -> bool:
    """Store the uploaded graph, unpacked as ``folder / graph_id`` (its content checked against
    the id, its numbers recomputed), then drop ``folder``; True when it was new."""
    try:
        body.unpack_into(folder / graph_id)
        upload = GraphStore(folder, folder / "tmp")  # a store of one graph, read as any other
        graph = upload.load(graph_id)
        sent = upload.meta(graph_id)
        report = NormalizationReport(**sent["normalization"])
        if content_id(graph) != graph_id:
            raise InvalidInput(f"the graph sent is not graph {graph_id!r}")
        _, created = st.graphs.put(graph, name=sent.get("name"), source=sent["source"],
                                   report=report)
    except (KernelError, KeyError, TypeError, ValueError) as exc:
        raise ApiError(400, "invalid_graph", f"not a stored graph's folder: {exc}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return created


@router.put("/graphs/{graph_id}")
async def put_graph(graph_id: str, request: Request) -> dict[str, Any]:
    """Store a graph that a worker's generator job made (capped as a decompressed upload)."""
    st = state(request)
    staging = st.settings.tmp_dir / f"graph-upload.{uuid.uuid4().hex}"
    body = await Body(staging / "body.tar", st.settings.max_decompressed_bytes,
                      "MAX_DECOMPRESSED_BYTES").read(request)
    created = await run_in_threadpool(_store_graph, st, body, staging, graph_id)
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


def _place_result(st: State, job_id: str, worker: str, body: Body, staging: Path) -> None:
    """Unpack the result into ``staging``, check it and its sender again, rename it into
    place; ``staging`` goes whatever happens."""
    try:
        body.unpack_into(staging / "result")
        if not (staging / "result" / protocol.RESULT_MANIFEST).is_file():
            raise ApiError(400, "invalid_result", f"a result needs {protocol.RESULT_MANIFEST}")
        check_owner(st, job_id, worker)  # again: the job may have been taken away meanwhile
        replace_folder(staging / "result", protocol.result_folder(st.settings, job_id),
                       staging / "replaced")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@router.put("/jobs/{job_id}/result", status_code=204)
async def put_result(job_id: str, request: Request,
                     worker: Annotated[str, Header(alias=WORKER_HEADER)]) -> Response:
    """Take a job's result folder from the worker that ran it (capped by
    ``GRAPHGPU_MAX_RESULT_BYTES``) and put it in place in one rename."""
    st = state(request)
    await run_in_threadpool(check_owner, st, job_id, worker)  # before reading the body
    staging = st.settings.tmp_dir / f"result-upload.{job_id}.{uuid.uuid4().hex}"
    body = await Body(staging / "body.tar", st.settings.max_result_bytes,
                      "MAX_RESULT_BYTES").read(request)
    await run_in_threadpool(_place_result, st, job_id, worker, body, staging)
    return Response(status_code=204)
