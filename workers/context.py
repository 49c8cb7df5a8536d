"""The worker process's own description, set once at start-up and read by the tasks it runs."""

from __future__ import annotations

from dataclasses import dataclass

from redis import Redis

from graphgpu.kernels.core.registry import Backend
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.workers.remote import RemoteApi


@dataclass(frozen=True)
class WorkerContext:
    """What a worker process knows about itself; set once at start-up."""

    settings: Settings
    redis: Redis
    graphs: GraphStore
    name: str
    backend: Backend
    device: str
    #: The API over HTTP, for a worker on another host (None: the API's data folder is ours).
    remote: RemoteApi | None = None


_context: WorkerContext | None = None


def install(context: WorkerContext) -> None:
    """Make ``context`` the one the task uses (called by the worker's start-up)."""
    global _context
    _context = context


def current_context() -> WorkerContext:
    """The context :func:`install` set; only a graphgpu worker process has one."""
    if _context is None:
        raise RuntimeError("a graphgpu task ran outside a graphgpu worker")
    return _context
