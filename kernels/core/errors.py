"""Exceptions raised by the compute layer; the service and workers translate them at their edge."""

from __future__ import annotations


class KernelError(Exception):
    """Base of every error the compute layer raises on purpose.

    Attributes
    ----------
    code : str
        Stable machine-readable error code (``snake_case``).
    line : int or None
        1-based line of the input that caused it, for parse errors.
    field : str or None
        Name of the parameter or input field at fault.
    """

    code = "kernel_error"

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.field = field
        if code is not None:
            self.code = code


class InvalidInput(KernelError):
    """The uploaded graph or a parameter is malformed."""

    code = "invalid_input"


class LimitExceeded(KernelError):
    """The input is well formed but larger than a configured limit."""

    code = "limit_exceeded"


class UnknownName(KernelError):
    """An algorithm, generator or format name that is not registered."""

    code = "unknown_name"


class BackendUnavailable(KernelError):
    """The requested backend (e.g. ``gpu``) cannot run in this process."""

    code = "backend_unavailable"


class JobCanceled(KernelError):
    """Raised from a progress callback when the job was canceled while running."""

    code = "canceled"
