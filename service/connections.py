"""Connection limits of the API's HTTP server, below the app: what uvicorn's settings do not do.

uvicorn closes idle keep-alive connections (``--timeout-keep-alive``) and answers 503 past
``--limit-concurrency``, but accepts every connection and waits for a request's headers forever
(a slowloris holds a file descriptor each). :class:`GuardedH11Protocol`, passed as uvicorn's
``--http`` class by ``graphgpu serve``, adds:

* a cap on open connections per client address (``max_connections_per_client``) and in all
  (``max_connections``): a connection past either is closed as soon as it is accepted, so one
  client cannot take the descriptors that other clients' requests (and ``/v1/ready``) need;
* a deadline for a request's headers (``header_timeout_seconds``), counted from the connection
  or from the end of the previous response on it.

Bodies are bounded by :mod:`graphgpu.service.boundary` (size, idle time, rate). The protocol
is an :class:`asyncio.BufferedProtocol`: a large upload's body is read by the kernel straight
into its own buffer (:mod:`graphgpu.service.bodies`), everything else into a scratch buffer and
then through h11 as before. uvloop calls ``data_received`` whatever the protocol: a large body's
bytes are then copied into its buffer once.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from graphgpu.kernels.core.settings import get_settings
from graphgpu.service.bodies import DirectBody

#: Bytes read from the socket at a time outside a direct body (asyncio's own read size).
SCRATCH_BYTES = 256 * 1024


class GuardedH11Protocol(H11Protocol, asyncio.BufferedProtocol):
    """uvicorn's h11 protocol with per-client and total connection caps, a header deadline and
    large upload bodies read in place."""

    #: Open connections by client address, in this process (one event loop serves them all).
    per_client: Counter[str] = Counter()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()
        self.header_timeout = settings.header_timeout_seconds
        self.max_total = settings.max_connections
        self.max_per_client = settings.max_connections_per_client
        self.address: str | None = None
        self.header_deadline: asyncio.TimerHandle | None = None
        self.scratch = memoryview(bytearray(SCRATCH_BYTES))
        #: The body being read in place, while its bytes come.
        self.sink: DirectBody | None = None
        self._seen: object = None  # the last request cycle looked at

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = self.client[0] if self.client else "unknown"
        over_client = 0 < self.max_per_client <= self.per_client[address]
        if over_client or len(self.connections) > self.max_total:
            transport.abort()  # nothing was read: no response owed
            return
        self.address = address
        self.per_client[address] += 1
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        self.sink = None
        if self.address is not None:
            self.per_client[self.address] -= 1
            if self.per_client[self.address] <= 0:
                del self.per_client[self.address]
            self.address = None
        super().connection_lost(exc)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.sink.free() if self.sink is not None else self.scratch

    def buffer_updated(self, nbytes: int) -> None:
        if self.sink is not None:
            self.sink.wrote(nbytes)
        else:
            self.data_received(self.scratch[:nbytes].tobytes())

    def data_received(self, data: bytes) -> None:
        if self.sink is not None:  # an event loop that ignores get_buffer (uvloop): copy once
            self.sink.take(data)
            return
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_deadline()  # the request's headers are in

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and self.cycle is not self._seen:  # a new request's headers
            self._seen = self.cycle
            DirectBody.attach(self, self.cycle)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_deadline()  # the next request's headers, on a kept-alive connection

    def _arm_header_deadline(self) -> None:
        self._disarm_header_deadline()
        self.header_deadline = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm_header_deadline(self) -> None:
        if self.header_deadline is not None:
            self.header_deadline.cancel()
            self.header_deadline = None

    def _headers_late(self) -> None:
        self.header_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()
