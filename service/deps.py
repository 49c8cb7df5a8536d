"""Per-application state shared by the routes."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from redis import Redis

from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.service.jobs import JobStore
from graphgpu.service.keyring import KeyRing
from graphgpu.service.ownership import Ownership


@dataclass(frozen=True)
class State:
    settings: Settings
    redis: Redis
    graphs: GraphStore
    jobs: JobStore
    owners: Ownership
    keys: KeyRing


def state(request: Request) -> State:
    """The state that :func:`service.app.create_app` attached to the application."""
    return request.app.state.graphgpu
