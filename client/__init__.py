"""graphgpu client: a Python SDK (:class:`Client`) and the ``graphgpu`` command line.

It talks to the service over HTTP only and imports nothing from the service, workers or kernels.
"""

from client.errors import (
    ConflictError,
    GraphGPUError,
    JobCanceled,
    JobFailed,
    NotFoundError,
    PayloadTooLargeError,
    ServiceUnavailable,
    UnsupportedMediaError,
    ValidationError,
)
from client.models import Graph, Job, Result
from client.sdk import DEFAULT_URL, Client, default_url

__all__ = [
    "DEFAULT_URL",
    "Client",
    "ConflictError",
    "Graph",
    "GraphGPUError",
    "Job",
    "JobCanceled",
    "JobFailed",
    "NotFoundError",
    "PayloadTooLargeError",
    "Result",
    "ServiceUnavailable",
    "UnsupportedMediaError",
    "ValidationError",
    "default_url",
]
