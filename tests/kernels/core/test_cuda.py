"""The CUDA loader's compiled text (no GPU needed: the text is what CuPy's cache keys on), and
launches on side streams (GPU)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphgpu.kernels.core.cuda import concurrently, module_code
from graphgpu.kernels.core.device import gpu_available


def test_module_code_changes_when_an_included_header_does(tmp_path: Path) -> None:
    source = tmp_path / "family.cu"
    source.write_text('#include "family.cuh"\nextern "C" __global__ void k() {}\n')
    header = tmp_path / "family.cuh"
    header.write_text("#define WIDTH 32\n")
    before = module_code(source)
    assert before.startswith(source.read_text())
    assert module_code(source) == before
    header.write_text("#define WIDTH 64\n")
    assert module_code(source) != before


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_concurrently_runs_each_on_a_side_stream_before_what_follows() -> None:
    import cupy as cp

    main = cp.cuda.get_current_stream()
    arrays = [cp.zeros(1 << 20) for _ in range(3)]
    streams = []

    def adds(array: Any, value: float) -> Callable[[], None]:
        def enqueue() -> None:
            streams.append(cp.cuda.get_current_stream().ptr)
            for _ in range(50):  # long enough to still run when the sums below are queued
                cp.add(array, value, out=array)
        return enqueue

    concurrently(*(adds(a, k + 1.0) for k, a in enumerate(arrays)))
    sums = [float(a.sum()) for a in arrays]  # queued on the main stream
    assert sums == [50.0 * (k + 1) * (1 << 20) for k in range(3)]
    assert len(set(streams)) == 3 and main.ptr not in streams
    assert cp.cuda.get_current_stream().ptr == main.ptr
