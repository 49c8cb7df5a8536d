"""Typed views of the service's answers: graphs, jobs (with polling) and results.

:class:`Job` holds the :class:`client.sdk.Client` that made it, so a job can poll itself and
fetch its own result; everything here is plain data otherwise.
"""

from __future__ import annotations

import io
import os
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass, fields
from typing import IO, TYPE_CHECKING, Any, Literal

import numpy as np

from graphgpu.client.errors import JobCanceled, JobFailed, retry_after

if TYPE_CHECKING:
    from graphgpu.client.sdk import Client

FINISHED = frozenset({"succeeded", "failed", "canceled"})


@dataclass(frozen=True)
class Graph:
    """A stored graph's metadata (the API's ``GraphOut``).

    ``created`` is True when this call stored the graph and False when identical content was
    already stored (the upload was deduplicated) or when the metadata was merely fetched.
    """

    id: str
    n: int
    m: int
    weighted: bool
    name: str | None = None
    degree_min: int = 0
    degree_max: int = 0
    degree_mean: float = 0.0
    isolated_nodes: int = 0
    node_id_min: int = 0
    node_id_max: int = 0
    bytes: int = 0
    created_at: float = 0.0
    source: dict[str, Any] | None = None
    normalization: dict[str, int] | None = None
    created: bool = False

    @classmethod
    def from_json(cls, data: dict[str, Any], created: bool = False) -> Graph:
        """Build from the API's JSON, ignoring fields this client does not know yet."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known}, created=created)

    def to_dict(self) -> dict[str, Any]:
        """The metadata as plain JSON-able data, ``created`` included."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Result:
    """A succeeded job's JSON result; ``node_values`` are keyed by original (int) node id."""

    job_id: str
    algorithm: str
    graph_id: str | None
    backend: str
    device: str
    summary: dict[str, Any]
    node_values: dict[str, dict[int, Any]]
    arrays: dict[str, list[Any]]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        """Build from the API's JSON, turning the node-id keys (strings in JSON) into ints."""
        values = {name: {int(k): v for k, v in column.items()}
                  for name, column in (data.get("node_values") or {}).items()}
        return cls(job_id=data["job_id"], algorithm=data["algorithm"],
                   graph_id=data.get("graph_id"), backend=data["backend"],
                   device=data["device"], summary=data.get("summary") or {},
                   node_values=values, arrays=data.get("arrays") or {})


