"""graphgpu client: a Python SDK (:class:`Client`) and the ``graphgpu`` command line.

It talks to the service over HTTP only and imports nothing from the service, workers or kernels.
"""

from graphgpu.client.errors import (
    AuthenticationError,
    ConflictError,
    GraphGPUError,
    JobCanceled,
    JobFailed,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitedError,
    ServiceUnavailable,
    UnsupportedMediaError,
    ValidationError,
)
from graphgpu.client.models import Graph, Job, Result
from graphgpu.client.sdk import DEFAULT_URL, Client, default_api_key, default_url

__all__ = [
    "DEFAULT_URL",
    "AuthenticationError",
    "Client",
    "ConflictError",
    "Graph",
    "GraphGPUError",
    "Job",
    "JobCanceled",
    "JobFailed",
    "NotFoundError",
    "PayloadTooLargeError",
    "RateLimitedError",
    "Result",
    "ServiceUnavailable",
    "UnsupportedMediaError",
    "ValidationError",
    "default_api_key",
    "default_url",
]
