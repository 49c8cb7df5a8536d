"""Job submission, polling, results and cancellation: the HTTP side only (admission rules are
:mod:`graphgpu.service.admission`'s, result rendering :mod:`graphgpu.service.results`')."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from graphgpu.kernels.core import protocol
from graphgpu.service import results
from graphgpu.service.admission import Admission, algorithm_and_params, graph_labels
from graphgpu.service.deps import AppState, State, Who
from graphgpu.service.errors import NotFound, check_id
from graphgpu.service.job_ends import JobEnds
from graphgpu.service.limits import job_slots
from graphgpu.service.schemas import (
    ErrorBody,
    JobList,
    JobOut,
    JobRequest,
    JobStatus,
    ResultOut,
)

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (404, 409, 413, 422)
}
#: Longest long-poll (``GET /v1/jobs/{id}?wait=``), in seconds: below common proxy timeouts.
MAX_WAIT_SECONDS = 30
#: ``Retry-After`` of a poll answered at once because the API already holds
#: ``GRAPHGPU_MAX_LONG_POLLS`` long-polls.
BUSY_RETRY_AFTER = 2


def job_out(record: dict[str, Any], st: AppState | None = None) -> dict[str, Any]:
    """The public view of a job record; with ``st``, a succeeded generator job's
    ``graph_id`` is the new graph's (granted to the job's tenant)."""
    out = {key: record.get(key) for key in JobOut.model_fields}
    out["params"] = record.get("label_params") or out["params"]  # a labelled graph's: labels
    out["timings"] = record.get("timings") or {}
    if record["status"] == "succeeded":
        out["result_url"] = f"/v1/jobs/{record['id']}/result"
        if st is not None and record["kind"] == "generate":
            out["graph_id"] = results.generated_graph(st, record)
    return out


@router.post("", operation_id="jobs-submit", summary="Run an algorithm on a graph",
             status_code=202, response_model=JobOut,
             responses={200: {"model": JobOut, "description": "The job an earlier request with "
                                                              "this Idempotency-Key created."},
                        **_ERRORS})
def submit_job(
    body: JobRequest,
    st: State,
    who: Who,
    response: Response,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> dict[str, Any]:
    """Validate and queue a job. Poll the `Location` it returns.

    The same `Idempotency-Key` with the same body returns the same job; with another body, 422.
    """
    check_id(body.graph_id, "graph", "graph_id")
    visible = who.admin or st.owners.owns(body.graph_id, who.tenant)
    labels = graph_labels(st, body.graph_id, visible)
    algorithm, params = algorithm_and_params(body.algorithm, body.params, st.settings, labels)
    if not visible:
        raise NotFound(f"graph {body.graph_id!r} does not exist", field="graph_id")
    # With an Idempotency-Key the workers are read first: a replay is refused as before when
    # they changed (no GPU worker left), rather than answered by the script's check.
    admission = Admission(st, algorithm, params, body.graph_id, body.backend,
                          read_workers=idempotency_key is not None)
    given = params.model_dump(mode="json")
    record, created = admission.submit(  # checked, then recorded with its memory in one step
        params=given, idempotency_key=idempotency_key, owner=who.tenant, key_id=who.key_id,
        extra={**({"labelled": True, "label_params": {**given, **body.params}}  # as given
                  if labels is not None else {}),
               **job_slots(algorithm, params, st.settings)})
    response.status_code = 202 if created else 200
    response.headers["Location"] = f"/v1/jobs/{record['id']}"
    return job_out(record)


@router.get("", operation_id="jobs-list", summary="Recent jobs", response_model=JobList)
def list_jobs(
    st: State,
    who: Who,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The caller's jobs, newest first (every tenant's for an admin)."""
    return {"jobs": [job_out(r, st) for r in st.jobs.list(
        limit, status, tenant=None if who.admin else who.tenant)]}


@router.get("/{job_id}", operation_id="jobs-get", summary="Poll a job", response_model=JobOut,
            responses=_ERRORS)
