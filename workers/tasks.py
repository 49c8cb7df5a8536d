"""The RQ task: run one job (an algorithm on a stored graph, or a generator) and store its result.

The task never raises: every outcome, including errors, is written to the job record, which is
what the API serves. The process keeps its CUDA context, compiled kernels and device-resident
graphs between jobs (see ``graphgpu.kernels.core.device``).
"""

from __future__ import annotations

import logging
import shutil
import time
import traceback
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from rq.timeouts import JobTimeoutException

from graphgpu.kernels.core import device, protocol
from graphgpu.kernels.core.errors import BackendUnavailable, JobCanceled, KernelError
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    AlgorithmResult,
    Backend,
    get_algorithm,
    get_generator,
    graph_view,
)
from graphgpu.kernels.generators import generate_graph, preferred_backend
from graphgpu.workers import fanout, records
from graphgpu.workers.context import WorkerContext, current_context

log = logging.getLogger("graphgpu.worker")

#: Stored graphs a worker keeps open between jobs (the least recently used goes first).
OPEN_GRAPHS = 4
_open_graphs: OrderedDict[str, Graph] = OrderedDict()


def load_graph(ctx: WorkerContext, graph_id: str) -> Graph:
    """A stored graph, opened (memory-mapped) once and kept for the next jobs on it.

    Safe because a graph id is the address of its content: whatever is stored under it later
    is the same graph; one that was deleted is let go (and its job fails as before) when a job
    asks for it, otherwise when it drops out of the :data:`OPEN_GRAPHS` kept (its maps hold
    its disk space until then). Kept with it is what it computed once (a directed graph's
    symmetrised view).
    """
    if graph_id in _open_graphs and ctx.graphs.exists(graph_id):
        _open_graphs.move_to_end(graph_id)
        return _open_graphs[graph_id]
    _open_graphs.pop(graph_id, None)
    graph = _open_graphs[graph_id] = ctx.graphs.load(graph_id)
    while len(_open_graphs) > OPEN_GRAPHS:
        _open_graphs.popitem(last=False)
    return graph


def _backend_for(ctx: WorkerContext, requested: str) -> Backend:
    if requested == "auto":
        return ctx.backend
    if requested == "gpu" and ctx.backend != "gpu":
        raise BackendUnavailable(f"worker {ctx.name} has no GPU but the job asked for backend=gpu")
    return "gpu" if requested == "gpu" else "cpu"



def _id_dtype(graph: Graph) -> np.dtype:
    """The narrowest of int32 and int64 that holds every original id of ``graph`` and -1."""
    top = int(graph.node_ids[-1]) if graph.n else 0
    return np.dtype(np.int32 if top <= np.iinfo(np.int32).max else np.int64)


def _original_ids(graph: Graph, values: Any, dtype: np.dtype) -> Any:
    """Internal ids (``-1`` = none) as original ids of ``dtype``, on the device of ``values``:
    one gather through the node-id table with ``-1`` appended (index -1 reads it)."""
    if isinstance(values, np.ndarray):
        table = np.empty(graph.n + 1, dtype=dtype)
        table[:-1] = graph.node_ids
        table[-1] = -1
        return table[values]
    return device.original_ids(graph, dtype)[values]


def result_arrays(graph: Graph, result: AlgorithmResult) -> tuple[dict[str, np.ndarray], bool]:
    """The arrays of a job's result folder, on the host, and whether the graph's ids are
    ``0..n-1`` (then no ``node_id`` array: readers rebuild it, ``protocol.read_array``).

    Node-id fields become original ids in the narrowest dtype that holds them
    (:func:`_id_dtype`), on the device where the algorithm left them (GPU arrays are
    translated there and copied once into the worker's pinned staging buffer,
    :func:`device.to_host`: valid until the next job's); identity ids need no translation,
    only the narrowing. Other arrays are written as the algorithm made them.
    """
    # Ids are distinct, ascending and non-negative: the last is n - 1 only for 0..n-1.
    identity = graph.n == 0 or int(graph.node_ids[-1]) == graph.n - 1
    dtype = _id_dtype(graph)
    arrays: dict[str, Any] = {} if identity else {protocol.NODE_ID: graph.node_ids}
    for name, values in (*result.node_values.items(), *result.arrays.items()):
        if name in result.node_id_fields:
            values = (values.astype(dtype, copy=False) if identity
                      else _original_ids(graph, values, dtype))
        arrays[name] = values
    return device.to_host(arrays, staging=True), identity


