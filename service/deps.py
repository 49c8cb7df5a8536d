"""Per-application state shared by the routes."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from redis import Redis

from kernels.settings import Settings
from kernels.store import GraphStore
from service.jobs import JobStore


@dataclass(frozen=True)
class State:
    settings: Settings
    redis: Redis
    graphs: GraphStore
    jobs: JobStore


def state(request: Request) -> State:
    """The state that :func:`service.app.create_app` attached to the application."""
    return request.app.state.graphgpu
