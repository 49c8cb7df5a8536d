"""The job protocol shared by the API and the workers: record layout, Redis keys, queues, results.

A job record is a Redis hash :func:`job_key` whose values are JSON. The API creates it
(``queued``) and may move it to ``canceled`` (``service/jobs.py``); workers move it through
``running`` to a finished status (``workers/records.py``). RQ carries only the job id to the
task :data:`TASK`, JSON-encoded (never pickle). A finished job's arrays and manifest live in the
folder :func:`result_folder`, written whole by :func:`write_result` and read back by
:func:`read_array` (which rebuilds the node ids that were not written: identity ids).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from graphgpu.kernels.core.observability import gpu_memory_key
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import load_npy

#: The RQ task that runs one job, and the one that merges a fanned-out job's shards.
TASK = "graphgpu.workers.tasks.execute"
REDUCE_TASK = "graphgpu.workers.fanout.reduce"

#: Statuses in the order a job passes them; the last three are final.
STATUSES: tuple[str, ...] = ("queued", "running", "succeeded", "failed", "canceled")
FINISHED: frozenset[str] = frozenset({"succeeded", "failed", "canceled"})

#: File of a result folder that lists its summary and arrays.
RESULT_MANIFEST = "result.json"
#: Stem of the array of original node ids, aligned with the node values.
NODE_ID = "node_id"
#: Results larger than this write their arrays one thread each: copies into the page cache
#: scale with files (one file's buffered writes take its inode's lock, so chunks of one file
#: would not): 2 x 64 MB in 15 ms instead of 29 on two idle cores. Below it, threads cost
#: more than they save on a busy machine.
PARALLEL_WRITE_BYTES = 32 << 20
_WRITERS = ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1),
                              thread_name_prefix="result-write")


def job_key(settings: Settings, job_id: str) -> str:
    """Hash holding one job's record."""
    return settings.key("job", job_id)


def running_key(settings: Settings) -> str:
    """Set of the ids of jobs some worker runs now."""
    return settings.key("jobs", "running")


def admitted_key(settings: Settings) -> str:
    """Hash of the memory (JSON ``host_bytes``, ``device_bytes``) of each job admitted and not
    finished, by job id: admission subtracts it from what the workers report free."""
    return settings.key("jobs", "admitted")


def job_index_key(settings: Settings, tenant: str | None = None) -> str:
    """Sorted set (by creation time) of every job, or of one tenant's jobs."""
    return settings.key("jobs") if tenant is None else settings.key("tenant", tenant, "jobs")


def graph_jobs_key(settings: Settings, graph_id: str) -> str:
    """Set of the unfinished jobs that use a graph (a graph in use is not deleted)."""
    return settings.key("graph", graph_id, "jobs")


def worker_key(settings: Settings, name: str) -> str:
    """A live worker's heartbeat record (expires when the worker stops beating)."""
    return settings.key("worker", name)


def worker_record_keys(settings: Settings, name: str) -> tuple[str, ...]:
    """Every key a worker keeps about itself (heartbeat, GPU memory report): what is deleted
    when it is gone."""
    return worker_key(settings, name), gpu_memory_key(settings, name)


def workers_key(settings: Settings) -> str:
    """Set of the names of workers that have started and not stopped cleanly."""
    return settings.key("workers")


def islands_key(settings: Settings, job_id: str) -> str:
    """Hash of the answers the shards of ``job_id`` share while they run (field: the shard's
    index; value: int64 objective then the node ids), deleted when the job is reduced."""
    return settings.key("job", job_id, "islands")


def reduce_job_id(parent: str) -> str:
    """The RQ job that merges the shards of the fanned-out job ``parent``."""
    return f"{parent}-reduce"


def job_done_channel(settings: Settings, job_id: str) -> str:
    """Pub/sub channel on which a job's end is published as it is recorded, so that long-polls
    (``GET /v1/jobs/{id}?wait=S``) answer at once instead of polling: a worker publishes the
    final record (a JSON array of fields and values), the API's cancel the status."""
    return settings.key("job", job_id, "done")


def encode_fields(fields: dict[str, Any]) -> dict[str, str]:
    """Record fields as stored: every value JSON."""
    return {key: json.dumps(value) for key, value in fields.items()}


def decode_record(raw: dict[bytes, bytes]) -> dict[str, Any]:
    """A record as read from Redis (``HGETALL``), every value decoded."""
    return {key.decode(): json.loads(value) for key, value in raw.items()}


