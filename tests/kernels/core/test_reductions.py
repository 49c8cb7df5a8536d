"""Counts, tests and histograms of ``core.reductions``: NumPy on the host, and the device
kernels against NumPy at lengths across CuPy's CUB block-size classes (GPU)."""

import numpy as np
import pytest

from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.device import gpu_available

needs_device = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
#: Lengths below and across CuPy's CUB thresholds (128 entries; a block size per length up to
#: 2,048; a block count above), and past one pass of the grid.
LENGTHS = (0, 1, 127, 128, 300, 2047, 2048, 100_003, 3_000_001)


def test_host_path_is_numpy() -> None:
    values = np.array([0, 3, 0, 7, 3], dtype=np.int64)
    assert reductions.count_true(values) == 3
    assert not reductions.all_true(values) and reductions.all_true(values[[1, 3]])
    assert reductions.bincount(values, 9).tolist() == [2, 0, 0, 2, 0, 0, 0, 1, 0]
    weighted = reductions.bincount(values, 8, np.array([1, 2, 3, 4, 5]))
    assert weighted.dtype == np.float64 and weighted.tolist() == [4, 0, 0, 7, 0, 0, 0, 4]


def _sample(length: int, dtype: type) -> np.ndarray:
    rng = np.random.default_rng(length)
    return ((rng.random(length) < 0.3) * rng.integers(1, 9, length)).astype(dtype)


@pytest.mark.gpu
@needs_device
@pytest.mark.parametrize("length", LENGTHS)
def test_device_counts_match_numpy(length: int) -> None:
    import cupy as cp

    host = _sample(length, np.bool_)
    device = cp.asarray(host)
    assert reductions.count_true(device) == np.count_nonzero(host)
    assert reductions.all_true(device) == bool(host.all())
    assert reductions.all_true(cp.ones(length, dtype=cp.bool_))
    assert reductions.count_true(device.reshape(-1, 1)[::2]) == np.count_nonzero(host[::2])


@pytest.mark.gpu
@needs_device
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("length", LENGTHS)
def test_device_bincount_matches_numpy(dtype: type, length: int) -> None:
    import cupy as cp

    size = max(1, length // 7)
    values = np.random.default_rng(length).integers(0, size, length).astype(dtype)
    weights = np.random.default_rng(1).integers(0, 1000, length).astype(np.int64)
    counts = reductions.bincount(cp.asarray(values), size)
    assert counts.dtype == cp.int64
    np.testing.assert_array_equal(counts.get(), np.bincount(values, minlength=size))
    sums = reductions.bincount(cp.asarray(values), size, cp.asarray(weights))
    assert sums.dtype == cp.float64  # integer weights: exact in any order of the additions
    np.testing.assert_array_equal(sums.get(), np.bincount(values, weights, minlength=size))


@pytest.mark.gpu
@needs_device
def test_device_rejects_a_type_it_has_no_kernel_for() -> None:
    import cupy as cp

    with pytest.raises(TypeError, match="uint16"):
        reductions.count_true(cp.zeros(4, dtype=cp.uint16))
    with pytest.raises(TypeError, match="uint16"):
        reductions.bincount(cp.zeros(4, dtype=cp.uint16), 1)
