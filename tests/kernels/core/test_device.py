"""Host -> device copies of graph arrays (``-m gpu``, device only): large ones go in pieces
through pinned buffers and arrive exactly as ``cupy.asarray`` would give them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphgpu.kernels.core.device import gpu_available

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


@pytest.mark.gpu
@needs_gpu
def test_upload_in_pieces_equals_asarray(tmp_path: Path) -> None:
    import cupy as cp

    from graphgpu.kernels.core import device

    rng = np.random.default_rng(5)
    piece = device.UPLOAD_PIECE
    ints = rng.integers(-2**31, 2**31, size=(7 * piece) // 8 + 13, dtype=np.int64)  # 7 pieces
    np.save(tmp_path / "ints.npy", ints)
    mapped = np.load(tmp_path / "ints.npy", mmap_mode="c")  # a stored graph's arrays
    floats = rng.random(piece // 2)[::2]  # not contiguous: half a piece
    cases = {"mapped": mapped, "odd": ints[: piece // 8 * 3 + 1].astype(np.int32),
             "small": ints[:1000], "floats": floats, "empty": ints[:0],
             # pinned, one piece not full (a small stored graph's CSR)
             "one_piece": ints[:device.PINNED_UPLOAD_MIN // 8 * 3 + 5]}
    for name, array in cases.items():
        got = device.upload(array)
        assert got.dtype == array.dtype and got.shape == array.shape, name
        np.testing.assert_array_equal(cp.asnumpy(got), array, err_msg=name)
