"""The FastAPI application."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI
from fastapi_offline import FastAPIOffline
from redis import Redis
from redis.asyncio import BlockingConnectionPool
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphgpu.kernels.core.observability import configure_logging
from graphgpu.kernels.core.registry import algorithms
from graphgpu.kernels.core.settings import Settings, get_settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.service import metrics
from graphgpu.service.auth import OPEN_MODE_WARNING, KeyRing, authenticate
from graphgpu.service.boundary import Boundary
from graphgpu.service.deps import AppState
from graphgpu.service.errors import install_handlers
from graphgpu.service.job_ends import JobEnds
from graphgpu.service.jobs import JobStore
from graphgpu.service.openapi import install_openapi
from graphgpu.service.ownership import Ownership
from graphgpu.service.routes import graphs, internal, jobs, meta
from graphgpu.service.schemas import ErrorBody
from graphgpu.service.uploads import load_upload_path

log = logging.getLogger("graphgpu.api")
#: Connections of the API's asynchronous Redis pool (the long-polls' listener holds one).
ASYNC_REDIS_CONNECTIONS = 100
#: Longest wait for one of them before a request is answered 503.
ASYNC_REDIS_WAIT_SECONDS = 20
#: What any route behind an API key may answer besides its own responses.
AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "A body that cannot be read (not UTF-8 JSON, or "
                                             "nested too deeply)."},
    401: {"model": ErrorBody, "description": "No API key, or an unknown one (answered before "
                                             "the body is read)."},
    408: {"model": ErrorBody, "description": "The body came too slowly."},
    413: {"model": ErrorBody, "description": "The body is over its limit "
                                             "(`GRAPHGPU_MAX_JSON_BODY_BYTES`)."},
    429: {"model": ErrorBody, "description": "Over the key's request rate or active jobs."},
    503: {"model": ErrorBody, "description": "Redis (the job store) does not answer: retry "
                                             "after `Retry-After` seconds."},
}

DESCRIPTION = """Upload graphs, run GPU graph algorithms on them, poll for the results.

1. `POST /v1/graphs` a file (or `POST /v1/graphs/generate`) and keep its `id`.
2. `POST /v1/jobs` with `graph_id`, `algorithm`, `params` and `backend` (`auto`, `gpu`, `cpu`).
3. Poll `GET /v1/jobs/{id}` until `status` is `succeeded`, then `GET /v1/jobs/{id}/result`.

Every error is `{"error": {"code", "message", "line"?, "field"?}}`.

When the service has API keys, every `/v1` route but `/v1/health` and `/v1/ready` needs
`Authorization: Bearer <key>`; each key's graphs and jobs are its tenant's alone."""

class AccessLog:
    """One log line per request, with the caller's tenant and the job it concerns.

    Plain ASGI (Starlette's ``BaseHTTPMiddleware`` runs each request through a task group and
    memory streams: a fixed cost that a one-millisecond job pays on its submit and its poll).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        answer: dict[str, Any] = {}

        async def noted_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                answer["location"] = next((v.decode("latin-1") for k, v in
                                           message.get("headers", ()) if k == b"location"), "")
            await send(message)

        try:
            await self.app(scope, receive, noted_send)
        finally:
            self._log(scope, answer, start)

    @staticmethod
    def _log(scope: Scope, answer: dict[str, Any], start: float) -> None:
        # Debug unless GRAPHGPU_LOG_REQUESTS: readiness polls alone would flood an info log.
        st = getattr(getattr(scope.get("app"), "state", None), "graphgpu", None)
        level = logging.INFO if st is not None and st.settings.log_requests else logging.DEBUG
        if not log.isEnabledFor(level) or "status" not in answer:
            return
        location = answer["location"]
        job_id = (scope.get("path_params") or {}).get("job_id") or (
            location.rsplit("/", 1)[-1] if location.startswith("/v1/jobs/") else None)
        caller = getattr(scope.get("state", {}).get("caller"), "tenant", None)
        log.log(level, "%s %s %d", scope["method"], scope["path"], answer["status"], extra={
            "status": answer["status"], "ms": round((time.perf_counter() - start) * 1e3, 2),
            "tenant": caller, "job_id": job_id})


