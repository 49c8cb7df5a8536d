"""The API stops when asked, whatever its long-polls' listener is doing.

The listener (one pub/sub connection per API process) starts with the application. Under
Starlette's TestClient a pending pub/sub read did not take the shutdown's cancel, and the
shutdown, which awaited the listener, never ended (a fresh-clone CI run hung in it).
"""

from __future__ import annotations

import threading
import warnings

from graphgpu.kernels.core.settings import Settings
from graphgpu.service.app import create_app


def test_the_api_stops_with_its_listener_subscribed(redis_url: str, tmp_path) -> None:
    with warnings.catch_warnings():  # starlette's TestClient warns about httpx at import
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    app = create_app(Settings(redis_url=redis_url, data_dir=tmp_path, redis_prefix="shutdown"))
    subscribed: list[bool] = []

    def lifetime() -> None:
        with TestClient(app) as http:
            assert http.get("/v1/health").status_code == 200
            portal = http.portal
            assert portal is not None
            subscribed.append(portal.call(lambda: _listening(app)))

    stopper = threading.Thread(target=lifetime, daemon=True)
    stopper.start()
    stopper.join(30)  # a hung shutdown, not a slow one: the stop takes a fraction of a second
    assert not stopper.is_alive(), "the API's shutdown hung"
    assert subscribed == [True]


async def _listening(app) -> bool:
    import asyncio

    await asyncio.wait_for(app.state.job_ends.listening.wait(), 10)
    return True
