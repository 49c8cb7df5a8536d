"""What the service offers: algorithms, generators, workers; and the probes (health, ready)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from fastapi import APIRouter, Request
from redis.exceptions import RedisError

from graphgpu.kernels.core.registry import (
    BACKENDS,
    Algorithm,
    Generator,
    algorithms,
    generators,
)
from graphgpu.service.auth import caller
from graphgpu.service.deps import state
from graphgpu.service.errors import ApiError
from graphgpu.service.schemas import (
    AlgorithmList,
    ErrorBody,
    GeneratorList,
    Health,
    Ready,
    WorkerList,
)

router = APIRouter(prefix="/v1", tags=["service"])
#: Routes that answer without an API key (load balancers and orchestrators call them).
probes = APIRouter(prefix="/v1", tags=["service"])
#: Key of the opaque worker names shown to non-admins.
_NAME_KEY = secrets.token_bytes(16)


def _declared(entry: Algorithm | Generator) -> dict[str, Any]:
    """What the listings of algorithms and generators share: name, summary, parameter schema."""
    return {"name": entry.name, "summary": entry.summary,
            "params_schema": entry.params_model.model_json_schema()}


@router.get("/algorithms", operation_id="algorithms-list", summary="Registered algorithms",
            response_model=AlgorithmList)
def list_algorithms() -> dict[str, Any]:
    return {"algorithms": [
        {**_declared(a), "result_schema": a.result_model.model_json_schema(),
         "backends": list(BACKENDS), "node_params": list(a.node_params)}
        for a in algorithms().values()
    ]}


@router.get("/generators", operation_id="generators-list", summary="Registered graph generators",
            response_model=GeneratorList)
def list_generators() -> dict[str, Any]:
    return {"generators": [
        {**_declared(g), "backends": ["cpu", "gpu"] if g.gpu is not None else ["cpu"]}
        for g in generators().values()
    ]}


@router.get("/workers", operation_id="workers-list", summary="Live workers",
            response_model=WorkerList)
def list_workers(request: Request) -> dict[str, Any]:
    """Live workers; names, hosts and pids only for an admin (others see an opaque name), and
    a running job only to its tenant."""
    st, who = state(request), caller(request)
    workers = st.jobs.live_workers()
    if who.admin:
        return {"workers": workers}
    shown = []
    for worker in workers:
        job = worker.get("current_job")
        visible = job is not None and who.sees(st.jobs.owner(job))
        shown.append({**{k: v for k, v in worker.items() if k not in ("host", "pid")},
                      "name": opaque_name(worker["name"], worker["backend"]),
                      "current_job": job if visible else None})
    return {"workers": shown}


def opaque_name(name: str, backend: str) -> str:
    """A name for a worker that does not tell its host or pid (RQ names hold both), the same
    for the life of this API process: keyed by a random secret, so that hosts and pids cannot
    be guessed back from it."""
    digest = hmac.new(_NAME_KEY, name.encode(), hashlib.sha256).hexdigest()
    return f"{backend}-worker-{digest[:12]}"


@probes.get("/health", operation_id="service-health", summary="Liveness", response_model=Health)
def health(request: Request) -> dict[str, Any]:
    st = state(request)
    try:
        st.redis.ping()
        workers = len(st.jobs.live_workers())
        redis_ok = True
    except RedisError:
        redis_ok, workers = False, 0
    return {"status": "ok", "redis": redis_ok, "workers": workers}


@probes.get("/ready", operation_id="service-ready", summary="Readiness", response_model=Ready,
            responses={503: {"model": ErrorBody}})
def ready(request: Request) -> dict[str, Any]:
    """200 when Redis answers, at least one worker is live and the API has loaded its upload
    path (:func:`~graphgpu.service.uploads.load_upload_path`, at its start-up), else 503 with
    the reason."""
    st = state(request)
    try:
        st.redis.ping()
        workers = len(st.jobs.live_workers())
    except RedisError as exc:
        raise ApiError(503, "not_ready", f"Redis does not answer: {exc}",
                       headers={"Retry-After": "1"}) from None
    if not workers:
        raise ApiError(503, "not_ready", "no worker is live: jobs would wait in the queue",
                       headers={"Retry-After": "1"})
    if not request.app.state.upload_path_loaded.is_set():
        raise ApiError(503, "not_ready", "the API is loading its upload path (parser, CSR "
                       "builder) from the compiled-code caches", headers={"Retry-After": "1"})
    return {"status": "ready", "redis": True, "workers": workers}
