"""Typed exceptions of the graphgpu client, and the mapping from HTTP responses to them.

Every non-2xx answer of the service carries ``{"error": {"code", "message", "line"?,
"field"?}}``; :func:`error_from_response` turns it into the subclass for its status, so callers
can ``except NotFoundError`` rather than compare status codes.
"""

from __future__ import annotations

from typing import Any

import httpx


class GraphGPUError(Exception):
    """Base class of every error the client raises on the service's behalf.

    Parameters
    ----------
    status : int or None
        HTTP status of the response; ``None`` when no response was involved (a failed job, an
        unreachable service).
    code : str
        The service's machine-readable error code, e.g. ``not_found``.
    message : str
        The service's message, for people.
    line : int, optional
        1-based line of the uploaded file at fault.
    field : str, optional
        Parameter or body field at fault, e.g. ``params.source``.
    """

    def __init__(self, status: int | None, code: str, message: str, line: int | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.line = line
        self.field = field

    def location(self) -> str:
        """Where the fault is, e.g. ``"line 3 / field edges"``; empty when unknown.

        Returns
        -------
        str
            The line and field parts that are known, joined by ``" / "``.
        """
        parts = [f"line {self.line}" if self.line is not None else "",
                 f"field {self.field}" if self.field else ""]
        return " / ".join(p for p in parts if p)

    def __str__(self) -> str:
        where = self.location()
        return f"{self.code}: {self.message}" + (f" ({where})" if where else "")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
                f"message={self.message!r}, line={self.line!r}, field={self.field!r})")


class NotFoundError(GraphGPUError):
    """404: no such graph, job or result (results can expire)."""


class AuthenticationError(GraphGPUError):
    """401 or 403: no API key, an unknown one, or one without the rights (set ``api_key`` or
    ``GRAPHGPU_API_KEY``)."""


class RateLimitedError(GraphGPUError):
    """429: too many requests or too many active jobs for this API key.

    Attributes
    ----------
    retry_after : float or None
        Seconds the service asked to wait (its ``Retry-After`` header).
    """

    retry_after: float | None = None


class ConflictError(GraphGPUError):
    """409: the request clashes with current state (graph in use, job already finished...)."""


class ValidationError(GraphGPUError):
    """400 or 422: a malformed upload (see ``line``) or invalid parameters (see ``field``)."""


class PayloadTooLargeError(GraphGPUError):
    """413: the upload or the JSON result is over a service limit."""


class UnsupportedMediaError(GraphGPUError):
    """415: the upload was sent with a content type the service cannot read."""


class ServiceUnavailable(GraphGPUError):  # noqa: N818 (public names fixed by the API)
    """The service could not be reached (or answered 502/503/504)."""


class JobFailed(GraphGPUError):  # noqa: N818 (public names fixed by the API)
    """A waited-for job ended with status ``failed``; ``code``/``message`` are the job's error.

    Attributes
    ----------
    job : Any
        The :class:`client.sdk.Job` as last polled.
    """

    def __init__(self, job: Any, code: str, message: str, line: int | None = None,
                 field: str | None = None) -> None:
        super().__init__(None, code, message, line, field)
        self.job = job


class JobCanceled(GraphGPUError):  # noqa: N818 (public names fixed by the API)
    """A waited-for job ended with status ``canceled``.

    Attributes
    ----------
    job : Any
        The :class:`client.sdk.Job` as last polled.
    """

    def __init__(self, job: Any) -> None:
        super().__init__(None, "canceled", f"job {job.id} was canceled")
        self.job = job


_BY_STATUS: dict[int, type[GraphGPUError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    415: UnsupportedMediaError,
    422: ValidationError,
    429: RateLimitedError,
    502: ServiceUnavailable,
    503: ServiceUnavailable,
    504: ServiceUnavailable,
}


def error_from_response(response: httpx.Response) -> GraphGPUError:
    """The typed exception for a non-2xx response.

    Parameters
    ----------
    response : httpx.Response
        A response whose status is not 2xx. A streamed response must have been read.

    Returns
    -------
    GraphGPUError
        The subclass for the status (the base class for others), with the service's code,
        message, line and field; a body that is not the service's error JSON (a proxy's page,
        say) becomes code ``http_<status>`` with the body text as the message.
    """
    status = response.status_code
    cls = _BY_STATUS.get(status, GraphGPUError)
    try:
        detail = response.json()["error"]
        error = cls(status, str(detail["code"]), str(detail["message"]), detail.get("line"),
                    detail.get("field"))
    except (ValueError, KeyError, TypeError):
        text = response.text.strip()[:500] or response.reason_phrase
        error = cls(status, f"http_{status}", text)
    if isinstance(error, RateLimitedError):
        error.retry_after = retry_after(response)
    return error


def retry_after(response: httpx.Response) -> float | None:
    """The response's ``Retry-After`` in seconds (None when absent or not a number)."""
    try:
        return float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        return None  # absent, or an HTTP date, which the service never sends


def unreachable(base_url: str, exc: httpx.TransportError) -> ServiceUnavailable:
    """A :class:`ServiceUnavailable` for a transport failure, saying where we looked.

    Parameters
    ----------
    base_url : str
        The service URL the client was using.
    exc : httpx.TransportError
        What httpx raised.

    Returns
    -------
    ServiceUnavailable
        With code ``timeout`` for a timeout and ``service_unavailable`` otherwise.
    """
    if isinstance(exc, httpx.TimeoutException):
        return ServiceUnavailable(None, "timeout", f"the service at {base_url} did not answer in "
                                  f"time ({type(exc).__name__}); raise the client timeout for "
                                  "big uploads")
    reason = str(exc) or type(exc).__name__
    return ServiceUnavailable(None, "service_unavailable",
                              f"cannot reach {base_url} ({reason}); is the service running at "
                              f"{base_url}? Start it with `graphgpu serve` or set GRAPHGPU_URL")
