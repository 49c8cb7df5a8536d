"""Admission of a job before it is queued: the algorithm and its parameters, the graph's
directed rule, node parameters, the backend, and the cost and memory estimates.

One :class:`Admission` serves one ``POST /v1/jobs``: it reads the graph's metadata once and maps
the stored graph (memory-mapped: an estimate pages in only the arrays it reads) only for an
algorithm that makes an estimate. Memory is compared with what the workers have free less what
the jobs already admitted and not finished are estimated to take, in the one script that records
the job (:meth:`graphgpu.service.jobs.JobStore.submit`), so two jobs cannot both be admitted
against the same free memory.

A job costs one round trip to Redis (issue 23): the workers are not read before that script,
which checks what the admission assumed of them (whether a GPU worker is live, as the last
admission saw; the memory :attr:`Admission.needs`) and, when that is wrong, records nothing and
answers the workers as it read them (:meth:`graphgpu.service.jobs.JobStore.capacity`'s view).
The checks are then made again on that view, refusing as they would have on a read before
(409, 413, 422), and the script runs once more. A refusal is thus always decided on workers
read by the request itself, and an admission without an earlier one to go by, or with an
``Idempotency-Key``, reads the workers first (two round trips, as before).
"""

from __future__ import annotations

import functools
import json
import typing
from collections.abc import Iterator
from functools import cached_property
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

from graphgpu.kernels.core.errors import KernelError
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.labels import Labels
from graphgpu.kernels.core.registry import (
    Algorithm,
    Backend,
    Estimate,
    get_algorithm,
    graph_view,
    view_name,
)
from graphgpu.kernels.core.settings import Settings
from graphgpu.service.deps import AppState
from graphgpu.service.errors import ApiError, Conflict, from_kernel_error
from graphgpu.service.jobs import NoRoom
from graphgpu.service.limits import (
    check_device_memory,
    check_host_memory,
    default_device_bytes,
    default_host_bytes,
)
from graphgpu.service.validation import check_node_values, strict_params


def validation_error(exc: ValidationError, prefix: str = "params") -> ApiError:
    """422 naming the first invalid parameter, e.g. ``params.source``."""
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first["loc"])
    field = f"{prefix}.{loc}" if loc else prefix
    return ApiError(422, "invalid_params", f"{field}: {first['msg']}", field=field)


def require_backend(workers: list[dict[str, Any]], backend: str) -> None:
    """Refuse at submit time a backend that no live worker offers."""
    if backend == "gpu" and not any(w["backend"] == "gpu" for w in workers):
        raise Conflict("no_gpu_worker", "backend=gpu was asked for but no GPU worker is running",
                       field="backend")


def graph_labels(st: AppState, graph_id: str, visible: bool) -> Labels | None:
    """The labels of a graph the caller can see (``visible``: it owns it, or is an admin); None
    for a graph without labels, or one the caller cannot see (refused later, as it would be)."""
    if not visible:
        return None
    try:
        return st.graphs.labels(graph_id)
    except KernelError:  # no such graph
        return None


def algorithm_and_params(name: str, params: dict[str, Any], settings: Settings,
                         labels: Labels | None = None) -> tuple[Algorithm, BaseModel]:
    """The named algorithm and its validated parameters (422 naming what is wrong; 413 past
    ``settings.max_params_bytes``); with the graph's ``labels``, node parameters are labels,
    turned into node ids here."""
    try:
        algorithm = get_algorithm(name)
        if labels is not None:
            params = _labels_to_ids(algorithm, params, labels)
        return algorithm, strict_params(algorithm.params_model, params, settings)
    except KernelError as exc:
        raise from_kernel_error(exc, status=422, field="algorithm") from None
    except ValidationError as exc:
        raise validation_error(exc) from None


def _labels_to_ids(algorithm: Algorithm, params: dict[str, Any], labels: Labels
                   ) -> dict[str, Any]:
    """``params`` with its node parameters (a label, or lists of them, nested as ``pairs``
    are; or the keys of a mapping typed ``dict[int, ...]``, as pagerank's ``personalization``)
    as node ids, all found in one pass over the labels; 422 ``unknown_node`` for a label not
    in the graph."""
    keyed = [k for k in _node_keyed(algorithm.params_model) if isinstance(params.get(k), dict)]
    names = [k for k in algorithm.node_params if params.get(k) is not None] + keyed
    if not names:
        return params
    leaves = {k: list(params[k]) if k in keyed else _leaves(params[k]) for k in names}
    ids = iter(labels.find([v for k in names for v in leaves[k]]).tolist())
    out = dict(params)
    for k in names:
        found = [next(ids) for _ in leaves[k]]
        if -1 in found:
            missing = leaves[k][found.index(-1)]
            raise ApiError(422, "unknown_node", f"params.{k}: node {json.dumps(missing)} is not "
                           "in the graph", field=f"params.{k}")
        out[k] = (dict(zip(found, params[k].values(), strict=True)) if k in keyed
                  else _rebuilt(params[k], iter(found)))
    return out