async def get_job(
    job_id: str,
    st: State,
    request: Request,
    response: Response,
    wait: Annotated[float, Query(ge=0, description=(
        "Long-poll: answer as soon as the job ends, or after this many seconds (at most "
        f"{MAX_WAIT_SECONDS}: a longer wait waits {MAX_WAIT_SECONDS} s)."))] = 0,
) -> dict[str, Any]:
    """The job as it is now; with `wait`, as soon as it has ended (or when `wait` runs out).

    While the service holds `GRAPHGPU_MAX_LONG_POLLS` long-polls, a `wait` is answered at once
    with `Retry-After`, so waiting clients cannot starve other requests."""
    polls = _long_polls(request)
    if wait > 0 and polls.enter(st.settings.max_long_polls):
        try:
            record = await _long_poll(request, st, job_id, min(wait, MAX_WAIT_SECONDS))
        finally:
            polls.leave()
    else:
        record = await st.jobs.get_async(request.app.state.async_redis, job_id)
        if wait > 0 and record["status"] not in protocol.FINISHED:
            response.headers["Retry-After"] = str(BUSY_RETRY_AFTER)
            return await _job_out(record, st)
    if record["status"] not in protocol.FINISHED:
        response.headers["Retry-After"] = "1"
    return await _job_out(record, st)


async def _job_out(record: dict[str, Any], st: AppState) -> dict[str, Any]:
    """:func:`job_out` of a polled job: on a worker thread only for a generator job (its
    graph's id is looked up in the store)."""
    if record.get("kind") == "generate":
        return await run_in_threadpool(job_out, record, st)
    return job_out(record, st)


class LongPolls:
    """The long-polls one API process holds now (each holds a Redis pub/sub connection)."""

    def __init__(self) -> None:
        self.held = 0

    def enter(self, limit: int) -> bool:
        """Take a place if fewer than ``limit`` are held (the event loop runs one request's
        code at a time, so no lock is needed)."""
        if self.held >= limit:
            return False
        self.held += 1
        return True

    def leave(self) -> None:
        self.held -= 1


def _long_polls(request: Request) -> LongPolls:
    """The application's :class:`LongPolls`, made on the first long-poll."""
    polls = getattr(request.app.state, "long_polls", None)
    if polls is None:
        polls = request.app.state.long_polls = LongPolls()
    return polls


def _job_ends(request: Request) -> JobEnds:
    """The application's :class:`JobEnds` (made at its start with its connection pool)."""
    return request.app.state.job_ends


async def _long_poll(request: Request, st: AppState, job_id: str, seconds: float
                     ) -> dict[str, Any]:
    """The job's record once it has ended, or after ``seconds``.

    Registers with the process's listener of job ends (workers publish the final record on
    the job's done channel in the script that records it) before reading the record, so an
    ending between the two is not missed.
    """
    deadline = time.monotonic() + seconds
    try:
        async with _job_ends(request).watch(job_id, seconds) as ended:
            record = await st.jobs.get_async(request.app.state.async_redis, job_id)
            while record["status"] not in protocol.FINISHED:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                await asyncio.wait_for(ended.wait(), left)
                ended.clear()
                if ended.record is not None:  # the worker's end carried the final record
                    record = ended.record
                    continue
                await _job_ends(request).ready(max(deadline - time.monotonic(), 0.001))
                record = await st.jobs.get_async(request.app.state.async_redis, job_id)
    except TimeoutError:  # the wait ran out (or no listener in time): the job as it is now
        record = await st.jobs.get_async(request.app.state.async_redis, job_id)
    return record


@router.delete("/{job_id}", operation_id="jobs-cancel", summary="Cancel a job",
               response_model=JobOut, responses=_ERRORS)
def cancel_job(job_id: str, st: State) -> dict[str, Any]:
    """A queued job never runs; a running job stops at its next progress report."""
    record = st.jobs.cancel(job_id)
    if record["status"] in protocol.FINISHED:  # canceled while queued: wake its long-polls
        st.redis.publish(protocol.job_done_channel(st.settings, job_id), record["status"])
    return job_out(record)


@router.get("/{job_id}/result", operation_id="jobs-result", summary="A finished job's result",
            response_model=ResultOut,
            responses={**_ERRORS, 501: {"model": ErrorBody, "description":
                                        "format=parquet on a service without pyarrow."}})
def get_result(
    job_id: str,
    st: State,
    format: results.Format = "json",
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
    wanted = (("rows", rows) if rows is not None
              else ("sources", sources) if sources is not None else None)
    return results.render(st, st.jobs.get(job_id), format, field, wanted, fields == "summary")
