"""Typed views of the service's answers: graphs, jobs (with polling) and results.

:class:`Job` holds the connection that made it (anything with the :class:`Requester` methods,
such as :class:`graphgpu.client.sdk.Client`), so a job can poll itself and fetch its own result;
everything here is plain data otherwise. This module does not import the SDK.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, fields
from typing import IO, Any, Literal, Protocol

import httpx
import numpy as np

from graphgpu.client.errors import JobCanceled, JobFailed, PayloadTooLargeError, retry_after

FINISHED = frozenset({"succeeded", "failed", "canceled"})
#: Longest long-poll the service grants (``GET /v1/jobs/{id}?wait=``), in seconds.
MAX_WAIT_SECONDS = 30.0
#: Long-poll length while a progress bar is drawn, so that the bar moves.
_BAR_WAIT_SECONDS = 1.0


class Requester(Protocol):
    """What a :class:`Job` needs of its connection (:class:`~graphgpu.client.sdk.Client` is
    one)."""

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send a request; raise the typed error for a non-2xx answer."""
        ...

    def download_result(self, job_id: str, dest: str | os.PathLike[str] | IO[bytes],
                        format: str = "csv", field: str | None = None) -> None:
        """Stream a job's result to a file."""
        ...


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
    directed: bool = False
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
    #: The service keeps the graph's node labels (strings, numbers): node parameters are
    #: labels and every result names nodes by label, for any client.
    labelled: bool = False
    #: Labels the service cannot keep (tuples and other non-JSON values) by the integer id the
    #: service knows them by (``labels[i]`` is node ``i``), kept here by
    #: :meth:`~graphgpu.client.sdk.Client.upload_networkx`; None otherwise.
    labels: tuple[Any, ...] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], created: bool = False) -> Graph:
        """Build from the API's JSON, ignoring fields this client does not know yet."""
        known = {f.name for f in fields(cls)} - {"labels"}
        return cls(**{k: v for k, v in data.items() if k in known}, created=created)

    def to_dict(self) -> dict[str, Any]:
        """The metadata as plain JSON-able data, ``created`` included (``labels`` left out)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "labels"}


@dataclass(frozen=True)
class Result:
    """A succeeded job's JSON result; ``node_values`` are keyed by original node id (or label:
    a string key, as JSON writes a number label too).

    ``complete`` is False when only the summary was fetched (asked for, or because the whole
    result is too large for JSON, e.g. an apsp matrix): ``node_values`` and ``arrays`` are then
    empty and ``available`` names what :meth:`Job.array` (NumPy) or :meth:`Job.download`
    fetches, e.g. ``job.array("distance")``.
    """

    job_id: str
    algorithm: str
    graph_id: str | None
    backend: str
    device: str
    summary: dict[str, Any]
    node_values: dict[str, dict[Any, Any]]
    arrays: dict[str, list[Any]]
    available: dict[str, list[str]] = field(default_factory=dict)
    complete: bool = True

    @classmethod
    def from_json(cls, data: dict[str, Any], complete: bool = True,
                  labels: Sequence[Any] | None = None,
                  summary_ids: frozenset[str] = frozenset()) -> Result:
        """Build from the API's JSON, turning the node-id keys (strings in JSON) into ints, or
        into the original ``labels`` of a graph uploaded with them (a graph the service keeps
        labels of answers with labels already), as are the node ids of the ``summary_ids``
        fields of its summary."""
        key = (lambda k: labels[int(k)]) if labels is not None else (
            str if data.get("labelled") else int)
        ids = set(data.get("node_id_fields") or ()) if labels is not None else set()

        def node(v: Any) -> Any:  # a node-id value: its label (-1 and null stay "none")
            return labels[v] if isinstance(v, int) and v >= 0 else v  # type: ignore[index]

        values = {name: {key(k): node(v) if name in ids else v for k, v in column.items()}
                  for name, column in (data.get("node_values") or {}).items()}
        arrays = {name: [node(v) for v in column] if name in ids else column
                  for name, column in (data.get("arrays") or {}).items()}
        summary = {k: v if labels is None or k not in summary_ids else
                   [node(x) for x in v] if isinstance(v, list) else node(v)
                   for k, v in (data.get("summary") or {}).items()}
        return cls(job_id=data["job_id"], algorithm=data["algorithm"],
                   graph_id=data.get("graph_id"), backend=data["backend"],
                   device=data["device"], summary=summary,
                   node_values=values, arrays=arrays,
                   available=data.get("available") or {}, complete=complete)


class Job:
    """A job on the service; attributes mirror the API's ``JobOut`` as last polled.

    Parameters
    ----------
    client : Requester
        The connection used to poll it and fetch its result (a
        :class:`~graphgpu.client.sdk.Client`).
    data : dict
        The ``JobOut`` JSON.
    retry_after : float, optional
        The server's ``Retry-After`` hint, in seconds.
    labels : sequence, optional
        Original node labels of its graph by integer id (see :attr:`Graph.labels`): results
        are then keyed by label. A graph whose labels the service keeps (:attr:`Graph.labelled`)
        needs none: its labels are fetched from the service when a result needs them.
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

    def __init__(self, client: Requester, data: dict[str, Any],
                 retry_after: float | None = None,
                 labels: Sequence[Any] | None = None) -> None:
        self._client = client
        self.labels = labels
        self._available: dict[str, list[str]] | None = None
        self._head: dict[str, Any] | None = None  # the result's summary JSON, once fetched
        self._table: list[Any] | None = None  # the labels the service keeps, once fetched
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

    def refresh(self, wait: float = 0.0) -> Job:
        """Poll the service once and update these attributes; returns ``self``.

        Parameters
        ----------
        wait : float
            Long-poll: the service answers as soon as the job ends, or after this many seconds
            (at most :data:`MAX_WAIT_SECONDS`); 0 answers at once.
        """
        wait = min(max(wait, 0.0), MAX_WAIT_SECONDS)
        kwargs: dict[str, Any] = {}
        if wait > 0:
            # The answer may take ``wait`` seconds by design: allow for it past the usual timeout.
            kwargs = {"params": {"wait": f"{wait:.3f}"}, "timeout": wait + 30.0}
        response = self._client.request("GET", f"/v1/jobs/{self.id}", **kwargs)
        self._update(response.json(), retry_after(response))
        return self

    def cancel(self) -> Job:
        """Cancel the job (see :meth:`Client.cancel`) and update these attributes."""
        response = self._client.request("DELETE", f"/v1/jobs/{self.id}")
        self._update(response.json(), None)
        return self

    def wait(self, timeout: float | None = None, poll: float = 0.1,
             progress: bool | Literal["always"] = True) -> Job:
        """Wait until the job finishes, optionally drawing a progress bar on stderr.

        Long-polls the service (``GET /v1/jobs/{id}?wait=``), which answers the moment the job
        ends, so a short job returns within milliseconds of finishing and a long one costs a
        request every :data:`MAX_WAIT_SECONDS`. A service that answers at once (one without
        long-polls) is polled instead, from ``poll`` seconds apart up to its ``Retry-After``.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most; ``None`` waits for ever.
        poll : float
            First polling interval in seconds when the service does not long-poll.
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
                hold = _BAR_WAIT_SECONDS if bar is not None else MAX_WAIT_SECONDS
                hold = hold if left is None else min(hold, left)
                asked = time.monotonic()
                self.refresh(wait=hold)
                if not self.finished and time.monotonic() - asked < hold / 2:
                    # Answered early without an ending: no long-poll there, so poll politely.
                    ceiling = max(poll, self._retry_after or poll)
                    rest = None if deadline is None else deadline - time.monotonic()
                    time.sleep(max(0.0, min(delay, ceiling) if rest is None
                                   else min(delay, ceiling, rest)))
                    delay = min(delay * 2, ceiling)
        if self.status == "failed":
            error = self.error or {}
            raise JobFailed(self, str(error.get("code", "job_failed")),
                            str(error.get("message", f"job {self.id} failed")),
                            error.get("line"), error.get("field"))
        if self.status == "canceled":
            raise JobCanceled(self)
        return self

    def result(self, fields: Literal["all", "summary"] = "all") -> Result:
        """The JSON result of a succeeded job (a 409 :class:`ConflictError` otherwise).

        Parameters
        ----------
        fields : {"all", "summary"}
            ``summary`` fetches the summary alone (cheap for any size of result).

        Returns
        -------
        Result
            With ``complete=False`` and only the summary when the whole result is too large for
            JSON (an apsp matrix, say): its ``available`` names the arrays to fetch with
            :meth:`array` or :meth:`download`.
        """
        path = self._result_path()
        if fields == "all":
            try:
                return self._result(self._client.request("GET", path).json(), True)
            except PayloadTooLargeError as exc:
                if exc.code != "result_too_large":
                    raise
        data = self._client.request("GET", path, params={"fields": "summary"}).json()
        return self._result(data, False)

    def _result(self, data: dict[str, Any], complete: bool) -> Result:
        self._available = data.get("available") or self._available
        self._head = {k: data.get(k) for k in ("labelled", "node_id_fields", "graph_id")}
        marked = self._summary_node_fields() if self.labels is not None else frozenset()
        return Result.from_json(data, complete=complete, labels=self.labels, summary_ids=marked)

    def _summary_node_fields(self) -> frozenset[str]:
        """The summary fields that hold node ids: marked ``"node_id": true`` in the
        algorithm's result schema (``GET /v1/algorithms``)."""
        listing = self._client.request("GET", "/v1/algorithms").json()["algorithms"]
        schema = next((a["result_schema"] for a in listing if a["name"] == self.algorithm), {})
        return frozenset(k for k, p in schema.get("properties", {}).items() if p.get("node_id"))

    def available(self) -> dict[str, list[str]]:
        """Names of the result's ``node_values`` and ``arrays`` (fetched once, summary only)."""
        if self._available is None:
            self.result(fields="summary")
        return self._available or {"node_values": [], "arrays": []}

    def _summary_head(self) -> dict[str, Any]:
        if self._head is None:
            self.result(fields="summary")
        return self._head or {}

    def graph_labels(self) -> Sequence[Any] | None:
        """The labels of the job's graph by node id (``array("node_id")`` indexes them), or
        None when its node ids are its names; a labelled graph's are fetched once from the
        service (``GET /v1/graphs/{id}/labels``)."""
        if self.labels is not None or not self._summary_head().get("labelled"):
            return self.labels
        if self._table is None:
            self._table = self._client.request(
                "GET", f"/v1/graphs/{self._summary_head()['graph_id']}/labels").json()
        return self._table

    def _named(self, field: str, values: np.ndarray) -> Any:
        """Values of ``field`` as the client knows them: node ids of a labelled graph as a
        list of labels (``-1``, no node, as None), everything else the array as it is."""
        labels = self.graph_labels()
        if labels is None or field not in (self._summary_head().get("node_id_fields") or ()):
            return values
        return [labels[v] if v >= 0 else None for v in values.tolist()]

    def _listed(self, field: str) -> list[Any]:
        values = self._named(field, self.array(field))
        return values.tolist() if isinstance(values, np.ndarray) else values

    def array(self, field: str) -> np.ndarray:
        """One result array, downloaded as ``.npy``.

        Parameters
        ----------
        field : str
            ``node_id``, a node value field (e.g. ``level``) or an array name (e.g. ``sizes``,
            apsp's ``distance``). Node value arrays are aligned with ``array("node_id")``, which
            holds the service's integer ids (see :meth:`node_labels` for original labels).

        Returns
        -------
        numpy.ndarray
        """
        response = self._client.request("GET", self._result_path(),
                                        params={"format": "npy", "field": field})
        return np.load(io.BytesIO(response.content), allow_pickle=False)

    def node_labels(self) -> list[Any]:
        """The result's nodes in ``array("node_id")`` order, as original labels."""
        ids = self.array("node_id").tolist()
        labels = self.graph_labels()
        return ids if labels is None else [labels[i] for i in ids]

    def node_values(self, field: str) -> dict[Any, Any]:
        """One node value field as ``{original node id or label: value}``, node-id values
        (``parent``) as labels too (built from ``.npy`` arrays, so it works past the service's
        JSON size limit)."""
        return dict(zip(self.node_labels(), self._listed(field), strict=True))

    def to_pandas(self) -> Any:
        """The node values as a ``pandas.DataFrame``: ``node_id`` (original ids or labels) and
        one column per node value field. Other arrays (component sizes, apsp's ``distance``):
        :meth:`array`.

        Raises
        ------
        ImportError
            pandas is not installed (``pip install pandas``).
        """
        import pandas as pd
        columns: dict[str, Any] = {"node_id": self.node_labels()}
        for name in self.available()["node_values"]:
            columns[name] = self._named(name, self.array(name))
        return pd.DataFrame(columns)

    def to_networkx(self, G: Any, fields: Sequence[str] | None = None) -> Any:  # noqa: N803
        """Set the node values as node attributes of a NetworkX graph, by original id or label.

        Parameters
        ----------
        G : networkx.Graph
            Typically the graph that was uploaded; nodes it lacks are skipped.
        fields : sequence of str, optional
            Node value fields to set (default: all), each as the attribute of that name.

        Returns
        -------
        networkx.Graph
            ``G``, updated in place.
        """
        nodes = self.node_labels()
        for name in fields if fields is not None else self.available()["node_values"]:
            for node, value in zip(nodes, self._listed(name), strict=True):
                if node in G:
                    G.nodes[node][name] = value
        return G

    def rows(self, sources: list[Any], field: str = "distance") -> dict[Any, dict[Any, Any]]:
        """Rows of a node x node result matrix (e.g. apsp's ``distance``) by original id (or
        label), as ``{source: {target: value}}`` with ``None`` for unreachable; the service
        reads only those rows of the matrix file (a graph the service keeps labels of: labels
        as strings, as the query names them)."""
        if self.labels is None and self._summary_head().get("labelled"):
            response = self._client.request("GET", self._result_path(), params={
                "rows": ",".join(str(s) for s in sources), "field": field})
            return response.json()
        index = None if self.labels is None else {v: i for i, v in enumerate(self.labels)}
        wanted = [int(s) if index is None else index[s] for s in sources]
        response = self._client.request("GET", self._result_path(), params={
            "rows": ",".join(str(s) for s in wanted), "field": field})
        label = (lambda k: int(k)) if self.labels is None else (lambda k: self.labels[int(k)])
        return {label(s): {label(t): v for t, v in row.items()}
                for s, row in response.json().items()}

    def csv(self) -> str:
        """The result as CSV text: a ``node_id,<fields...>`` header, then a row per node (a
        result without node values: its matrix, arrays or summary; see the API docs)."""
        return self._client.request("GET", self._result_path(), params={"format": "csv"}).text

    def download(self, dest: str | os.PathLike[str] | IO[bytes], format: str = "csv",
                 field: str | None = None) -> None:
        """Stream the result to a file; see :meth:`graphgpu.client.sdk.Client.download_result`."""
        self._client.download_result(self.id, dest, format, field)

    def _result_path(self) -> str:
        return f"/v1/jobs/{self.id}/result"


#: Columns of the progress line's fixed parts: name, bar, percentage, elapsed time.
_NAME_WIDTH, _BAR_WIDTH = 18, 20


def _progress_bar(mode: bool | Literal["always"]) -> Any:
    """A rich Progress on stderr, or None when it should not be drawn.

    One line of fixed-width parts (name, bar, percentage, elapsed time) and the job's message
    cut with an ellipsis to what is left, so the line fits the terminal (80 columns included).
    """
    forced = mode == "always"
    if not mode or not (forced or sys.stderr.isatty()):
        return None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
    from rich.table import Column

    def cut(width: int | None = None, ratio: int | None = None) -> Column:
        return Column(no_wrap=True, overflow="ellipsis", max_width=width, ratio=ratio)

    return Progress(TextColumn("{task.description}", table_column=cut(_NAME_WIDTH)),
                    BarColumn(bar_width=_BAR_WIDTH), TaskProgressColumn(), TimeElapsedColumn(),
                    TextColumn("{task.fields[message]}", table_column=cut(ratio=1)),
                    console=Console(file=sys.stderr, force_terminal=forced or None),
                    expand=True)
