"""Reading an upload (raw or one multipart file field); the slots and memory of its parse; the
upload path loaded at start-up."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from graphgpu.kernels.core.io.formats import warm_up_upload_path
from graphgpu.kernels.core.settings import Settings
from graphgpu.service.bodies import direct_body
from graphgpu.service.errors import ApiError

log = logging.getLogger("graphgpu.api")

#: Uploads that may need up to the whole parse budget (``parse_memory_bytes``): gzip'd ones
#: (a 1 MB bomb inflates to GBs) and large plain ones. At most :data:`LARGE_PARSES` of them are
#: parsed at once, so that concurrent uploads need at most that many budgets between them; the
#: others wait as coroutines, holding no worker thread (the sync routes need those).
LARGE_UPLOAD_BYTES = 16 << 20
LARGE_PARSES = 2
_large_parses = asyncio.Semaphore(LARGE_PARSES)


def _libc() -> ctypes.CDLL | None:
    """glibc, where ``malloc_trim`` exists (not on musl or macOS)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_LIBC = _libc()


def parse_slot(data: bytes | bytearray) -> AbstractAsyncContextManager[object]:
    """What to hold while parsing ``data``: one of the :data:`LARGE_PARSES` slots if the upload
    may need a whole parse budget (memory handed back to the system when it ends), else
    nothing."""
    if bytes(data[:2]) != b"\x1f\x8b" and len(data) < LARGE_UPLOAD_BYTES:
        return nullcontext()
    return _large_parse()


#: The trims under way (a task is only weakly held by the event loop).
_trims: set[asyncio.Task[None]] = set()


@asynccontextmanager
async def _large_parse() -> AsyncIterator[None]:
    await _large_parses.acquire()
    try:
        yield
    finally:
        # The slot is held until the memory is back, but the answer does not wait for it: the
        # collection takes 0.1-0.4 s in the API process (run in a thread, not on the loop).
        task = asyncio.get_running_loop().create_task(_trim_and_release())
        _trims.add(task)
        task.add_done_callback(_trims.discard)


async def _trim_and_release() -> None:
    try:
        await run_in_threadpool(give_back_memory)
    finally:
        _large_parses.release()


def give_back_memory() -> None:
    """Return freed heap memory to the system now (glibc ``malloc_trim``).

    A parse's large arrays are freed when it ends, but glibc keeps what it freed in its arenas
    (the worker threads' arenas above all, and chunks under its moving mmap threshold), so the
    API would stay gigabytes large while idle after one big upload or gzip bomb. A collection
    first frees what only a reference cycle (an error's traceback) still held.
    """
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


#: Media types accepted as a raw graph body (parameters such as charset are ignored).
RAW_TYPES = frozenset({
    "", "application/octet-stream", "application/gzip", "application/x-gzip", "application/json",
    "text/plain", "text/csv", "text/tab-separated-values", "application/x-www-form-urlencoded",
    "application/zip", "application/x-npz", "application/vnd.apache.parquet",
    "application/x-parquet",
})


@dataclass
class Upload:
    data: bytes | bytearray
    filename: str | None = None
    fields: dict[str, str] = field(default_factory=dict)


async def _read_body(request: Request) -> bytearray:
    direct = direct_body(request.scope)  # its pieces are views of the buffer it fills
    body = bytearray()  # grown in place: never the chunks and their join at once
    async for chunk in request.stream():
        if direct is None:
            body += chunk
    # The stream ends once the direct body is whole (a disconnect raises instead).
    if direct is not None and direct.complete and direct.buffer is not None:
        return direct.buffer
    return body


async def read_upload(request: Request, limit: int) -> Upload:
    """The graph file of a request, raw or multipart (a part of at most ``limit`` bytes).

    The body's size (``max_upload_bytes``) and pace are enforced while it is read by
    :class:`graphgpu.service.boundary.Boundary`, in front of the app: it never reaches here
    whole past the limit.

    Raises
    ------
    ApiError
        415 for an unsupported media type, 400 for a multipart body without a ``file`` field.
    """
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    multipart = media_type == "multipart/form-data"
    if not multipart and media_type not in RAW_TYPES and not media_type.startswith("text/"):
        raise ApiError(415, "unsupported_media_type",
                       f"cannot read a graph from {media_type!r}; send the file as the raw body "
                       "or as multipart/form-data field 'file'", field="Content-Type")
    body = await _read_body(request)
    if not multipart:
        return Upload(body)

    async def replay() -> dict:
        return {"type": "http.request", "body": bytes(body), "more_body": False}

    form = await Request(request.scope, replay).form(max_part_size=limit)
    file = form.get("file")
    if not isinstance(file, UploadFile):
        raise ApiError(400, "missing_file", "multipart upload needs a file field named 'file'",
                       field="file")
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    return Upload(await file.read(), filename=file.filename, fields=fields)


def load_upload_path(settings: Settings, loaded: threading.Event) -> None:
    """Load the upload path's compiled code (:func:`warm_up_upload_path`), then set ``loaded``
    (the API is ready once a worker is live too), so that the first upload does not (a thread
    of the API's start-up). On a fresh machine the code is compiled by whichever process needs
    it first, this one or a worker's compile pool, the others waiting for it
    (``core/jit_cache.py``); the API no longer waits for a live worker before it starts (0.5 s
    of a first start's 19 s on the GPU host, 2026-11-27)."""
    start = time.perf_counter()
    try:
        warm_up_upload_path(settings)
        log.info("upload path loaded in %.2f s", time.perf_counter() - start)
    except Exception:  # the first upload loads it instead; readiness must not wait for ever
        log.exception("loading the upload path failed")
    # Start-up's objects (routes, models, the registry, compiled code) live as long as the
    # API: out of the collector's reach, so that a full collection during a request (and
    # give_back_memory's) walks only what requests made.
    gc.collect()
    gc.freeze()
    loaded.set()
