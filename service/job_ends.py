"""What wakes long-polls (``GET /v1/jobs/{id}?wait=``): one pub/sub connection per API process.

Workers publish a job's end on :func:`graphgpu.kernels.core.protocol.job_done_channel` in the
script that records it. :class:`JobEnds` listens to every job's channel (one ``PSUBSCRIBE``) on
one connection for all the process's long-polls, so a long-poll costs no connection, subscribe
or unsubscribe of its own: it registers its job, reads the record, and is woken when the job
ends, with the final record when the message carries it (a worker's end does), so that it need
not read it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio import Redis as AsyncRedis

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.settings import Settings

log = logging.getLogger("graphgpu.api")
#: Pause before listening again after the pub/sub connection failed.
RETRY_SECONDS = 0.5
#: Longest wait for the listener to take a cancel at shutdown.
STOP_SECONDS = 0.1


class JobEnd(asyncio.Event):
    """Set when a job ends; ``record`` is its final record when the end's message carried it
    (``None``: read it)."""

    record: dict[str, Any] | None = None


def ended_record(data: bytes | str) -> dict[str, Any] | None:
    """The final record a worker published (a JSON array of fields and values, see
    ``workers/records.py``); None for a message without one (the API's ``canceled``)."""
    if isinstance(data, bytes):
        data = data.decode()
    if not data.startswith("["):
        return None
    flat = json.loads(data)
    return {key: json.loads(value) for key, value in zip(flat[::2], flat[1::2], strict=True)}


class JobEnds:
    """The jobs this process's long-polls wait for, woken by one pub/sub listener.

    Parameters
    ----------
    redis : redis.asyncio.Redis
        The application's asynchronous connection pool (the listener takes one connection).
    settings : Settings
    """

    def __init__(self, redis: AsyncRedis, settings: Settings) -> None:
        self.redis = redis
        self.pattern = protocol.job_done_channel(settings, "*")
        self._around = protocol.job_done_channel(settings, "\0").encode().split(b"\0")
        self.waiters: dict[str, set[JobEnd]] = {}
        self.listening = asyncio.Event()  # set while the pattern is subscribed
        self.task: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def watch(self, job_id: str, seconds: float) -> AsyncIterator[JobEnd]:
        """An event set when the job ends, live from the moment it is yielded (read the record
        after that: an end published before is in the record). It is also set when the
        listener lost its connection, and so may have missed the end: wait
        :meth:`ready` and read the record again. TimeoutError when the listener cannot
        subscribe within ``seconds``."""
        event = JobEnd()
        self.waiters.setdefault(job_id, set()).add(event)
        try:
            await self.ready(seconds)
            yield event
        finally:
            events = self.waiters.get(job_id, set())
            events.discard(event)
            if not events:
                self.waiters.pop(job_id, None)

    def start(self) -> None:
        """Start the listener unless it is running (the application starts it with itself:
        made at the first long-poll, its connection and subscribe cost that poll ~8 ms on the
        VM, after a first job that ended sooner)."""
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._listen())

    async def stop(self) -> None:
        """Cancel the listener (the application's shutdown, before its pool closes, which
        closes the listener's connection). It waits :data:`STOP_SECONDS` at most: under
        Starlette's TestClient a pending pub/sub read did not take the cancel, and waiting for
        it held the shutdown for ever."""
        if self.task is None or self.task.done():
            return
        self.task.cancel()
        if not (await asyncio.wait({self.task}, timeout=STOP_SECONDS))[0]:
            log.debug("the long-polls' listener had not stopped; its connection closes with "
                      "the pool")

    async def ready(self, seconds: float) -> None:
        """Wait until the listener is subscribed (starting it when it is not running)."""
        self.start()
        await asyncio.wait_for(self.listening.wait(), seconds)

    async def _listen(self) -> None:
        """Subscribe and wake the waiters of each job that ends, until cancelled; after a
        failure, wake every waiter (an end may have been missed) and subscribe again."""
        while True:
            pubsub = self.redis.pubsub()
            try:
                await pubsub.psubscribe(self.pattern)
                while True:
                    message = await pubsub.get_message(timeout=None)
                    if message is None:
                        continue
                    if message["type"] == "psubscribe":
                        self.listening.set()
                    elif message["type"] == "pmessage":
                        self._wake(message["channel"], message["data"])
            except Exception:
                if not self.waiters:
                    return  # (the finally runs) nobody waits, e.g. the pool closed at shutdown
                log.warning("the long-polls' pub/sub listener failed; subscribing again",
                            exc_info=True)
            finally:
                self.listening.clear()
                for events in self.waiters.values():
                    for event in events:
                        event.record = None
                        event.set()
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            if not self.waiters:
                return  # nobody waits: the next long-poll starts it again
            await asyncio.sleep(RETRY_SECONDS)

    def _wake(self, channel: bytes | str, data: bytes | str) -> None:
        if isinstance(channel, str):
            channel = channel.encode()
        head, tail = self._around
        job_id = channel[len(head):len(channel) - len(tail)].decode()
        events = self.waiters.get(job_id)
        if not events:
            return
        try:
            record = ended_record(data)
        except (ValueError, UnicodeDecodeError):  # not ours to judge: read the record instead
            record = None
        for event in events:
            event.record = record
            event.set()
