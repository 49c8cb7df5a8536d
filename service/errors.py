"""The service's exception tree and the one place that maps errors to HTTP responses."""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphgpu.kernels.core.errors import (
    BackendUnavailable,
    InvalidInput,
    KernelError,
    LimitExceeded,
    UnknownName,
)


class ApiError(Exception):
    """An error with its HTTP status, stable code and location of the fault.

    Parameters
    ----------
    status : int
        HTTP status code.
    code : str
        Machine-readable error code.
    message : str
        What went wrong, for people.
    field : str, optional
        Parameter or body field at fault.
    line : int, optional
        1-based line of the uploaded file at fault.
    headers : dict, optional
        Extra response headers (e.g. ``Retry-After``).
    extra : dict, optional
        More JSON members of the error body (e.g. the ``estimate`` behind a refusal).
    """

    def __init__(self, status: int, code: str, message: str, *, field: str | None = None,
                 line: int | None = None, headers: dict[str, str] | None = None,
                 extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.line = line
        self.headers = headers
        self.extra = extra or {}

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.line is not None:
            error["line"] = self.line
        if self.field is not None:
            error["field"] = self.field
        return {"error": {**error, **self.extra}}


class NotFound(ApiError):
    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(404, "not_found", message, field=field)


class Conflict(ApiError):
    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        super().__init__(409, code, message, field=field)


class Unprocessable(ApiError):
    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        super().__init__(422, code, message, field=field)


_KERNEL_STATUS: tuple[tuple[type[KernelError], int], ...] = (
    (LimitExceeded, 413),
    (InvalidInput, 400),
    (UnknownName, 404),
    (BackendUnavailable, 409),
)
#: Stable codes of the errors Starlette raises itself (no route, wrong method, ...).
_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
               413: "upload_too_large", 415: "unsupported_media_type"}
#: Seconds a client is told to wait while Redis does not answer.
REDIS_RETRY_AFTER = 2
#: What a graph or job id may look like: ids are hex digests and uuids (a job's reduce step
#: adds ``-reduce``). Checked before an id reaches Redis keys or file names, where a 300-char id
#: failed as ENAMETOOLONG.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")


def from_kernel_error(error: KernelError, *, field_prefix: str = "", status: int | None = None,
                      field: str | None = None) -> ApiError:
    """Translate a compute-layer error into an :class:`ApiError`.

    Parameters
    ----------
    error : KernelError
    field_prefix : str
        Put before the error's field (``params.`` for a parameter).
    status : int, optional
        The HTTP status, where the request part decides it rather than the error's class
        (a job's parameters refused by an estimate: 422); the error's own code is kept then.
    field : str, optional
        The field to name when the error names none.
    """
    if status is None:
        status = next((code for cls, code in _KERNEL_STATUS if isinstance(error, cls)), 400)
        code = "not_found" if status == 404 else error.code
    else:
        code = error.code
    named = f"{field_prefix}{error.field}" if error.field and field_prefix else error.field
    if named is None:
        named = field
    estimate = getattr(error, "estimate", None)  # a refusal on a memory estimate says it
    return ApiError(status, code, error.message, field=named, line=error.line,
                    extra={"estimate": estimate} if estimate else None)


def check_id(value: str, what: str, field: str) -> None:
    """404 for a graph or job id that cannot exist (see :data:`ID_PATTERN`).

    Raises
    ------
    NotFound
        ``value`` is not an id's syntax; the message quotes at most 70 characters of it.
    """
    if not ID_PATTERN.fullmatch(value):
        shown = value if len(value) <= 70 else value[:64] + "..."
        raise NotFound(f"{what} {shown!r} does not exist", field=field)


def _validation_field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts)


def install_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every error into ``{"error": {...}}``."""

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)

    @app.exception_handler(KernelError)
    async def _kernel_error(_: Request, exc: KernelError) -> JSONResponse:
        api = from_kernel_error(exc)
        return JSONResponse(api.body(), status_code=api.status)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        field = _validation_field(tuple(first.get("loc", ())))
        message = f"{field}: {first['msg']}" if field else str(first["msg"])
        api = ApiError(422, "validation_error", message, field=field or None)
        return JSONResponse(api.body(), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Unknown routes and methods: the documented body instead of Starlette's {"detail"}.
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        api = ApiError(exc.status_code, code, str(exc.detail), headers=exc.headers)
        return JSONResponse(api.body(), status_code=exc.status_code, headers=exc.headers)

    async def _redis_down(_: Request, exc: Exception) -> JSONResponse:
        api = ApiError(503, "redis_unavailable",
                       f"the job store (Redis) does not answer; retry in {REDIS_RETRY_AFTER} s "
                       f"({type(exc).__name__})",
                       headers={"Retry-After": str(REDIS_RETRY_AFTER)})
        return JSONResponse(api.body(), status_code=503, headers=api.headers)

    app.add_exception_handler(RedisConnectionError, _redis_down)
    app.add_exception_handler(RedisTimeoutError, _redis_down)

    @app.exception_handler(RecursionError)
    async def _too_deep(_: Request, exc: RecursionError) -> JSONResponse:
        # json.loads of a body nested thousands deep (a request or a JSON graph).
        api = ApiError(400, "too_deeply_nested", "the JSON is nested too deeply")
        return JSONResponse(api.body(), status_code=400)
