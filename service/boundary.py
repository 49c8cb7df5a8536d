"""The ASGI middleware in front of the app: authentication and body limits before any body byte.

Every request under ``/v1`` but the probes is checked here first, from its headers alone:

* a missing or unknown API key is answered 401 at once (a 1 GiB body without a key is never
  read), after the per-address rate limit that keeps keys from being guessed quickly;
* a declared ``Content-Length`` over the route's limit is answered 413 at once: the upload
  route's limit is ``max_upload_bytes``, every other route's ``max_json_body_bytes``;
* the body is then counted as it is read: 413 as soon as it passes the limit (chunked bodies),
  408 when the next chunk takes longer than ``body_idle_timeout_seconds`` or the body arrives
  slower than ``body_min_bytes_per_second`` (a slowloris body).

A refusal mid-body is sent from here and the connection closed; whatever the app answers after
it (the body read fails under it) is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from redis.exceptions import RedisError
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphgpu.kernels.core.settings import Settings
from graphgpu.service.errors import ApiError
from graphgpu.service.limits import check_rate

#: Routes answered without an API key (and whose bodies, none, are capped all the same).
OPEN_PATHS = frozenset({"/v1/health", "/v1/ready"})
#: The one route whose body is a graph file (capped by ``max_upload_bytes``).
UPLOAD_ROUTE = ("POST", "/v1/graphs")


class BodyRefused(ApiError):
    """A body refused while it was read; its response has already been sent."""


def body_limit(settings: Settings, method: str, path: str) -> tuple[int, str]:
    """The most body bytes a request to ``method path`` may send, and the setting that says so."""
    if (method, path.rstrip("/")) == UPLOAD_ROUTE:
        return settings.max_upload_bytes, "GRAPHGPU_MAX_UPLOAD_BYTES"
    return settings.max_json_body_bytes, "GRAPHGPU_MAX_JSON_BODY_BYTES"


def _too_large(limit: int, setting: str) -> ApiError:
    code = "upload_too_large" if setting.endswith("UPLOAD_BYTES") else "body_too_large"
    return ApiError(413, code, f"the request body exceeds the limit of {limit:,} bytes "
                    f"({setting})")


def _bearer(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


async def send_error(send: Send, error: ApiError) -> None:
    """Answer ``error`` with the documented body, closing the connection (a body may be
    left unread on it)."""
    body = json.dumps(error.body()).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    headers += [(k.lower().encode(), v.encode()) for k, v in (error.headers or {}).items()]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Boundary:
    """Pure ASGI middleware (no body buffering) applying the checks of this module."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = getattr(scope.get("app"), "state", None)
        st = getattr(state, "graphgpu", None)
        if scope["type"] != "http" or st is None:
            await self.app(scope, receive, send)
            return
        settings: Settings = st.settings
        path, method = scope["path"], scope["method"]
        try:
            if path.startswith("/v1/") and path not in OPEN_PATHS:
                await self._authenticate(st, scope)
            limit, setting = body_limit(settings, method, path)
            declared = _content_length(scope)
            if declared is not None and declared > limit:
                raise _too_large(limit, setting)
        except ApiError as error:
            await send_error(send, error)
            return
        await self._guarded(scope, receive, send, limit, setting, settings)

    async def _authenticate(self, st: Any, scope: Scope) -> None:
        """401 for a missing or unknown key (keys configured), after the address's rate."""
        if st.keys.open:
            return
        token = _bearer(scope)
        if token is not None and st.keys.identify(token) is not None:
            return  # the route's dependency applies the key's rate and isolation
        address = scope["client"][0] if scope.get("client") else "unknown"
        with contextlib.suppress(RedisError):  # the 401 below does not need Redis
            await run_in_threadpool(check_rate, st.redis, st.settings, f"address:{address}",
                                    f"address {address}")
        headers = {"WWW-Authenticate": "Bearer"}
        if token is None:
            raise ApiError(401, "missing_api_key", "this service needs an API key: send "
                           "'Authorization: Bearer <key>'", field="Authorization",
                           headers=headers)
        raise ApiError(401, "invalid_api_key", "the API key is not valid",
                       field="Authorization", headers=headers)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send, limit: int,
                       setting: str, settings: Settings) -> None:
        refused = started = body_done = False
        size, start = 0, time.monotonic()
        idle = settings.body_idle_timeout_seconds
        min_rate = settings.body_min_bytes_per_second

        async def refuse(error: ApiError) -> None:
            nonlocal refused
            if not started:
                refused = True
                await send_error(send, error)
            raise BodyRefused(error.status, error.code, error.message)

        async def guarded_receive() -> Message:
            nonlocal size, body_done
            if body_done:  # past the body: a wait for the disconnect, as long as it takes
                return await receive()
            try:
                async with asyncio.timeout(idle):  # (no task per message, as wait_for makes)
                    message = await receive()
            except TimeoutError:
                await refuse(ApiError(408, "body_timeout", f"no part of the request body came "
                                      f"for {idle:g} s (GRAPHGPU_BODY_IDLE_TIMEOUT_SECONDS)"))
            body_done = message["type"] != "http.request" or not message.get("more_body")
            size += len(message.get("body", b""))
            if size > limit:
                await refuse(_too_large(limit, setting))
            elapsed = time.monotonic() - start
            if min_rate and elapsed > idle and not body_done and size < min_rate * elapsed:
                await refuse(ApiError(408, "body_too_slow", f"the request body came at "
                                      f"{size / elapsed:,.0f} bytes/s, under the minimum of "
                                      f"{min_rate:,} (GRAPHGPU_BODY_MIN_BYTES_PER_SECOND)"))
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:  # after a refusal the app's own answer is dropped
                return
            started = True
            await send(message)

        try:
            await self.app(scope, guarded_receive, guarded_send)
        except BodyRefused:
            pass  # answered already
        except Exception:
            if not refused:
                raise