@functools.cache
def _node_keyed(model: type[BaseModel]) -> tuple[str, ...]:
    """The parameters of ``model`` typed as mappings from node id (``dict[int, ...]``)."""
    def keyed(annotation: Any) -> bool:
        if typing.get_origin(annotation) is dict:
            return typing.get_args(annotation)[:1] == (int,)
        return any(keyed(a) for a in typing.get_args(annotation))
    return tuple(name for name, f in model.model_fields.items() if keyed(f.annotation))


def _leaves(value: Any) -> list[Any]:
    return [x for v in value for x in _leaves(v)] if isinstance(value, list) else [value]


def _rebuilt(value: Any, ids: Iterator[int]) -> Any:
    """``value`` (a label or nested lists of labels) with each label replaced by the next of
    ``ids``."""
    return [_rebuilt(v, ids) for v in value] if isinstance(value, list) else next(ids)


class Admission:
    """The checks of one job on one stored graph, before it is queued.

    Parameters
    ----------
    st : AppState
    algorithm : Algorithm
    params : BaseModel
        Validated by :func:`algorithm_and_params`.
    graph_id : str
        A graph the caller owns.
    requested : str
        ``auto``, ``cpu`` or ``gpu``.
    read_workers : bool
        Read the live workers before the checks (:meth:`JobStore.capacity`) even when the last
        admission tells what to assume of them.
    """

    def __init__(self, st: AppState, algorithm: Algorithm, params: BaseModel, graph_id: str,
                 requested: str, *, read_workers: bool = False) -> None:
        self.st, self.algorithm, self.params = st, algorithm, params
        self.graph_id, self.requested = graph_id, requested
        self.meta = st.graphs.meta(graph_id)  # the one read of meta.json
        #: Whether a GPU worker is assumed live (None: the workers are read instead).
        self.assumed: bool | None = None if read_workers else st.jobs.gpu_live
        #: The live workers (:meth:`JobStore.capacity`); None while only assumed.
        self.workers = st.jobs.capacity() if self.assumed is None else None
        self._needs: tuple[dict[str, Any], dict[str, Any]] = ({}, {})  # set by check()

    @cached_property
    def graph(self) -> Graph:
        """The graph the algorithm runs on, memory-mapped (read only by estimates)."""
        return graph_view(self.algorithm, self.st.graphs.load(self.graph_id))[0]

    def check(self) -> tuple[dict[str, Any] | None, dict[str, int]]:
        """Run every check; the estimate to record (None for none) and the memory to count
        against later admissions (``host_bytes``, ``device_bytes``). While the workers are
        only assumed, those of their checks are left to the script that records the job.

        Raises
        ------
        ApiError
            422 (directed graph refused, unknown node, parameters refused by the estimate,
            too long), 409 (no GPU worker), 413 (result too large, not enough memory).
        """
        try:
            view_name(self.algorithm, bool(self.meta.get("directed")))
        except KernelError as exc:
            raise from_kernel_error(exc, status=422) from None
        self._check_node_params()
        if self.workers is None:
            try:
                return self._check_estimate()
            except ApiError:  # refused for a backend only assumed: decide on the workers read
                self.workers = self.st.jobs.capacity()
        return self._check_workers()

    def _check_workers(self) -> tuple[dict[str, Any] | None, dict[str, int]]:
        """:meth:`check`'s checks of the backend and the estimate, on :attr:`workers`."""
        require_backend(self.workers, self.requested)
        return self._check_estimate()

    def submit(self, **job: Any) -> tuple[dict[str, Any], bool]:
        """Check the job (:meth:`check`), then record and queue it: :meth:`JobStore.submit`
        with ``job``'s arguments (``params``, ``idempotency_key``, ``owner``, ``key_id``,
        ``extra``), the estimate added to its ``extra``.

        Returns
        -------
        record : dict
        created : bool

        Raises
        ------
        ApiError
            As :meth:`check`, or :meth:`JobStore.submit` (429; 503 when the memory changed
            while the job was admitted).
        """
        estimate, memory = self.check()
        assumed = self.workers is None
        try:
            return self._record(estimate, memory, job, gpu_live=self._expected() if assumed
                                else None)
        except NoRoom as exc:
            if not assumed:
                self.check_memory(exc.workers)  # the 413 it would have given
                raise
            # The workers were not as assumed (or the memory is short): the checks again on
            # those the script read, refusing as a read before them would have.
            self.workers = exc.workers
            estimate, memory = self._check_workers()
        try:
            return self._record(estimate, memory, job, gpu_live=None)
        except NoRoom as exc:
            self.check_memory(exc.workers)
            raise

    def _expected(self) -> bool | None:
        """Whether a GPU worker must be live for this admission's checks to hold: one is for
        ``backend=gpu``; ``auto`` chose its backend on :attr:`assumed`."""
        if self.requested == "gpu":
            return True
        return self.assumed if self.requested == "auto" else None

    def _record(self, estimate: dict[str, Any] | None, memory: dict[str, int],
                job: dict[str, Any], gpu_live: bool | None) -> tuple[dict[str, Any], bool]:
        extra = {**({"estimate": estimate} if estimate else {}), **(job.get("extra") or {})}
        return self.st.jobs.submit(**{**job, "extra": extra or None}, kind="algorithm",
                                   name=self.algorithm.name, graph_id=self.graph_id,
                                   backend=self.requested, memory=memory, needs=self.needs,
                                   gpu_live=gpu_live)

    def _check_node_params(self) -> None:
        if not self.algorithm.node_params:
            return
        node_ids = self.st.graphs.node_ids(self.graph_id)
        for name in self.algorithm.node_params:
            value = getattr(self.params, name)
            raw = np.asarray(value if value is not None else [], dtype=object)
            check_node_values(raw.ravel().tolist(), f"params.{name}")
            values = np.atleast_1d(np.asarray(value if value is not None else [],
                                              dtype=np.int64))
            pos = np.searchsorted(node_ids, values)
            found = (pos < node_ids.shape[0]) & (
                node_ids[np.minimum(pos, node_ids.shape[0] - 1)] == values)
            if not found.all():
                missing = int(values[~found][0])
                raise ApiError(422, "unknown_node", f"params.{name}: node {missing} is not in "
                               f"graph {self.graph_id}", field=f"params.{name}")

    def backend(self) -> Backend:
        """The backend the job will most likely run on: ``auto`` goes to a GPU when one is
        live."""
        if self.requested in ("cpu", "gpu"):
            return "cpu" if self.requested == "cpu" else "gpu"
        if self.workers is None:
            return "gpu" if self.assumed else "cpu"
        return "gpu" if any(w["backend"] == "gpu" for w in self.workers) else "cpu"

    def estimate(self, backend: Backend) -> Estimate:
        """The algorithm's estimate (an empty one for an algorithm that makes none); 422 for
        parameters the estimate refuses (``critical_nodes``' ``k``, checked here once)."""
        if self.algorithm.estimate is None:
            return Estimate()
        try:
            return self.algorithm.estimate(self.graph, self.params, backend)
        except KernelError as exc:
            raise from_kernel_error(exc, field_prefix="params.", status=422,
                                    field="params") from None

    @property
    def needs(self) -> dict[str, int]:
        """The memory that :meth:`check` found free, for the submit to check again in the step
        that records the job (:meth:`JobStore.submit`), so that two jobs are never admitted
        against the same free memory: ``host_bytes`` (on some worker) and, for a GPU job,
        ``device_bytes`` (on some GPU worker)."""
        host, device = self._needs
        needs = {} if host.get("host_bytes") is None else {"host_bytes": int(host["host_bytes"])}
        if device["backend"] == "gpu" and device.get("device_bytes") is not None:
            needs["device_bytes"] = int(device["device_bytes"])
        return needs

    def check_memory(self, workers: list[dict[str, Any]]) -> None:
        """413 when no worker of ``workers`` (:meth:`JobStore.capacity`) has the memory that
        :meth:`check` estimated free (host memory; GPU memory for a GPU job)."""
        host, device = self._needs
        check_host_memory(workers, host)
        if device["backend"] == "gpu":
            check_device_memory(workers, device)

    def _check_estimate(self) -> tuple[dict[str, Any] | None, dict[str, int]]:
        """Refuse a job whose estimated cost passes a limit, or whose memory passes what the
        workers have free for it; else its estimate record and memory.

        A job that may run on a GPU is also compared with the largest free GPU memory of the
        live GPU workers (with a default device estimate for algorithms that make none).
        """
        backend = self.backend()
        estimate = self.estimate(backend)
        record = {"backend": backend, **estimate.as_dict()}
        if backend == "gpu" and estimate.device_bytes is None:
            record["device_bytes"] = default_device_bytes(self.meta)
        limits = self.st.settings
        detail = f"; {estimate.detail}" if estimate.detail else ""
        if estimate.result_bytes is not None and estimate.result_bytes > limits.max_result_bytes:
            raise ApiError(413, "result_too_large",
                           f"the result would take about {estimate.result_bytes:,} bytes, over "
                           f"GRAPHGPU_MAX_RESULT_BYTES={limits.max_result_bytes:,}{detail}",
                           field="params", extra={"estimate": record})
        if estimate.seconds is not None and estimate.seconds > limits.max_job_seconds:
            raise ApiError(422, "job_too_long",
                           f"the job would take about {estimate.seconds:,.0f} s on the "
                           f"{backend}, over GRAPHGPU_MAX_JOB_SECONDS={limits.max_job_seconds}"
                           f"{detail}", field="params", extra={"estimate": record})
        host = {} if estimate.host_bytes is not None else {  # (a default, not recorded)
            "host_bytes": default_host_bytes(self.meta, estimate.result_bytes)}
        self._needs = ({**record, **host}, record)
        if self.workers is not None:  # else the script that records the job checks it
            self.check_memory(self.workers)
        memory = {k: int(v) for k, v in {**record, **host}.items()
                  if k in ("host_bytes", "device_bytes") and v is not None}
        # A CPU job without an estimate of its own records none (its default is not shown).
        shown = self.algorithm.estimate is not None or backend == "gpu"
        return (record if shown else None), memory
