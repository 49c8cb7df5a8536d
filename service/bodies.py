"""Large upload bodies read from the socket straight into one buffer (no h11, no copies).

uvicorn's h11 path hands a body over in pieces of at most 256 KiB, each copied five or six
times on the way (h11's receive buffer and two slices of it, the request cycle's buffer and its
``bytes``, then the app's join), with a pause and a resume of the socket for each: a 100 MB
upload took 0.5-1.8 s to read on the 2-core VM. For a ``POST /v1/graphs`` that declares a
``Content-Length`` of at least :data:`DIRECT_BODY_BYTES`, :class:`DirectBody` takes the body
over once the app first asks for it (after :mod:`graphgpu.service.boundary` has checked the
key and the declared length): it allocates the declared length at once and the connection's
protocol (:class:`graphgpu.service.connections.GuardedH11Protocol`, an
:class:`asyncio.BufferedProtocol`) has the kernel write the socket's bytes into it. The app
receives ``memoryview`` pieces of that buffer as they come, so the boundary still counts them
and times out a slow body, and :func:`direct_body` gives the route the buffer itself.

h11 never sees the body's bytes, so the connection cannot carry another request: the answer
says ``Connection: close`` (a client opens a new connection for its next request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import h11

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

#: Declared bodies from this size on are read in place (smaller ones take the h11 path).
DIRECT_BODY_BYTES = 1 << 20
#: The ASGI scope extension under which the route finds the body's :class:`DirectBody`.
EXTENSION = "graphgpu.direct_body"
_UPLOAD_ROUTE = ("POST", "/v1/graphs")
_CLOSE = (b"connection", b"close")


def declared_length(scope: dict[str, Any]) -> int | None:
    """The request's ``Content-Length`` (h11 has checked that it is one number), else None."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value)
    return None


class DirectBody:
    """One request's body, read into a buffer of its declared length.

    Installed on a request cycle of uvicorn's h11 protocol by :meth:`attach`; its ``receive``
    and ``send`` replace the cycle's.
    """

    def __init__(self, protocol: H11Protocol, cycle: RequestResponseCycle, length: int) -> None:
        self.protocol, self.cycle, self.length = protocol, cycle, length
        self.buffer: bytearray | None = None
        self.filled = 0  # bytes of the body in the buffer
        self.given = 0  # bytes of it handed to the app
        self._h11_receive, self._h11_send = cycle.receive, cycle.send
        cycle.receive, cycle.send = self.receive, self.send  # type: ignore[method-assign]
        cycle.scope.setdefault("extensions", {})[EXTENSION] = self

    @classmethod
    def attach(cls, protocol: H11Protocol, cycle: RequestResponseCycle) -> DirectBody | None:
        """A :class:`DirectBody` for ``cycle`` when its request is a large upload whose body
        has not come yet, else None (the h11 path reads it)."""
        scope = cycle.scope
        if (scope["method"], scope["path"].rstrip("/")) != _UPLOAD_ROUTE:
            return None
        length = declared_length(scope)
        if (length is None or length < DIRECT_BODY_BYTES or not cycle.more_body
                or protocol.conn.their_state is not h11.SEND_BODY):
            return None
        return cls(protocol, cycle, length)

    @property
    def complete(self) -> bool:
        """Whether the whole declared body is in :attr:`buffer`."""
        return self.buffer is not None and self.filled == self.length

    def free(self) -> memoryview:
        """Where the socket's next bytes go (the protocol's ``get_buffer``)."""
        assert self.buffer is not None
        return memoryview(self.buffer)[self.filled:]

    def wrote(self, nbytes: int) -> None:
        """``nbytes`` more of the body are in the buffer (the protocol's ``buffer_updated``)."""
        self.filled += nbytes
        if self.filled == self.length:
            self.protocol.sink = None
            self.protocol.flow.pause_reading()  # nothing after the body is ours to read
        self.cycle.message_event.set()

    def take(self, data: bytes) -> None:
        """Bytes of the body handed over as ``bytes`` (``data_received``), by an event loop
        that reads into buffers of its own whatever the protocol (uvloop): copied in once.
        Bytes past the body are dropped: the connection closes after the answer."""
        free = self.free()
        nbytes = min(len(data), len(free))
        free[:nbytes] = memoryview(data)[:nbytes]
        self.wrote(nbytes)

    def _take_over(self) -> None:
        """Allocate the buffer, move in what h11 has read already, and read the rest into it."""
        cycle, protocol = self.cycle, self.protocol
        if cycle.waiting_for_100_continue and not protocol.transport.is_closing():
            interim = h11.InformationalResponse(status_code=100, headers=[], reason="Continue")
            protocol.transport.write(protocol.conn.send(interim))
            cycle.waiting_for_100_continue = False
        self.buffer = bytearray(self.length)  # zero pages: memory is taken as bytes arrive
        head = bytes(cycle.body)
        self.buffer[:len(head)] = head
        cycle.body = bytearray()
        self.filled = len(head)
        if self.filled < self.length:
            protocol.sink = self
            protocol.flow.resume_reading()
        else:
            protocol.flow.pause_reading()

    async def receive(self) -> dict[str, Any]:
        """The ASGI ``receive`` of the request: the body's pieces as they arrive, then (as
        uvicorn's) a wait for the disconnect or the end of the response."""
        cycle = self.cycle
        if self.buffer is None:
            if cycle.disconnected or cycle.response_complete:
                return {"type": "http.disconnect"}
            self._take_over()
        while True:
            if cycle.disconnected or cycle.response_complete:
                return {"type": "http.disconnect"}
            if self.filled > self.given:
                assert self.buffer is not None
                piece = memoryview(self.buffer)[self.given:self.filled]
                self.given = self.filled
                return {"type": "http.request", "body": piece,
                        "more_body": self.given < self.length}
            cycle.message_event.clear()
            await cycle.message_event.wait()

    async def send(self, message: dict[str, Any]) -> None:
        """The cycle's ``send``, closing the connection after the answer once the body was
        taken from h11."""
        if message["type"] == "http.response.start" and self.buffer is not None:
            headers = list(message.get("headers", []))
            if _CLOSE not in headers:
                message = {**message, "headers": [*headers, _CLOSE]}
            self.cycle.keep_alive = False
        await self._h11_send(message)  # type: ignore[arg-type]


def direct_body(scope: dict[str, Any]) -> DirectBody | None:
    """The :class:`DirectBody` that reads the request's body, if one does (known from the
    request's headers on: the app need not keep the pieces it receives)."""
    return scope.get("extensions", {}).get(EXTENSION)
