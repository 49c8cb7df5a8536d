"""Who is calling: API keys (``Authorization: Bearer <key>``), tenants and the admin flag.

Keys come from ``GRAPHGPU_API_KEYS`` and/or ``GRAPHGPU_API_KEY_FILE``. Only their SHA-256 hashes
are kept in memory, and only hashes or tenant names ever reach Redis or job records. With no key
configured the service runs open: every caller is the admin of tenant ``public``.

:func:`authenticate` is the one FastAPI dependency of every ``/v1`` route except the probes. It
identifies the caller, applies the per-key rate limit and hides other tenants' jobs and graphs
named in the path (``{job_id}``, ``{graph_id}``) behind a 404, so a new route under ``/v1`` is
isolated without code of its own.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from graphgpu.service.deps import AppState, state
from graphgpu.service.deps import current_caller as caller
from graphgpu.service.errors import ApiError, NotFound, check_id
from graphgpu.service.keyring import (
    OPEN_MODE_WARNING,
    Caller,
    KeyRing,
    hash_key,
    read_key_file,
)
from graphgpu.service.limits import check_rate_async

__all__ = ["OPEN_CALLER", "OPEN_MODE_WARNING", "OPEN_TENANT", "Caller", "KeyRing", "authenticate",
           "caller", "hash_key", "is_worker_key", "read_key_file", "require_admin"]

#: The tenant of every caller in open mode.
OPEN_TENANT = "public"


OPEN_CALLER = Caller(OPEN_TENANT, admin=True, key_id="open")

_bearer = HTTPBearer(auto_error=False, scheme_name="apiKey",
                     description="An API key of the service (none needed in open mode).")


def _unauthorized(code: str, message: str) -> ApiError:
    return ApiError(401, code, message, field="Authorization",
                    headers={"WWW-Authenticate": "Bearer"})


def is_worker_key(st: AppState, given: str) -> bool:
    """Whether ``given`` is ``GRAPHGPU_WORKER_KEY`` (compared in constant time)."""
    key = st.settings.worker_key
    return key is not None and hmac.compare_digest(given.encode(),
                                                   key.get_secret_value().encode())


async def authenticate(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """The caller of a ``/v1`` request, after its rate limit and path-level isolation.

    A coroutine, run on the event loop: keys are compared in memory, the rate and a job's
    owner are read through the application's asynchronous Redis connection, so a request pays
    no worker-thread hop here (a graph's owner, on graph routes only, is read on one).

    Raises
    ------
    ApiError
        401 without a known key (keys configured), 429 over the key's rate, 404 for another
        tenant's job or graph named in the path.
    """
    st = state(request)
    redis = request.app.state.async_redis
    if credentials is not None and is_worker_key(st, credentials.credentials):
        raise _unauthorized("worker_key", "the worker key opens the worker routes only: "
                            "send an API key")
    known = None if st.keys.open or credentials is None else st.keys.identify(
        credentials.credentials)
    if not st.keys.open and known is None:
        # Requests without a valid key share their address's bucket, so keys cannot be
        # guessed faster than a client may call.
        address = request.client.host if request.client else "unknown"
        await check_rate_async(redis, st.settings, f"address:{address}", f"address {address}")
        if credentials is None:
            raise _unauthorized("missing_api_key", "this service needs an API key: send "
                                "'Authorization: Bearer <key>'")
        raise _unauthorized("invalid_api_key", "the API key is not valid")
    who = OPEN_CALLER if known is None else known
    await check_rate_async(redis, st.settings, who.key_id)
    params = request.path_params
    # Ids that cannot exist never reach Redis keys or file names.
    if "job_id" in params:
        check_id(params["job_id"], "job", "job_id")
    if "graph_id" in params:
        check_id(params["graph_id"], "graph", "graph_id")
    if "job_id" in params:
        owner = await st.jobs.owner_async(redis, params["job_id"])
        if owner is not None and not who.sees(owner):
            raise NotFound(f"job {params['job_id']!r} does not exist or has expired",
                           field="job_id")
    if "graph_id" in params and not who.admin and not await run_in_threadpool(
            st.owners.owns, params["graph_id"], who.tenant):
        raise NotFound(f"graph {params['graph_id']!r} does not exist", field="graph_id")
    request.state.caller = who
    return who


async def require_admin(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """Dependency of admin-only routes (``/metrics``): as :func:`authenticate`, then 403 for
    a key that is not an admin's (every caller is the admin in open mode)."""
    who = await authenticate(request, credentials)
    if not who.admin:
        raise ApiError(403, "forbidden", "this route needs an admin API key")
    return who
