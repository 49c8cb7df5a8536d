"""The CUDA loader's compiled text (no GPU needed: the text is what CuPy's cache keys on)."""

from pathlib import Path

from graphgpu.kernels.core.cuda import module_code


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