def _run_algorithm(ctx: WorkerContext, record: dict[str, Any], backend: Backend,
                   progress: records.ProgressReporter, timings: dict[str, float]) -> bool:
    """Run the job, or fan it out into shard jobs (True: the reduce job will finish it)."""
    algorithm = get_algorithm(record["algorithm"])
    params = algorithm.params_model.model_validate(record["params"])
    if algorithm.shards is not None and "parent" not in record:
        shards = algorithm.shards(params)
        if shards:
            fanout.start(ctx, record, shards)
            return True
    start = time.perf_counter()
    # A directed graph: the algorithm's rule (registry.graph_view) picks the graph it runs on;
    # the manifest records which (``graph_view``), so the result says so.
    graph, view = graph_view(algorithm, load_graph(ctx, record["graph_id"]))
    if backend == "gpu":
        device.on_device(graph)
    timings["load_ms"] = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    run = algorithm.function(backend)
    if algorithm.migrates and "parent" in record:  # a shard: it may trade answers with the rest
        result = run(graph, params, progress, exchange=fanout.IslandExchange(ctx, record))
    else:
        result = run(graph, params, progress)
    arrays, identity = result_arrays(graph, result)
    # Compute ends with the result on the host, as written (a GPU's copies included).
    timings["compute_ms"] = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    progress.confirm()  # still this attempt's job: a stale attempt must not replace the result
    summary = algorithm.result_model.model_validate(result.summary).model_dump(mode="json")
    manifest = protocol.ResultManifest(
        summary=summary, n=graph.n, node_values=list(result.node_values),
        arrays=list(result.arrays), graph_view=view, identity_ids=identity,
        node_id_fields=[f for f in result.node_id_fields
                        if f in result.node_values or f in result.arrays])
    protocol.write_result(ctx.settings, record["id"], manifest, arrays)
    timings["write_ms"] = (time.perf_counter() - start) * 1e3
    timings["result_bytes"] = sum(int(a.nbytes) for a in arrays.values())
    return False


def _run_generator(ctx: WorkerContext, record: dict[str, Any], backend: Backend,
                   progress: records.ProgressReporter, timings: dict[str, float]) -> Backend:
    name, params = record["algorithm"], record["params"]
    if record["backend_requested"] == "auto":
        ran_on = preferred_backend(name, params, gpu=backend == "gpu")
    else:
        ran_on = "gpu" if backend == "gpu" and get_generator(name).gpu is not None else "cpu"
    timings["load_ms"] = 0.0
    start = time.perf_counter()
    graph, report = generate_graph(name, params, ran_on, progress, ctx.settings)
    meta, created = ctx.graphs.put(
        graph, name=record.get("graph_name") or f"{name}-{params['seed']}",
        source={"format": "generated", "compressed": False, "bytes": 0,
                "generator": name, "params": params, "backend": ran_on},
        report=report,
    )
    timings["compute_ms"] = (time.perf_counter() - start) * 1e3
    progress.confirm()
    summary = {"graph_id": meta["id"], "n": meta["n"], "m": meta["m"], "created": created}
    protocol.write_result(ctx.settings, record["id"], protocol.ResultManifest(summary=summary), {})
    return ran_on


#: Claims made in the worker's pipeline that starts a job (records; None: not claimed).
_claims: dict[str, dict[str, Any] | None] = {}
#: Error codes of the jobs :func:`execute` ended, until :func:`ended` takes them.
_outcomes: dict[str, str | None] = {}


def claim_with(pipe: Any, job_id: str) -> None:
    """Queue the claim of ``job_id`` on ``pipe``, the worker's pipeline that starts the job
    (``GraphWorker.prepare_execution``), so that the claim costs no round trip of its own;
    :func:`claimed_with` takes its answer, which :func:`execute` then uses."""
    ctx = current_context()
    pipe.eval(*records.claim_args(ctx.settings, job_id, ctx.name, ctx.description()))


