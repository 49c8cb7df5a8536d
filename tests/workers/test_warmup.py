"""Worker warm-up: the kernel cache folder, the stamp that skips the parallel pass, the inputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from graphgpu.kernels.core.settings import Settings
from graphgpu.workers import warmup


def test_kernel_cache_goes_under_the_data_dir_unless_set(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUPY_CACHE_DIR", raising=False)
    folder = warmup.use_kernel_cache(Settings(data_dir=tmp_path))
    assert folder == tmp_path / "cache" / "cupy" and folder.is_dir()
    assert os.environ["CUPY_CACHE_DIR"] == str(folder)
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "mine"))
    assert warmup.use_kernel_cache(Settings(data_dir=tmp_path / "other")) == tmp_path / "mine"


def test_fingerprint_follows_the_sources_and_the_backend(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "family").mkdir()
    source = tmp_path / "family" / "kernels.cu"
    source.write_text("// v1\n")
    monkeypatch.setattr(warmup, "KERNELS", tmp_path)
    first = warmup.fingerprint("cpu")
    assert warmup.fingerprint("cpu") == first
    source.write_text("// version 2\n")
    assert warmup.fingerprint("cpu") != first


@pytest.fixture
def kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kernels folder of one source, so stamps land in tmp_path (not in our __pycache__)."""
    (tmp_path / "family").mkdir()
    (tmp_path / "family" / "kernels.cu").write_text("// v1\n")
    monkeypatch.setattr(warmup, "KERNELS", tmp_path)
    return tmp_path


def test_stamps_sit_beside_their_cache(kernels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    assert warmup.stamp_path("gpu").parent == kernels / "cupy"
    assert warmup.stamp_path("cpu").parent == kernels / "__pycache__"


def test_a_matching_stamp_skips_the_parallel_pass(kernels: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    stamp = warmup.stamp_path("cpu")
    stamp.parent.mkdir(parents=True)
    stamp.write_text(json.dumps({"fingerprint": warmup.fingerprint("cpu")}))

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("the caches are filled: no helper process may start")

    monkeypatch.setattr(warmup, "ProcessPoolExecutor", no_pool)
    assert warmup.precompile("cpu") is False


def test_a_first_start_compiles_in_helpers_and_stamps(kernels: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shares: list[tuple[str, ...]] = []

    class InProcess:
        """The pool's interface, run here: which shares would the helpers get?"""

        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def __enter__(self) -> InProcess:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def submit(self, fn: object, backend: str, share: tuple[str, ...]) -> object:
            from concurrent.futures import Future

            shares.append(share)
            future: Future = Future()
            future.set_result(None)
            return future

    monkeypatch.setattr(warmup, "ProcessPoolExecutor", InProcess)
    assert warmup.precompile("cpu", processes=1) is False  # no gain: nothing runs
    assert not shares
    assert warmup.precompile("cpu", processes=2) is True
    names = [name for share in shares for name in share]
    from graphgpu.kernels.core.registry import algorithms

    assert sorted(names) == sorted(algorithms())  # every algorithm once
    assert () in shares  # and the generators and parser
    assert json.loads(warmup.stamp_path("cpu").read_text())["fingerprint"]
    assert warmup.precompile("cpu", processes=2) is False


def test_inputs_warm_up_runs_every_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphgpu.kernels.core.registry import generators

    assert set(warmup.GENERATOR_EXAMPLES) == set(generators())
    warmup.warm_up_inputs("cpu")
