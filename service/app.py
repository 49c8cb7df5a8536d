"""The FastAPI application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from redis import Redis

from kernels.registry import algorithms
from kernels.settings import Settings, get_settings
from kernels.store import GraphStore
from service.deps import State
from service.errors import install_handlers
from service.jobs import JobStore
from service.routes import graphs, jobs, meta

DESCRIPTION = """Upload graphs, run GPU graph algorithms on them, poll for the results.

1. `POST /v1/graphs` a file (or `POST /v1/graphs/generate`) and keep its `id`.
2. `POST /v1/jobs` with `graph_id`, `algorithm`, `params` and `backend` (`auto`, `gpu`, `cpu`).
3. Poll `GET /v1/jobs/{id}` until `status` is `succeeded`, then `GET /v1/jobs/{id}/result`.

Every error is `{"error": {"code", "message", "line"?, "field"?}}`."""


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application; ``settings.redis_url`` must point at a running Redis."""
    settings = settings or get_settings()
    if not settings.redis_url:
        raise RuntimeError("GRAPHGPU_REDIS_URL is not set (`graphgpu serve` starts a Redis)")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        redis = Redis.from_url(settings.redis_url)
        app.state.graphgpu = State(
            settings=settings,
            redis=redis,
            graphs=GraphStore(settings.graphs_dir, settings.tmp_dir),
            jobs=JobStore(redis, settings),
        )
        algorithms()  # import every algorithm module now, not on the first request
        yield
        redis.close()

    app = FastAPI(title="graphgpu", version="0.1.0", description=DESCRIPTION, lifespan=lifespan)
    install_handlers(app)
    for module in (graphs, jobs, meta):
        app.include_router(module.router)
    return app
