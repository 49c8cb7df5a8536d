"""A worker on another host: the API's data folder reached over HTTP instead of shared.

``graphgpu worker`` with ``GRAPHGPU_URL`` and ``GRAPHGPU_WORKER_KEY`` set (``python -m
graphgpu.workers --remote``) starts one. It takes jobs from Redis as every worker does (records,
progress, cancel, heartbeats and the lost-worker monitor are all Redis) and differs in three
places only:

* graphs: :class:`GraphCache`, a store on the worker's own ``GRAPHGPU_DATA_DIR`` that fetches a
  graph by content id from the API's worker routes (``service/routes/internal.py``) the first
  time a job needs it and keeps at most ``GRAPHGPU_GRAPH_CACHE_BYTES`` of them, the least
  recently used going first; a graph that a generator job makes is uploaded to the API;
* results: written here as everywhere (``protocol.write_result``), then handed to the API
  (:meth:`RemoteApi.hand_over`) before the record says the job finished, so that a client never
  sees ``succeeded`` without its result; the API takes it only from the worker that owns the
  job's current attempt;
* the reduce of a fanned-out job fetches the shards' results first (:meth:`RemoteApi.
  fetch_results`), whichever hosts ran them.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.errors import KernelError, UnknownName
from graphgpu.kernels.core.graph import Graph, NormalizationReport
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.kernels.core.transfer import (
    CHUNK,
    INTERNAL_PREFIX,
    WORKER_HEADER,
    ChunkReader,
    FolderStream,
    replace_folder,
    unpack,
)

log = logging.getLogger("graphgpu.remote")
#: Seconds one transfer keeps trying while the API cannot be reached or answers 5xx (backing
#: off between tries), enough for `serve` to restart a dead API.
RETRY_SECONDS = 60.0
T = TypeVar("T")


class TransferFailed(KernelError):
    """The API refused a transfer, or could not be reached for :data:`RETRY_SECONDS`."""

    code = "transfer_failed"

    def __init__(self, message: str, *, status: int | None = None,
                 code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.status = status


def _refusal(response: httpx.Response) -> tuple[str, str | None]:
    try:
        error = response.json()["error"]
        return error["message"], error["code"]
    except (ValueError, KeyError, TypeError):
        return response.text[:200], None


class RemoteApi:
    """The API's worker routes, as one worker (``worker``, its name in Redis) calls them.

    Parameters
    ----------
    settings : Settings
        ``url`` and ``worker_key`` set; ``data_dir`` is this host's.
    worker : str
        The worker's name: the API gives a job's result only to the worker its record names.
    """

    def __init__(self, settings: Settings, worker: str) -> None:
        if not settings.url or settings.worker_key is None:
            raise ValueError("a remote worker needs GRAPHGPU_URL and GRAPHGPU_WORKER_KEY")
        self.settings = settings
        logging.getLogger("httpx").setLevel(logging.WARNING)  # not a log line per request
        self.http = httpx.Client(
            base_url=settings.url.rstrip("/") + INTERNAL_PREFIX,
            headers={"Authorization": f"Bearer {settings.worker_key.get_secret_value()}",
                     WORKER_HEADER: worker},
            timeout=httpx.Timeout(120.0, connect=10.0))
        self.graphs = GraphCache(settings, self)

    def _call(self, method: str, path: str, read: Callable[[httpx.Response], T],
              content: Callable[[], bytes | Iterable[bytes]] | None = None) -> T:
        """One request, tried again from the start while the API is unreachable or answers
        5xx; ``read`` consumes a 2xx response (a stream); a 4xx raises at once."""
        delay, problem, tries = 0.5, "", 0
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            tries += 1
            try:
                with self.http.stream(method, path,
                                      content=content() if content else None) as response:
                    if response.status_code < 400:
                        return read(response)
                    response.read()
                    message, code = _refusal(response)
                    if response.status_code < 500:
                        raise TransferFailed(f"{method} {path}: {message}",
                                             status=response.status_code, code=code)
                    problem = f"HTTP {response.status_code}: {message}"
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if time.monotonic() + delay > deadline:
                raise TransferFailed(f"{method} {path} failed {tries} times in "
                                     f"{RETRY_SECONDS:.0f} s, last: {problem} (API at "
                                     f"{self.settings.url})")
            log.warning("%s %s failed (%s): trying again in %.1f s", method, path, problem,
                        delay)
            time.sleep(delay)
            delay = min(8.0, delay * 2)

    def check(self) -> None:
        """Whether the API answers the worker key (called at start-up, to fail early)."""
        self._call("GET", "/ping", lambda response: response.read())

    def download(self, path: str, target: Path) -> None:
        """Unpack the folder that ``GET path`` sends into the new folder ``target``."""
        def read(response: httpx.Response) -> None:
            shutil.rmtree(target, ignore_errors=True)  # a broken earlier try's leftovers
            unpack(ChunkReader(response.iter_bytes(CHUNK)), target, limit=2**62)

        self._call("GET", path, read)

    def upload(self, path: str, folder: Path) -> Any:
        """``PUT`` the folder ``folder`` to ``path``; the API's JSON answer (None if empty)."""
        return self._call("PUT", path, lambda response: response.read() and response.json(),
                          content=lambda: FolderStream(folder).body())

    def hand_over(self, job_id: str) -> None:
        """Give the API the result folder that job ``job_id`` wrote here, then drop it here."""
        folder = protocol.result_folder(self.settings, job_id)
        try:
            self.upload(f"/jobs/{job_id}/result", folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def fetch_results(self, job_ids: list[str]) -> None:
        """Bring here the results of ``job_ids`` that the API holds (a reduce's shards)."""
        for job_id in job_ids:
            staging = self.settings.tmp_dir / f"fetch.{job_id}.{uuid.uuid4().hex}"
            try:
                self.download(f"/jobs/{job_id}/result", staging)
            except TransferFailed as exc:
                if exc.status == 404:  # failed or expired: the reduce sees it has none
                    continue
                raise
            replace_folder(staging, protocol.result_folder(self.settings, job_id),
                           staging.with_name(staging.name + ".old"))

    def reduced(self, parent: str, shard_ids: list[str], status: str) -> None:
        """After a reduce here: hand the parent's result over, drop the shards' copies."""
        try:
            if status == "succeeded":
                self.hand_over(parent)
        finally:
            for job_id in shard_ids:
                shutil.rmtree(protocol.result_folder(self.settings, job_id), ignore_errors=True)


class GraphCache(GraphStore):
    """The worker's graph store: a cache of the API's, fetched by content id on first use.

    The cache's folder is the worker's ``graphs_dir``; several workers on one host may share it
    (fetches land by rename, so two fetching at once both end with one whole copy). A graph's
    last use is its folder's modification time.
    """

    def __init__(self, settings: Settings, api: RemoteApi) -> None:
        super().__init__(settings.graphs_dir, settings.tmp_dir)
        self.api, self.limit = api, settings.graph_cache_bytes

    def load(self, graph_id: str, *, mmap: bool = True) -> Graph:
        """The graph, fetched from the API unless cached; then older graphs go past the cap."""
        for attempt in (1, 2):  # a worker sharing this cache may evict it before it is mapped
            if not self.exists(graph_id):
                self.fetch(graph_id)
            try:
                os.utime(self.path(graph_id))
                graph = super().load(graph_id, mmap=mmap)
                break
            except (UnknownName, FileNotFoundError):
                if attempt == 2:
                    raise
        self.evict(keep=graph_id)  # safe for the maps just made: unlinked files stay readable
        return graph

    def fetch(self, graph_id: str) -> None:
        """Copy the API's graph ``graph_id`` into the cache (UnknownName if it has none)."""
        staging = self.tmp_dir / f"fetch.{graph_id}.{uuid.uuid4().hex}"
        start = time.perf_counter()
        try:
            self.api.download(f"/graphs/{graph_id}", staging)
            try:
                os.rename(staging, self.path(graph_id))
            except OSError:  # another worker of this host fetched it first
                if not self.exists(graph_id):
                    raise
        except TransferFailed as exc:
            if exc.status == 404:
                raise UnknownName(f"graph {graph_id!r} does not exist",
                                  field="graph_id") from None
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        log.info("graph %s fetched in %.0f ms", graph_id, (time.perf_counter() - start) * 1e3)

    def put(self, graph: Graph, *, name: str | None, source: dict[str, Any],
            report: NormalizationReport) -> tuple[dict[str, Any], bool]:
        """Store a generated graph here and in the API; ``created`` is the API's answer."""
        meta, _ = super().put(graph, name=name, source=source, report=report)
        answer = self.api.upload(f"/graphs/{meta['id']}", self.path(meta["id"]))
        self.evict(keep=meta["id"])
        return meta, bool(answer["created"])

    def evict(self, keep: str) -> None:
        """Remove the least recently used graphs (never ``keep``) until the cache fits its cap."""
        entries = []
        for folder in self.graphs_dir.iterdir():
            try:
                size = sum(file.stat().st_size for file in folder.iterdir())
                entries.append((folder.stat().st_mtime, size, folder))
            except OSError:  # removed meanwhile by a worker sharing the cache
                continue
        total = sum(size for _, size, _ in entries)
        for _, size, folder in sorted(entries):
            if total <= self.limit:
                break
            if folder.name == keep:
                continue
            trash = self.tmp_dir / f"evicted.{folder.name}.{uuid.uuid4().hex}"
            try:
                os.rename(folder, trash)  # gone for readers at once
            except OSError:
                continue
            shutil.rmtree(trash, ignore_errors=True)
            total -= size
            log.info("graph %s left the cache (%d bytes; cache cap %d)", folder.name, size,
                     self.limit)


def connect(settings: Settings, worker: str) -> RemoteApi:
    """The :class:`RemoteApi` of a worker starting on another host, after checking that the
    API answers its key (a wrong URL or key stops the start-up with the reason)."""
    api = RemoteApi(settings, worker)
    try:
        api.check()
    except TransferFailed as exc:
        raise SystemExit(f"cannot use the API's worker routes: {exc.message}") from None
    log.info("worker %s reaches the API at %s; graphs cached in %s (cap %d bytes)", worker,
             settings.url, settings.graphs_dir, settings.graph_cache_bytes)
    return api
