"""The API stops when asked, whatever its long-polls' listener is doing.

The listener (one pub/sub connection per API process) starts with the application. Under
Starlette's TestClient, stopped right after its start (the listener still subscribing), the
listener did not take the shutdown's cancel, and the shutdown, which awaited it, never ended
(a fresh-clone CI run hung in it).
"""

from __future__ import annotations

import threading
import warnings

from redis import Redis

from graphgpu.kernels.core.settings import Settings
from graphgpu.service.app import create_app
from tests.conftest import wait_until


def _test_client() -> type:
    with warnings.catch_warnings():  # starlette's TestClient warns about httpx at import
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    return TestClient


def test_the_api_stops_right_after_it_started(redis_url: str, tmp_path) -> None:
    TestClient = _test_client()  # noqa: N806
    app = create_app(Settings(redis_url=redis_url, data_dir=tmp_path, redis_prefix="stopnow"))

    def lifetime() -> None:
        with TestClient(app):
            pass

    stopper = threading.Thread(target=lifetime, daemon=True)
    stopper.start()
    stopper.join(30)  # a hung shutdown, not a slow one: the stop takes a fraction of a second
    assert not stopper.is_alive(), "the API's shutdown hung"


def test_the_api_stops_with_its_listener_subscribed(redis_url: str, tmp_path) -> None:
    TestClient = _test_client()  # noqa: N806
    app = create_app(Settings(redis_url=redis_url, data_dir=tmp_path, redis_prefix="shutdown"))
    redis = Redis.from_url(redis_url)
    before = _subscribers(redis)
    subscribed: list[bool] = []

    def lifetime() -> None:
        with TestClient(app):
            subscribed.append(bool(wait_until(lambda: _subscribers(redis) > before, 10)))

    stopper = threading.Thread(target=lifetime, daemon=True)
    stopper.start()
    stopper.join(30)  # a hung shutdown, not a slow one: the stop takes a fraction of a second
    assert not stopper.is_alive(), "the API's shutdown hung"
    assert subscribed == [True]
    redis.close()


def _subscribers(redis: Redis) -> int:
    return sum(b"psub=1" in line for line in redis.execute_command(
        "CLIENT LIST TYPE pubsub", NEVER_DECODE=True).splitlines())