def result_folder(settings: Settings, job_id: str) -> Path:
    """Where a finished job's result lives."""
    return settings.results_dir / job_id


class ResultManifest(BaseModel):
    """What a finished job's result folder holds: the one result type that workers write
    (:func:`write_result`) and the API reads (:func:`read_manifest`).

    Attributes
    ----------
    summary : dict
        The algorithm's result model, dumped to JSON (a generator's: the new graph's id, n, m).
    n : int
        Nodes of the graph the job ran on (rows of ``node_id``); 0 without node values.
    node_values : list of str
        Names of the per-node arrays (``<name>.npy``, aligned with ``node_id``).
    arrays : list of str
        Names of the other arrays (a node x node matrix, a list of members, ...).
    graph_view : str, optional
        ``undirected``, ``directed`` or ``symmetrised`` (:func:`registry.graph_view`); None
        for a generator.
    node_id_fields : list of str
        The node-value and array names whose values are node ids (original ids), stored in
        the narrowest of int32 and int64 that holds the graph's largest id.
    identity_ids : bool
        The graph's original ids are ``0..n-1`` (every generated graph, most uploads): node
        ``i`` is original id ``i``, so no ``node_id.npy`` is written and :func:`read_array`
        rebuilds it. (Results written before this flag have it False and the file.)
    """

    summary: dict[str, Any]
    n: int = 0
    node_values: list[str] = []
    arrays: list[str] = []
    graph_view: str | None = None
    node_id_fields: list[str] = []
    identity_ids: bool = False

    def names(self) -> list[str]:
        """Names of the result's arrays (``node_id`` first, where there is one), written or
        rebuilt (:func:`read_array` reads each)."""
        names = [*self.node_values, *self.arrays]
        return [NODE_ID, *names] if self.n or names else names

    def files(self) -> list[str]:
        """Names of the folder's ``.npy`` files: :meth:`names` less the identity ids."""
        return [name for name in self.names()
                if not (name == NODE_ID and self.identity_ids)]


def read_manifest(settings: Settings, job_id: str) -> ResultManifest:
    """The manifest of a job's result (raises ``OSError`` when there is none)."""
    return ResultManifest.model_validate_json(
        (result_folder(settings, job_id) / RESULT_MANIFEST).read_bytes())


def read_array(folder: Path, name: str) -> np.ndarray:
    """One array of a result folder, memory-mapped read-only; the node ids of an
    :attr:`~ResultManifest.identity_ids` result, which are not written, rebuilt (int64
    ``0..n-1``, as they were written before).

    Raises ``OSError`` for a name the folder does not hold.
    """
    path = folder / f"{name}.npy"
    if name == NODE_ID and not path.exists():
        manifest = ResultManifest.model_validate_json((folder / RESULT_MANIFEST).read_bytes())
        if manifest.identity_ids:
            return np.arange(manifest.n, dtype=np.int64)
    return load_npy(path)


def write_result(settings: Settings, job_id: str, manifest: ResultManifest,
                 arrays: dict[str, np.ndarray]) -> None:
    """Write a job's result folder atomically (a staging folder, then one rename).

    Parameters
    ----------
    settings : Settings
    job_id : str
    manifest : ResultManifest
    arrays : dict of str to ndarray
        Saved as ``<name>.npy`` (those :meth:`ResultManifest.files` names), each array by
        a thread of its own when the result passes :data:`PARALLEL_WRITE_BYTES`; a
        C-ordered array (a pinned buffer from the GPU) is written from where it lies.
    """
    staging = settings.tmp_dir / f"result.{job_id}.{uuid.uuid4().hex}"
    staging.mkdir(parents=True)
    files = [(staging / f"{name}.npy", array) for name, array in arrays.items()]
    if len(files) > 1 and sum(int(a.nbytes) for a in arrays.values()) > PARALLEL_WRITE_BYTES:
        list(_WRITERS.map(_save, *zip(*files, strict=True)))  # raises what a write raised
    else:
        for path, array in files:
            _save(path, array)
    (staging / RESULT_MANIFEST).write_text(manifest.model_dump_json())
    target = result_folder(settings, job_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(target, ignore_errors=True)
    os.rename(staging, target)


def _save(path: Path, array: np.ndarray) -> None:
    np.save(path, array, allow_pickle=False)  # a C-ordered array goes out as it is, no copy