def claimed_with(job_id: str, answer: list[Any]) -> None:
    """Keep the answer of the claim that :func:`claim_with` queued, for :func:`execute` (the
    only one kept: a worker runs one job at a time)."""
    _claims.clear()
    _claims[job_id] = records.claimed(answer)


def ended(job_id: str) -> str | None:
    """After the RQ job ``job_id``: the error code that :func:`execute` recorded for it (None:
    none, or not a job it ran), so that the worker's report need not read the record; and a
    claim :func:`execute` did not take (it never ran) is dropped, never used by a later
    attempt of the same job."""
    _claims.pop(job_id, None)
    return _outcomes.pop(job_id, None)


def execute(job_id: str) -> None:
    """Run the job ``job_id`` (the RQ entry point; the job's spec is in its record)."""
    ctx = current_context()
    if job_id in _claims:  # claimed in the worker's start of the job
        record = _claims.pop(job_id)
    else:
        record = records.claim(ctx.redis, ctx.settings, job_id, ctx.name,
                               heartbeat=ctx.description())
    if record is None:
        log.info("job %s was canceled or expired before it ran", job_id)
        return
    started = time.time()
    timings: dict[str, float] = {"queued_ms": (started - record["created_at"]) * 1e3}
    # The claim has just checked the record: a kernel's report at its start needs no round trip.
    progress = records.ProgressReporter(ctx.redis, ctx.settings, job_id, ctx.name,
                                        since=time.monotonic())
    fields: dict[str, Any] = {"device": ctx.device, "timings": timings}
    status, fanned_out = "succeeded", False
    try:
        backend = _backend_for(ctx, record["backend_requested"])
        fields.update(backend=backend, device=device.device_name(backend))
        if record["kind"] == "generate":
            ran_on = _run_generator(ctx, record, backend, progress, timings)
            fields.update(backend=ran_on, device=device.device_name(ran_on))
        else:
            fanned_out = _run_algorithm(ctx, record, backend, progress, timings)
        if ctx.remote is not None and not fanned_out:  # a worker on another host
            ctx.remote.hand_over(job_id)
    except JobCanceled as exc:
        status, fields["error"] = "canceled", {"code": exc.code, "message": exc.message}
    except KernelError as exc:
        status, fields["error"] = "failed", {"code": exc.code, "message": exc.message}
    except JobTimeoutException:
        status, fields["error"] = "failed", {
            "code": "timeout",
            "message": f"the job ran past {ctx.settings.max_job_seconds} s "
                       "(GRAPHGPU_MAX_JOB_SECONDS)",
        }
    except Exception as exc:  # a bug or a device failure: report it, keep serving
        log.error("job %s crashed:\n%s", job_id, traceback.format_exc())
        code = "out_of_memory" if "OutOfMemory" in type(exc).__name__ else "internal_error"
        status, fields["error"] = "failed", {"code": code,
                                             "message": f"{type(exc).__name__}: {exc}"}
    if fanned_out:
        return  # workers.fanout.reduce finishes it
    timings["total_ms"] = (time.time() - record["created_at"]) * 1e3
    # only_if_worker: a worker wrongly taken for dead (its job queued again and taken by another)
    # must not overwrite the record of the attempt that now owns the job
    _outcomes.clear()  # one kept: the worker's report takes it after each job
    _outcomes[job_id] = (fields.get("error") or {}).get("code")
    if not records.finish(ctx.redis, ctx.settings, job_id, status, fields=fields,
                          only_if_worker=ctx.name,
                          count=(record["algorithm"], record["started_at"])):
        log.warning("job %s %s here, but its record no longer says it runs here (this worker "
                    "was taken for lost): left as it is", job_id, status)
        return
    log.info("job %s %s in %.1f ms", job_id, status, timings["total_ms"])


def sweep_results(results_dir: Path, ttl: float) -> int:
    """Delete result folders older than ``ttl`` seconds; returns how many went."""
    if not results_dir.is_dir():
        return 0
    cutoff = time.time() - ttl
    removed = 0
    for folder in results_dir.iterdir():
        if folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed
