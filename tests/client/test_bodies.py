"""The SDK's binary upload body (:mod:`graphgpu.client.bodies`): a valid zip64 ``.npz`` that
``numpy.load`` reads back exactly (CRCs checked), whose arrays start aligned in the body, so the
service's parser takes them in place."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from graphgpu.client.bodies import ALIGN, npz_pieces
from graphgpu.kernels.core.io.columns import parse_npz
from graphgpu.kernels.core.settings import Settings

RNG = np.random.default_rng(7)
CASES = [
    {"src": np.arange(5), "dst": np.arange(5)[::-1]},  # a reversed view: made contiguous
    {"src": RNG.integers(0, 9, 1001).astype(np.int32), "dst": RNG.integers(0, 9, 1001),
     "weight": RNG.random(1001), "nodes": np.array([77], np.uint16)},
    {"src": np.array([], np.int64), "dst": np.array([], np.int64)},
]


@pytest.mark.parametrize("columns", CASES)
def test_body_is_an_npz_of_the_columns(columns: dict[str, np.ndarray]) -> None:
    pieces = npz_pieces(columns)
    body = b"".join(pieces)
    assert zipfile.ZipFile(io.BytesIO(body)).testzip() is None  # every CRC-32 right
    with np.load(io.BytesIO(body)) as archive:
        assert sorted(archive.files) == sorted(columns)
        for name, array in columns.items():
            assert archive[name].dtype == array.dtype
            np.testing.assert_array_equal(archive[name], array)
    # Each array's data is a piece of its own, at an aligned offset of the body.
    offset = 0
    for piece in pieces:
        if isinstance(piece, memoryview):
            assert offset % ALIGN == 0
        offset += memoryview(piece).nbytes


def test_service_reads_the_arrays_in_place() -> None:
    src, dst = RNG.integers(0, 100, 5000), RNG.integers(0, 100, 5000)
    body = bytearray(b"".join(npz_pieces({"src": src, "dst": dst})))
    edges = parse_npz(body, Settings())
    np.testing.assert_array_equal(edges[0], src)
    np.testing.assert_array_equal(edges[1], dst)
    assert np.shares_memory(edges[0], np.frombuffer(body, np.uint8))  # no copy was needed
