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


def _load_module(cache: str, barrier: Any, queue: Any) -> None:
    """In a process: count NVRTC runs while loading the traversal module through the loader,
    at the same time as another process."""
    import os

    os.environ["CUPY_CACHE_DIR"] = cache
    from cupy.cuda import compiler

    runs = []
    name = next(n for n in ("_compile_using_nvrtc_no_warning", "compile_using_nvrtc")
                if hasattr(compiler, n))
    nvrtc = getattr(compiler, name)
    setattr(compiler, name, lambda *args, **kwargs: runs.append(1) or nvrtc(*args, **kwargs))
    from graphgpu.kernels.algorithms.traversal import gpu as traversal
    from graphgpu.kernels.core.cuda import kernels

    barrier.wait()
    kernels(traversal.CUDA_SOURCE, traversal.BFS_KERNELS)
    queue.put(len(runs))


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_processes_loading_one_module_at_once_compile_it_once(tmp_path: Path) -> None:
    """Two processes that need one module on an empty kernel cache: one runs NVRTC, the other
    waits for it and loads its binary (a first start's compile pool)."""
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    barrier, queue = spawn.Barrier(2), spawn.Queue()
    processes = [spawn.Process(target=_load_module, args=(str(tmp_path), barrier, queue))
                 for _ in range(2)]
    for process in processes:
        process.start()
    runs = sorted(queue.get(timeout=300) for _ in processes)
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    assert runs == [0, 1]
