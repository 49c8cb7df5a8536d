"""Per-application state shared by the routes, and the dependencies that hand it to them.

Routes take what they need as annotated parameters: ``st: State`` (the application's
:class:`AppState`) and ``who: Who`` (the caller :func:`service.auth.authenticate` identified).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from redis import Redis

from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.service.jobs import JobStore
from graphgpu.service.keyring import Caller, KeyRing
from graphgpu.service.ownership import Ownership


@dataclass(frozen=True)
class AppState:
    settings: Settings
    redis: Redis
    graphs: GraphStore
    jobs: JobStore
    owners: Ownership
    keys: KeyRing


def state(request: Request) -> AppState:
    """The state that :func:`service.app.create_app` attached to the application."""
    return request.app.state.graphgpu


def current_caller(request: Request) -> Caller:
    """The caller that :func:`service.auth.authenticate` (the router's dependency, which runs
    first) identified for this request."""
    return request.state.caller


# The dependencies are coroutines only so that FastAPI calls them on the event loop: a plain
# function dependency costs every request a hop to a worker thread and back.
async def _state_dependency(request: Request) -> AppState:
    return state(request)


async def _caller_dependency(request: Request) -> Caller:
    return current_caller(request)


#: The application's state, as a route parameter (``st: State``); calling ``State(...)`` builds
#: an :class:`AppState`.
State = Annotated[AppState, Depends(_state_dependency)]
#: The request's caller, as a route parameter (``who: Who``).
Who = Annotated[Caller, Depends(_caller_dependency)]
