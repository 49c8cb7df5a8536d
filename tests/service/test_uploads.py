"""The API's start-up loads the upload path (parser, CSR builder) once a worker is live, so that
its first upload does not; on a real redis-server."""

from __future__ import annotations

import threading

import pytest

from graphgpu.service import uploads


@pytest.fixture(autouse=True)
def freezes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The loader's ``gc.freeze`` calls, counted instead of freezing the test process's heap."""
    calls: list[int] = []
    monkeypatch.setattr(uploads.gc, "freeze", lambda: calls.append(1))
    return calls


def _loader(env) -> tuple[threading.Thread, threading.Event]:
    settings, _ = env
    loaded = threading.Event()
    thread = threading.Thread(target=uploads.load_upload_path, args=(settings, loaded))
    thread.start()
    return thread, loaded


def test_the_upload_path_loads_at_start_up_once(env, monkeypatch: pytest.MonkeyPatch,
                                                freezes: list[int]) -> None:
    """Without waiting for a worker (a process that needs code another compiles waits for it,
    core/jit_cache.py), once; then start-up's objects leave the collector's reach (a full
    collection of the API's heap took 45-400 ms with the GIL held, stalling every request,
    after each large upload)."""
    settings, _ = env
    loads: list = []
    monkeypatch.setattr(uploads, "warm_up_upload_path", loads.append)
    thread, loaded = _loader(env)
    thread.join(5)
    assert loads == [settings] and not thread.is_alive() and loaded.is_set()
    assert freezes == [1]


def test_a_failed_load_still_makes_the_api_ready(env, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first upload then loads the path itself; readiness does not wait for ever."""

    def broken(_settings) -> None:
        raise OSError("the cache is unreadable")

    monkeypatch.setattr(uploads, "warm_up_upload_path", broken)
    thread, loaded = _loader(env)
    thread.join(5)
    assert not thread.is_alive() and loaded.is_set()
