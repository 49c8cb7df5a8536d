"""The service's exception tree and the one place that maps errors to HTTP responses."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

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


def from_kernel_error(error: KernelError, *, field_prefix: str = "") -> ApiError:
    """Translate a compute-layer error into an :class:`ApiError`."""
    status = next((code for cls, code in _KERNEL_STATUS if isinstance(error, cls)), 400)
    field = f"{field_prefix}{error.field}" if error.field and field_prefix else error.field
    code = "not_found" if status == 404 else error.code
    return ApiError(status, code, error.message, field=field, line=error.line)


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
