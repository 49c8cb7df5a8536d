"""Worker warm-up: the kernel cache folder, the stamp that skips the parallel pass, the inputs."""

from __future__ import annotations

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


def test_worker_points_the_kernel_cache_before_it_looks_for_a_gpu(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy keeps the cache folder it finds when imported: the worker must set it first, or its
    own kernels go elsewhere than its compile pool's (and are all compiled again)."""
    from graphgpu.kernels.core.settings import get_settings
    from graphgpu.workers import __main__ as worker

    class Looked(Exception):
        pass

    seen: list[str | None] = []

    def gpu_available() -> bool:
        seen.append(os.environ.get("CUPY_CACHE_DIR"))
        raise Looked

    monkeypatch.delenv("CUPY_CACHE_DIR", raising=False)
    monkeypatch.setenv("GRAPHGPU_REDIS_URL", "redis://127.0.0.1:1")
    monkeypatch.setenv("GRAPHGPU_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(worker, "configure_logging", lambda *args: None)
    monkeypatch.setattr(worker.device, "gpu_available", gpu_available)
    get_settings.cache_clear()
    try:
        with pytest.raises(Looked):
            worker.main(["--backend", "auto"])
    finally:
        get_settings.cache_clear()
    assert seen == [str(tmp_path / "cache" / "cupy")]


def test_inputs_warm_up_runs_every_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphgpu.kernels.core.registry import generators

    assert set(warmup.GENERATOR_EXAMPLES) == set(generators())
    warmup.warm_up_inputs("cpu")


def test_a_part_warms_only_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphgpu.kernels.algorithms.critical_nodes import memetic, ruin, search

    class Descended(Exception):
        pass

    def descent(*args: object) -> None:
        raise Descended

    calls: list[str] = []
    monkeypatch.setattr(ruin, "ruin_rounds", descent)
    monkeypatch.setattr(search, "swap_search", lambda *args: calls.append("chain"))
    monkeypatch.setattr(memetic, "greedy_fill", lambda *args: calls.append("fill"))
    monkeypatch.setattr(warmup, "run_examples", lambda *args, **kwargs: calls.append("examples"))
    with pytest.raises(Descended):  # the descent's part reaches it, and nothing before it ran
        warmup.warm_up("cpu", ("critical_nodes",), "descent")
    assert calls == []
    warmup.warm_up("cpu", ("critical_nodes",), warmup.EXAMPLES)
    assert calls == ["examples"]
    made: list[str] = []
    monkeypatch.setattr(warmup, "generate_graph", lambda name, *args: made.append(name))
    monkeypatch.setattr(warmup, "warm_up_upload_path", lambda: made.append("parser"))
    warmup.warm_up_inputs("cpu", "grid")
    warmup.warm_up_inputs("cpu", warmup.PARSER)
    assert made == ["grid", "parser"]


def test_skewed_graph_is_the_generators_graph() -> None:
    """The GPU warm-up's hub-heavy graph, built without compiled code, is the graph the R-MAT
    generator's job stores."""
    import numpy as np

    from graphgpu.kernels.generators import generate_graph

    ours, theirs = warmup.skewed_graph(), generate_graph("rmat", warmup.SKEWED, "cpu")[0]
    for name in ("indptr", "indices", "node_ids"):
        assert np.array_equal(getattr(ours, name), getattr(theirs, name)), name
        assert getattr(ours, name).dtype == getattr(theirs, name).dtype, name


def test_skewed_graph_runs_only_cheap_estimates() -> None:
    """On the skewed warm-up graph an algorithm runs its examples only when its estimate is
    within SKEWED_SECONDS and SKEWED_BYTES; without an estimate (unless named in
    SKEWED_UNESTIMATED), or refused, it does not run there."""
    import numpy as np
    from pydantic import BaseModel, ConfigDict

    from graphgpu.kernels.core.errors import LimitExceeded
    from graphgpu.kernels.core.graph import build_graph
    from graphgpu.kernels.core.registry import Algorithm, AlgorithmResult, Estimate

    class Params(BaseModel):
        model_config = ConfigDict(json_schema_extra={"examples": [{}, {"size": 2}]})
        size: int = 1

    ran: list[int] = []

    def run(graph: object, params: Params, progress: object) -> AlgorithmResult:
        ran.append(params.size)
        return AlgorithmResult(summary={})

    def algorithm(estimate: object, name: str = "probe") -> Algorithm:
        return Algorithm(name=name, summary="", params_model=Params, result_model=Params,
                         cpu=run, gpu=run, estimate=estimate)

    def seconds(value: float, result_bytes: int = 0):
        return lambda graph, params, backend: Estimate(seconds=value * params.size,
                                                       result_bytes=result_bytes)

    def refused(graph: object, params: object, backend: object) -> Estimate:
        raise LimitExceeded("too large")

    ring = np.arange(8)
    graph, _ = build_graph(ring, np.roll(ring, 1))
    cheap = warmup.SKEWED_SECONDS * 0.6  # the first example within, the second (x2) past it
    large = warmup.SKEWED_BYTES + 1
    for estimate, expected in ((seconds(cheap), [1]), (seconds(cheap, large), []), (None, []),
                               (refused, [])):
        ran.clear()
        warmup.run_examples(algorithm(estimate), graph, "cpu", skewed=True)
        assert ran == expected
    warmup.run_examples(algorithm(None), graph, "cpu", skewed=False)  # the ring: every example
    assert ran == [1, 2]
    ran.clear()
    warmup.run_examples(algorithm(None, warmup.SKEWED_UNESTIMATED[0]), graph, "cpu", skewed=True)
    assert ran == [1, 2]  # a pass over the graph: every example there too


def test_the_worker_loads_its_job_path_before_it_is_live() -> None:
    """What RQ loads at a worker's first job (the task module, by its name; Python's strptime,
    for the job's dates) is loaded by ``load_job_path``, which the worker runs before it
    registers: in a fresh interpreter, neither is loaded before, both after."""
    import subprocess
    import sys

    code = ("import sys; import graphgpu.workers.__main__ as worker; "
            "before = 'graphgpu.workers.tasks' in sys.modules; worker.load_job_path(); "
            "print(before, 'graphgpu.workers.tasks' in sys.modules, '_strptime' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.split() == ["False", "True", "True"]




def test_a_worker_compiles_the_backends_of_the_queues_it_takes() -> None:
    """A GPU worker compiles the CPU backend before it is live only when it takes the cpu
    queue; leaving that queue to a CPU worker beside it, its pool compiles the CPU's after its
    own, for that worker. A queue the worker cannot take is refused."""
    from graphgpu.workers.__main__ import plan_queues

    assert plan_queues("gpu") == (["gpu", "auto", "cpu"], ("gpu", "cpu"), ())
    assert plan_queues("gpu", "gpu,auto") == (["gpu", "auto"], ("gpu",), ("cpu",))
    assert plan_queues("cpu") == (["auto", "cpu"], ("cpu",), ())
    assert plan_queues("cpu", "cpu") == (["cpu"], ("cpu",), ())
    for backend, queues in (("cpu", "gpu"), ("gpu", "gpu,,auto"), ("cpu", "cpu,fast")):
        with pytest.raises(ValueError, match="--queues"):
            plan_queues(backend, queues)
