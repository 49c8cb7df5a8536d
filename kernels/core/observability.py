"""What every process shares for observability: the log format and the metrics' Redis layout.

Logs are one JSON object a line (or plain text), with the job id of the job being served when
there is one (:func:`job_context`). Workers write job durations and their GPU memory into Redis
under the keys defined here; the API's ``/metrics`` reads them at scrape time, so the numbers
hold across processes and restarts without a push gateway.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from graphgpu.kernels.core.settings import Settings

#: The job the current thread or task is serving, stamped on its log records.
current_job: ContextVar[str | None] = ContextVar("graphgpu_job_id", default=None)

#: Upper bounds (seconds) of the job-duration histogram buckets.
DURATION_BUCKETS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 60.0, 300.0, 1800.0)

# Attributes every LogRecord has; anything else was passed with ``extra=`` and is logged as is.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, process label, logger, message, job id, extras."""

    def __init__(self, process: str) -> None:
        super().__init__()
        self.process = process

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "process": self.process,
            "logger": record.name,
            "message": record.getMessage(),
        }
        job_id = getattr(record, "job_id", None) or current_job.get()
        if job_id:
            entry["job_id"] = job_id
        entry.update({k: v for k, v in record.__dict__.items()
                      if k not in _STANDARD and k not in entry and v is not None})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class _TextFormatter(logging.Formatter):
    def __init__(self, process: str) -> None:
        super().__init__(f"%(asctime)s {process} %(levelname)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        job_id = getattr(record, "job_id", None) or current_job.get()
        return f"{text} [job {job_id}]" if job_id else text


def configure_logging(process: str, settings: Settings, level: int = logging.INFO) -> None:
    """Send this process's logs to stderr in ``settings.log_format``.

    Parameters
    ----------
    process : str
        Label of the process in every line (``api``, ``worker``, ``monitor``, ``serve``).
    settings : Settings
    level : int
        Level of the root logger.
    """
    handler = logging.StreamHandler(sys.stderr)
    formatter = JsonFormatter if settings.log_format == "json" else _TextFormatter
    handler.setFormatter(formatter(process))
    root = logging.getLogger()
    root.handlers = [handler]  # replace, so that configuring twice does not log twice
    root.setLevel(level)


@contextmanager
def job_context(job_id: str) -> Iterator[None]:
    """Stamp ``job_id`` on every log record made inside the block."""
    token = current_job.set(job_id)
    try:
        yield
    finally:
        current_job.reset(token)


def durations_key(settings: Settings) -> str:
    """Hash of job-duration counts; fields ``<algorithm>|<backend>|<status>|<le>`` (jobs in that
    bucket, not cumulative), ``...|sum`` (seconds) and ``...|count``."""
    return settings.key("metrics", "job_durations")


def gpu_memory_key(settings: Settings, worker: str) -> str:
    """JSON ``{"gpu_free_bytes", "gpu_total_bytes"}`` that a GPU worker reports about itself."""
    return settings.key("worker", worker, "gpu")


def bucket_label(seconds: float) -> str:
    """The histogram bucket of a duration: the first bound not below it, or ``+Inf``."""
    return next((f"{b:g}" for b in DURATION_BUCKETS if seconds <= b), "+Inf")