async def build_routes(app: FastAPI) -> None:
    """Have the router build every route's request handling now, not at the first request.

    FastAPI builds a router's routes (their parameter and response fields) the first time a
    request is matched against them: the first job's POST took 20 ms more than the next
    (122 ms on the loaded 2-core VM). A path that matches no route is matched against them
    all; its 404 goes nowhere (the router alone, no middleware, log or metric)."""
    scope = {"type": "http", "method": "GET", "path": "/-", "raw_path": b"/-",
             "query_string": b"", "headers": [], "root_path": "", "scheme": "http",
             "http_version": "1.1", "client": None, "server": None, "app": app}

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        pass

    with contextlib.suppress(HTTPException):  # the router's 404 when it runs inside the app
        await app.router(scope, receive, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application; ``settings.redis_url`` must point at a running Redis."""
    settings = settings or get_settings()
    if not settings.redis_url:
        raise RuntimeError("GRAPHGPU_REDIS_URL is not set (`graphgpu serve` starts a Redis)")
    configure_logging("api", settings)
    keys = KeyRing.from_settings(settings)  # a bad key file stops the start-up here

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        redis = Redis.from_url(settings.redis_url)
        app.state.graphgpu = AppState(
            settings=settings,
            redis=redis,
            graphs=GraphStore(settings.graphs_dir, settings.tmp_dir),
            jobs=JobStore(redis, settings),
            owners=Ownership(redis, settings),
            keys=keys,
        )
        # Edge downloads served at once (each streams a whole graph).
        app.state.downloads = threading.BoundedSemaphore(settings.max_concurrent_downloads)
        # Long-polls wait on pub/sub without holding a worker thread each; the requests' own
        # reads on the event loop (authenticate, polls) wait for a free connection rather
        # than fail when many run at once, and a connection that Redis closed (a restart) is
        # opened again once before a request fails.
        app.state.async_redis = AsyncRedis(connection_pool=BlockingConnectionPool.from_url(
            settings.redis_url, max_connections=ASYNC_REDIS_CONNECTIONS,
            timeout=ASYNC_REDIS_WAIT_SECONDS, retry=Retry(NoBackoff(), 1),
            retry_on_error=[RedisConnectionError]))
        algorithms()  # import every algorithm module now, not on the first request
        await build_routes(app)
        app.state.job_ends = JobEnds(app.state.async_redis, settings)
        app.state.job_ends.start()  # the long-polls' listener subscribes before the first one
        app.state.upload_path_loaded = threading.Event()  # readiness waits for it
        threading.Thread(target=load_upload_path, name="load-upload-path", daemon=True,
                         args=(settings, app.state.upload_path_loaded)).start()
        if keys.open:
            log.warning(OPEN_MODE_WARNING)
        yield
        await app.state.job_ends.stop()
        await app.state.async_redis.aclose()
        redis.close()

    # /docs and /redoc load Swagger UI and ReDoc from the installed package, never from a CDN.
    app = FastAPIOffline(title="graphgpu", version="0.1.0", description=DESCRIPTION,
                         lifespan=lifespan)
    install_handlers(app)
    # Host header check (against DNS rebinding) and browser origins: both from the settings;
    # by default any Host and no cross-origin caller.
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.trusted_hosts)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins,
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "Idempotency-Key"])
    install_openapi(app)
    app.add_middleware(AccessLog)
    app.include_router(meta.probes)
    app.include_router(metrics.router)
    app.include_router(internal.router)  # workers on other hosts, by the worker key
    for module in (graphs, jobs, meta):
        app.include_router(module.router, dependencies=[Depends(authenticate)],
                           responses=AUTH_ERRORS)
    # Outermost: the key and the body's size are checked before any body byte is read.
    app.add_middleware(Boundary)
    return app