class Job:
    """A job on the service; attributes mirror the API's ``JobOut`` as last polled.

    Parameters
    ----------
    client : Client
        The client used to poll it and fetch its result.
    data : dict
        The ``JobOut`` JSON.
    retry_after : float, optional
        The server's ``Retry-After`` hint, in seconds.
    """

    id: str
    kind: str
    algorithm: str
    graph_id: str | None
    params: dict[str, Any]
    backend_requested: str
    status: str
    progress: dict[str, Any]
    created_at: float
    started_at: float | None
    finished_at: float | None
    backend: str | None
    device: str | None
    worker: str | None
    timings: dict[str, float | None]
    error: dict[str, Any] | None
    result_url: str | None

    def __init__(self, client: Client, data: dict[str, Any],
                 retry_after: float | None = None) -> None:
        self._client = client
        self._update(data, retry_after)

    def _update(self, data: dict[str, Any], retry_after: float | None) -> None:
        self.raw = data
        self._retry_after = retry_after
        for name in Job.__annotations__:
            setattr(self, name, data.get(name))
        self.progress = data.get("progress") or {"fraction": 0.0, "message": ""}
        self.timings = data.get("timings") or {}

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, algorithm={self.algorithm!r}, status={self.status!r})"

    @property
    def finished(self) -> bool:
        """Whether the job has succeeded, failed or been canceled."""
        return self.status in FINISHED

    def to_dict(self) -> dict[str, Any]:
        """The last polled ``JobOut`` JSON."""
        return dict(self.raw)

    def refresh(self) -> Job:
        """Poll the service once and update these attributes; returns ``self``."""
        response = self._client._request("GET", f"/v1/jobs/{self.id}")
        self._update(response.json(), retry_after(response))
        return self

    def cancel(self) -> Job:
        """Cancel the job (see :meth:`Client.cancel`) and update these attributes."""
        response = self._client._request("DELETE", f"/v1/jobs/{self.id}")
        self._update(response.json(), None)
        return self

    def wait(self, timeout: float | None = None, poll: float = 0.1,
             progress: bool | Literal["always"] = True) -> Job:
        """Poll until the job finishes, optionally drawing a progress bar on stderr.

        Polls start ``poll`` seconds apart and back off to the server's ``Retry-After``, so a
        short job returns promptly while a long one is not polled faster than asked.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most; ``None`` waits for ever.
        poll : float
            First polling interval in seconds (also the floor of every interval).
        progress : bool or "always"
            ``True`` draws a rich progress bar (fraction and message) when stderr is a terminal,
            ``"always"`` draws it regardless, ``False`` never does.

        Returns
        -------
        Job
            ``self``, succeeded.

        Raises
        ------
        JobFailed
            The job failed; carries the job's error code and message.
        JobCanceled
            The job was canceled.
        TimeoutError
            It had not finished after ``timeout`` seconds.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        bar = _progress_bar(progress)
        delay = poll
        with bar if bar is not None else nullcontext():
            task = bar.add_task(f"{self.algorithm} {self.id[:8]}", total=1.0,
                                message="") if bar is not None else None
            while True:
                if bar is not None and task is not None:
                    bar.update(task, completed=float(self.progress.get("fraction") or 0.0),
                               message=f"{self.status}: {self.progress.get('message') or ''}")
                if self.finished:
                    break
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"job {self.id} is still {self.status} after {timeout} s")
                ceiling = max(poll, self._retry_after or poll)
                time.sleep(min(delay, ceiling) if left is None else min(delay, ceiling, left))
                delay = min(delay * 2, ceiling)
                self.refresh()
        if self.status == "failed":
            error = self.error or {}
            raise JobFailed(self, str(error.get("code", "job_failed")),
                            str(error.get("message", f"job {self.id} failed")),
                            error.get("line"), error.get("field"))
        if self.status == "canceled":
            raise JobCanceled(self)
        return self

    def result(self) -> Result:
        """The JSON result of a succeeded job (a 409 :class:`ConflictError` otherwise)."""
        return Result.from_json(self._client._request("GET", self._result_path()).json())

    def array(self, field: str) -> np.ndarray:
        """One result array, downloaded as ``.npy``.

        Parameters
        ----------
        field : str
            ``node_id``, a node value field (e.g. ``level``) or an array name (e.g. ``sizes``).
            Node value arrays are aligned with ``array("node_id")``.

        Returns
        -------
        numpy.ndarray
        """
        response = self._client._request("GET", self._result_path(),
                                         params={"format": "npy", "field": field})
        return np.load(io.BytesIO(response.content), allow_pickle=False)

    def node_values(self, field: str) -> dict[int, Any]:
        """One node value field as ``{original node id: value}`` (built from ``.npy`` arrays,
        so it works past the service's JSON size limit)."""
        return dict(zip(self.array("node_id").tolist(), self.array(field).tolist(), strict=True))

    def rows(self, sources: list[int], field: str = "distance") -> dict[int, dict[int, Any]]:
        """Rows of a node x node result matrix (e.g. apsp's ``distance``) by original id, as
        ``{source: {target: value}}`` with ``None`` for unreachable; the service reads only
        those rows of the matrix file."""
        response = self._client._request("GET", self._result_path(), params={
            "rows": ",".join(str(int(s)) for s in sources), "field": field})
        return {int(s): {int(t): v for t, v in row.items()} for s, row in response.json().items()}

    def csv(self) -> str:
        """The node values as CSV text: a ``node_id,<fields...>`` header, then a row per node."""
        return self._client._request("GET", self._result_path(),
                                     params={"format": "csv"}).text

    def download(self, dest: str | os.PathLike[str] | IO[bytes], format: str = "csv",
                 field: str | None = None) -> None:
        """Stream the result to a file; see :meth:`client.sdk.Client.download_result`."""
        self._client.download_result(self.id, dest, format, field)

    def _result_path(self) -> str:
        return f"/v1/jobs/{self.id}/result"


def _progress_bar(mode: bool | Literal["always"]) -> Any:
    """A rich Progress on stderr, or None when it should not be drawn."""
    forced = mode == "always"
    if not mode or not (forced or sys.stderr.isatty()):
        return None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                    TimeElapsedColumn(), TextColumn("{task.fields[message]}"),
                    console=Console(file=sys.stderr, force_terminal=forced or None))
