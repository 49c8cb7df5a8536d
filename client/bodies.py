"""Upload bodies as the SDK sends them: in pieces of at most :data:`UPLOAD_CHUNK` bytes, and the
binary body of edge arrays, an uncompressed ``.npz`` sent as the arrays' own memory, never
joined into one ``bytes``.

``numpy.savez`` into a ``BytesIO`` copied each array through its chunked writer, the zip's CRC
and the buffer's growth, then once more for ``getvalue()``: 570-650 ms for 104 MB of ids on the
2-core VM, longer than the service's whole upload of it. Here the body is a list of pieces: the
zip and ``.npy`` headers as small ``bytes`` and each array as a ``memoryview`` of itself; the
members' CRC-32s (zip needs them) are computed in threads, one per array (``zlib.crc32``
releases the GIL). The archive is a plain zip64 of stored members that ``numpy.load`` and
``zipfile`` read; each array's data starts 64-byte aligned in the body, so the service takes it
in place without a copy.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO

import numpy as np

#: Bytes handed to httpx at a time when an upload body is sent. httpcore sends a write with
#: ``socket.send`` and re-slices the unsent rest (``bytes[n:]``, a copy) until it is gone, so a
#: 100 MB body given whole was copied about twenty times over (4-5 s on the 2-core VM, against
#: 0.5-1 s for the socket alone); pieces of this size are sent in a few calls each.
UPLOAD_CHUNK = 1 << 20
#: Data of every member starts at a multiple of this in the body (the local header's extra
#: field is padded).
ALIGN = 64
_DOS_DATE = (1980 - 1980) << 9 | 1 << 5 | 1  # 1980-01-01, the zip epoch
_ZIP64 = 45  # "version needed to extract" for zip64
_FFFF = 0xFFFFFFFF
_PAD_TAG = 0xD935  # the extra field Android's zipalign pads with


def _npy_header(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, np.lib.format.header_data_from_array_1_0(array))
    return buffer.getvalue()


def _crc(header: bytes, data: memoryview) -> int:
    return zlib.crc32(data, zlib.crc32(header))


def npz_pieces(columns: dict[str, np.ndarray]) -> list[bytes | memoryview]:
    """The pieces of an uncompressed ``.npz`` of ``columns`` (each array as ``name.npy``), in
    order; their concatenation is the file.

    Parameters
    ----------
    columns : dict of str to numpy.ndarray
        1-D arrays (made contiguous here if they are not).

    Returns
    -------
    list of bytes or memoryview
        Headers as ``bytes``; array data as views of the arrays (valid while they live).
    """
    arrays = {name: np.ascontiguousarray(a) for name, a in columns.items()}
    headers = {name: _npy_header(a) for name, a in arrays.items()}
    datas = {name: memoryview(a.reshape(-1)).cast("B") for name, a in arrays.items()}
    with ThreadPoolExecutor(max(1, len(arrays))) as pool:
        crcs = dict(zip(arrays, pool.map(_crc, headers.values(), datas.values()), strict=True))
    pieces: list[bytes | memoryview] = []
    central: list[bytes] = []
    offset = 0
    for name in arrays:
        filename = f"{name}.npy".encode()
        size = len(headers[name]) + datas[name].nbytes
        # The zip64 extra (sizes), then a padding block (zipalign's tag) so that the array's
        # data lands on ALIGN.
        extra = struct.pack("<HHQQ", 1, 16, size, size)
        pad = -(offset + 30 + len(filename) + len(extra) + len(headers[name])) % ALIGN
        if pad:
            pad += ALIGN if pad < 4 else 0
            extra += struct.pack("<HH", _PAD_TAG, pad - 4) + b"\0" * (pad - 4)
        pieces.append(struct.pack("<IHHHHHIIIHH", 0x04034B50, _ZIP64, 0, 0, 0, _DOS_DATE,
                                  crcs[name], _FFFF, _FFFF, len(filename), len(extra))
                      + filename + extra + headers[name])
        pieces.append(datas[name])
        cextra = struct.pack("<HHQQQ", 1, 24, size, size, offset)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, _ZIP64, _ZIP64, 0, 0, 0,
                                   _DOS_DATE, crcs[name], _FFFF, _FFFF, len(filename),
                                   len(cextra), 0, 0, 0, 0, _FFFF) + filename + cextra)
        offset += len(pieces[-2]) + datas[name].nbytes
    directory = b"".join(central)
    end64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, _ZIP64, _ZIP64, 0, 0, len(central),
                        len(central), len(directory), offset)
    locator = struct.pack("<IIQI", 0x07064B50, 0, offset + len(directory), 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, _FFFF, _FFFF, 0)
    pieces.append(directory + end64 + locator + end)
    return pieces


def slices(views: list[memoryview]) -> Iterator[memoryview]:
    """The buffers in :data:`UPLOAD_CHUNK` slices, none copied here."""
    for view in views:
        for start in range(0, view.nbytes, UPLOAD_CHUNK):
            yield view[start:start + UPLOAD_CHUNK]


def file_pieces(fh: IO[bytes]) -> Iterator[bytes]:
    """A binary file read in :data:`UPLOAD_CHUNK` pieces (httpx would read 64 KiB at a time)."""
    while piece := fh.read(UPLOAD_CHUNK):
        yield piece
