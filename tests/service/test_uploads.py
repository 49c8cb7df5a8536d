"""The API's start-up loads the upload path (parser, CSR builder) once a worker is live, so that
its first upload does not; on a real redis-server."""

from __future__ import annotations

import json
import threading
import time

import pytest

from graphgpu.kernels.core import protocol
from graphgpu.service import uploads
from graphgpu.service.jobs import JobStore


@pytest.fixture(autouse=True)
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The loader's ``gc.freeze`` calls, counted instead of freezing the test process's heap."""
    calls: list[int] = []
    monkeypatch.setattr(uploads.gc, "freeze", lambda: calls.append(1))
    return calls


def _loader(env) -> tuple[threading.Thread, threading.Event, threading.Event]:
    settings, redis = env
    stop, loaded = threading.Event(), threading.Event()
    thread = threading.Thread(target=uploads.load_upload_path,
                              args=(JobStore(redis, settings), settings, stop, loaded))
    thread.start()
    return thread, stop, loaded


def test_the_upload_path_loads_once_a_worker_is_live(env, monkeypatch: pytest.MonkeyPatch,
                                                     freezes: list[int]) -> None:
    """Not before (the worker's warm-up may still be filling the disk caches), and once; then
    start-up's objects leave the collector's reach (a full collection of the API's heap took
    45-400 ms with the GIL held, stalling every request, after each large upload)."""
    settings, redis = env
    loads: list = []
    monkeypatch.setattr(uploads, "warm_up_upload_path", loads.append)
    monkeypatch.setattr(uploads, "LOAD_POLL_SECONDS", 0.01)
    thread, _, loaded = _loader(env)
    time.sleep(0.2)
    assert loads == [] and thread.is_alive() and not loaded.is_set()
    redis.set(protocol.worker_key(settings, "w1"), json.dumps({"name": "w1"}), px=60_000)
    redis.sadd(protocol.workers_key(settings), "w1")
    thread.join(5)
    assert loads == [settings] and not thread.is_alive() and loaded.is_set()
    assert freezes == [1]


def test_a_loader_waiting_for_a_worker_ends_at_shutdown(env, monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    loads: list = []
    monkeypatch.setattr(uploads, "warm_up_upload_path", loads.append)
    thread, stop, loaded = _loader(env)
    stop.set()
    thread.join(5)
    assert not thread.is_alive() and loads == [] and not loaded.is_set()


def test_a_failed_load_still_makes_the_api_ready(env, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first upload then loads the path itself; readiness does not wait for ever."""
    settings, redis = env

    def broken(_settings) -> None:
        raise OSError("the cache is unreadable")

    monkeypatch.setattr(uploads, "warm_up_upload_path", broken)
    monkeypatch.setattr(uploads, "LOAD_POLL_SECONDS", 0.01)
    redis.set(protocol.worker_key(settings, "w1"), json.dumps({"name": "w1"}), px=60_000)
    redis.sadd(protocol.workers_key(settings), "w1")
    thread, _, loaded = _loader(env)
    thread.join(5)
    assert not thread.is_alive() and loaded.is_set()
