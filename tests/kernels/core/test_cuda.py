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


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_a_modules_first_load_waits_for_another_process(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """While another process holds a module's lock (compiling it, in a first start's pool), a
    process that needs the module waits, then loads it (from CuPy's disk cache, where the other
    one left it): it cannot finish while the lock is held, and does once it is released."""
    import os
    import subprocess
    import sys

    from graphgpu.kernels.algorithms.traversal import gpu as traversal
    from graphgpu.kernels.core.cuda import module_lock
    from graphgpu.kernels.core.locks import exclusive

    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path))
    load = ("from graphgpu.kernels.algorithms.traversal import gpu; "
            "from graphgpu.kernels.core.cuda import kernels; "
            "print(len(kernels(gpu.CUDA_SOURCE, gpu.BFS_KERNELS)))")
    with exclusive(module_lock(traversal.CUDA_SOURCE)) as held:
        assert held
        child = subprocess.Popen([sys.executable, "-c", load], env=dict(os.environ),
                                 stdout=subprocess.PIPE, text=True)
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(8)  # its imports and the module's compile take less alone
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 0 and int(out) == len(traversal.BFS_KERNELS)
