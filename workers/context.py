"""The worker process's own description, set once at start-up and read by the tasks it runs."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

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
    started_at: float = field(default_factory=time.time)
    #: The API over HTTP, for a worker on another host (None: the API's data folder is ours).
    remote: RemoteApi | None = None

    def description(self) -> dict[str, Any]:
        """The worker's heartbeat record (its monitor adds memory and the current job)."""
        return {"name": self.name, "backend": self.backend, "device": self.device,
                "host": socket.gethostname(), "pid": os.getpid(), "started_at": self.started_at}


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
