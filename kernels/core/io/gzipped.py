"""Inflating a gzip'd upload within its limits, so that a gzip bomb is refused early and cheaply.

Every gzip member (bgzip writes many) is inflated in bounded steps, checking after each step the
limits of :func:`gunzip`; nothing past a limit is ever inflated.
"""

from __future__ import annotations

import zlib

from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded
from graphgpu.kernels.core.io.budget import check_budget
from graphgpu.kernels.core.settings import Settings

GZIP_MAGIC = b"\x1f\x8b"
_GZ_IN = 1 << 20  # compressed bytes fed per step, so unconsumed_tail copies stay small
_GZ_OUT = 1 << 23  # most bytes inflated per step, so a bomb never inflates much past a limit
#: Text any gzip'd upload may inflate to whatever its size (beyond it: ``max_inflation_ratio``).
INFLATION_ALLOWANCE = 64 << 20


def gunzip(data: bytes, limit: int, settings: Settings | None = None) -> bytearray:
    """Inflate every gzip member, never holding more than ``limit + 1`` bytes of output.

    With ``settings``, also stop as soon as the text passes ``max_inflation_ratio`` times the
    upload (beyond :data:`INFLATION_ALLOWANCE`) or would need, with its lines (each a possible
    edge), more than the parse budget: a gzip bomb is refused after inflating at most that
    much, never the whole of it.
    """
    setting = "GRAPHGPU_MAX_DECOMPRESSED_BYTES"
    ratio = settings.max_inflation_ratio if settings is not None else 0
    if ratio and INFLATION_ALLOWANCE + int(ratio * len(data)) < limit:
        limit = INFLATION_ALLOWANCE + int(ratio * len(data))
        setting = f"GRAPHGPU_MAX_INFLATION_RATIO={ratio:g} times the upload"
    out = bytearray()
    try:
        _inflate_into(out, data, limit, setting, settings)
    except BaseException:
        # Freed now: the error's traceback holds this frame, and with it the text, until a
        # garbage collection that may come much later (gigabytes of a bomb held while idle).
        out.clear()
        raise
    return out


def _inflate_into(out: bytearray, data: bytes, limit: int, setting: str,
                  settings: Settings | None) -> None:
    lines = 0
    view = memoryview(data).cast("B")
    off = 0
    pending: bytes | memoryview = b""
    dec = zlib.decompressobj(31)
    try:
        while True:
            if not pending and off < len(view):
                pending, off = view[off:off + _GZ_IN], off + _GZ_IN
            chunk = dec.decompress(pending, min(limit + 1 - len(out), _GZ_OUT))
            if not chunk and not pending and not dec.unconsumed_tail:
                break  # input used up and nothing left buffered in zlib
            out += chunk
            if len(out) > limit:
                raise LimitExceeded(f"gzip'd upload inflates past the limit of {limit:,} bytes "
                                    f"({setting})", code="decompressed_too_large")
            if settings is not None:
                lines += chunk.count(b"\n")
                check_budget(settings, f"the gzip'd upload (inflated to {len(out):,} bytes "
                             "so far)", len(out) + len(data), rows=lines + 1)
            pending = dec.unconsumed_tail
            if dec.eof:  # a member ended: another may follow (bgzip writes many)
                pending = dec.unused_data
                while len(pending) < 2 and off < len(view):
                    pending, off = bytes(pending) + view[off:off + _GZ_IN], off + _GZ_IN
                if not pending.strip(b"\0") and not bytes(view[off:]).strip(b"\0"):
                    return
                if pending[:2] != GZIP_MAGIC:
                    raise InvalidInput("trailing garbage after the gzip stream", code="bad_gzip")
                dec = zlib.decompressobj(31)
    except zlib.error as exc:
        raise InvalidInput(f"corrupt gzip stream: {exc}", code="bad_gzip") from None
    if not dec.eof:
        raise InvalidInput("truncated gzip stream", code="bad_gzip")
