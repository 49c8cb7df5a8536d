"""Worker warm-up: the kernel cache folder, the stamp that skips the parallel pass, the inputs."""

from __future__ import annotations

import json
import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import pytest

from graphgpu.kernels.core.settings import Settings
from graphgpu.workers import warmup


class InProcessPool:
    """The compile pool's interface, run here: records what the helper processes would get
    (``(backend, share, part)`` per submit) and runs nothing. Called like the pool's class."""

    def __init__(self) -> None:
        self.submitted: list[tuple[object, tuple[str, ...], object]] = []

    def __call__(self, *args: object, **kwargs: object) -> InProcessPool:
        return self

    def __enter__(self) -> InProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def submit(self, fn: object, backend: object, share: tuple[str, ...], part: object) -> Future:
        self.submitted.append((backend, share, part))
        future: Future = Future()
        future.set_result(0.0)  # the share's seconds
        return future


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
    assert warmup.precompile("cpu") == set()


def test_a_first_start_compiles_in_helpers_and_stamps(kernels: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pool = InProcessPool()
    monkeypatch.setattr(warmup, "ProcessPoolExecutor", pool)
    assert warmup.precompile("cpu", processes=1) == set()  # no gain: nothing runs
    assert not pool.submitted
    assert warmup.precompile("cpu", processes=2) == {"cpu"}
    shares = [share for _, share, _ in pool.submitted]
    names = [name for share in shares for name in share]
    from graphgpu.kernels.core.registry import algorithms

    assert sorted(names) == sorted(algorithms())  # every algorithm once
    assert () in shares  # and the generators and parser
    # longest first: the families with warm-up hooks, then the generators and parser, the rest
    hooked = [any(algorithms()[name].warm_up for name in share) for share in shares]
    inputs = shares.index(())
    assert all(hooked[:inputs]) and hooked[:inputs] and not any(hooked[inputs:])
    assert json.loads(warmup.stamp_path("cpu").read_text())["fingerprint"]
    assert warmup.precompile("cpu", processes=2) == set()


def test_inputs_warm_up_runs_every_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphgpu.kernels.core.registry import generators

    assert set(warmup.GENERATOR_EXAMPLES) == set(generators())
    warmup.warm_up_inputs("cpu")


def test_one_pool_fills_both_backends(kernels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A GPU worker's first start: one pool, each family (and the inputs) once per backend,
    the hooked families' GPU shares first; each backend gets its stamp, and a second start runs
    nothing."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    monkeypatch.setattr(warmup, "fingerprint", lambda backend: f"code-{backend}")
    pool = InProcessPool()
    monkeypatch.setattr(warmup, "ProcessPoolExecutor", pool)
    assert warmup.precompile("gpu", "cpu", processes=2) == {"gpu", "cpu"}
    from graphgpu.kernels.core.registry import algorithms

    submitted = pool.submitted
    for backend in ("gpu", "cpu"):
        shares = [share for each, share, _ in submitted if each == backend]
        assert sorted(name for share in shares for name in share) == sorted(algorithms())
        assert () in shares
        louvain = next(share for share in shares if "louvain" in share)
        assert "leiden" in louvain  # one family, one share
    first = submitted[0]
    assert first[0] == "gpu" and any(algorithms()[name].warm_up for name in first[1])
    for backend in ("gpu", "cpu"):
        assert json.loads(warmup.stamp_path(backend).read_text())["fingerprint"] == \
            f"code-{backend}"
    assert warmup.precompile("gpu", "cpu", processes=2) == set()


def test_many_cores_split_the_pool_finer(kernels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From FINE_PROCESSES processes a GPU share is one algorithm, one part of a warm-up hook,
    one generator or the parser; a CPU share stays a family (the generators and parser one),
    but a hook that splits on the CPU gives each part a share, its examples one more. Every
    algorithm's examples once per backend, every hook part once where it splits (elsewhere the
    hook whole), the hooked algorithms first; below it, a family per share (the test above)."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    monkeypatch.setattr(warmup, "fingerprint", lambda backend: f"code-{backend}")
    pool = InProcessPool()
    monkeypatch.setattr(warmup, "ProcessPoolExecutor", pool)
    assert warmup.precompile("gpu", "cpu", processes=warmup.FINE_PROCESSES) == {"gpu", "cpu"}
    from graphgpu.kernels.core.registry import algorithms

    for backend in ("gpu", "cpu"):
        mine = [(share, part) for each, share, part in pool.submitted if each == backend]
        examples = [share for share, part in mine if share and part in (None, warmup.EXAMPLES)]
        assert sorted(name for share in examples for name in share) == sorted(algorithms())
        for name, algorithm in algorithms().items():
            split = backend in algorithm.warm_up_split and algorithm.warm_up_parts
            assert sorted(part for share, part in mine if name in share and part not in (
                None, warmup.EXAMPLES)) == sorted(algorithm.warm_up_parts if split else [])
        inputs = sorted(part or "" for share, part in mine if not share)
        if backend == "gpu":
            assert all(len(share) == 1 for share, _ in mine if share)
            assert inputs == sorted([*warmup.GENERATOR_EXAMPLES, warmup.PARSER])
        else:
            assert inputs == [""]  # generators and parser whole
            louvain = next(share for share, _ in mine if "louvain" in share)
            assert "leiden" in louvain  # one family, one share
    assert "cpu" not in algorithms()["count_cliques"].warm_up_split
    assert "cpu" in algorithms()["critical_nodes"].warm_up_split  # the split reaches a hook
    hooked = [any(algorithms()[name].warm_up for name in share)
              for _, share, _ in pool.submitted]
    assert hooked == sorted(hooked, reverse=True)


def test_a_pool_after_a_change_of_code_starts_its_longest_shares_first(
        kernels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each stamp keeps its shares' seconds; the next pool (the code changed: the stamp is
    stale) submits the shares it timed longest first, and those it never timed before them."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    code = {"version": "one"}
    monkeypatch.setattr(warmup, "fingerprint", lambda backend: f"{code['version']}-{backend}")
    pool = InProcessPool()
    monkeypatch.setattr(warmup, "ProcessPoolExecutor", pool)
    assert warmup.precompile("cpu", processes=warmup.FINE_PROCESSES) == {"cpu"}
    shares = [(backend, share, part) for backend, share, part in pool.submitted]
    stamp = json.loads(warmup.stamp_path("cpu").read_text())
    assert sorted(stamp["seconds"]) == sorted(map(warmup.share_key, shares))
    timed = dict(zip(map(warmup.share_key, shares), range(len(shares)), strict=True))
    new = warmup.share_key(shares[0])
    del timed[new]  # a share the last pool did not have
    stamp["seconds"] = timed
    warmup.stamp_path("cpu").write_text(json.dumps(stamp))
    code["version"] = "two"
    pool.submitted.clear()
    assert warmup.precompile("cpu", processes=warmup.FINE_PROCESSES) == {"cpu"}
    order = [warmup.share_key(share) for share in pool.submitted]
    assert order[0] == new
    assert order[1:] == sorted(timed, key=lambda key: -timed[key])


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


def test_pool_processes_leave_without_teardown() -> None:
    """A helper that skips the interpreter's teardown (``os._exit`` from ``atexit``) still
    hands its result back, and the pool still shuts down cleanly."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn, initializer=warmup._skip_teardown) as pool:
        assert pool.submit(os.getpid).result() != os.getpid()


def test_load_takes_each_share_as_its_helper_ends(kernels: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``load`` the worker loads every share the pool compiled, in this process, while the
    pool runs (its own warm-up afterwards finds them loaded); without it, none."""
    pool = InProcessPool()
    monkeypatch.setattr(warmup, "ProcessPoolExecutor", pool)
    loaded: list[tuple] = []
    monkeypatch.setattr(warmup, "_compile", lambda *share: loaded.append(share) or 0.0)
    assert warmup.precompile("cpu", processes=2) == {"cpu"}
    assert loaded == []
    warmup.stamp_path("cpu").unlink()
    assert warmup.precompile("cpu", processes=2, load=True) == {"cpu"}
    assert sorted(loaded, key=repr) == sorted(pool.submitted[len(pool.submitted) // 2:], key=repr)

    def fails(*share: object) -> float:  # one share does not load here: a full warm-up follows
        if share == pool.submitted[-1]:
            raise RuntimeError("no such kernel")
        return 0.0

    monkeypatch.setattr(warmup, "_compile", fails)
    warmup.stamp_path("cpu").unlink()
    assert warmup.precompile("cpu", processes=2, load=True) == set()


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


@pytest.mark.parametrize("processes", [2, warmup.FINE_PROCESSES])
@pytest.mark.parametrize("backend", ["gpu", "cpu"])
def test_the_shares_together_do_the_whole_warm_up(monkeypatch: pytest.MonkeyPatch,
                                                  processes: int, backend: str) -> None:
    """A worker that ran every share of the pool skips its own warm-up but the buffers: the
    shares' examples (on every warm-up graph), hook parts and inputs are the whole warm-up's."""
    import dataclasses

    from graphgpu.kernels.core.registry import algorithms

    calls: set[tuple] = set()
    patched = {}
    for name, algorithm in algorithms().items():
        if algorithm.warm_up is None:
            patched[name] = algorithm
            continue

        def hook(each: str, part: str | None = None, name: str = name) -> None:
            parts = algorithms()[name].warm_up_parts if part is None else (part,)
            calls.update(("hook", name, each) for each in (parts or ("whole",)))
        patched[name] = dataclasses.replace(algorithm, warm_up=hook)
    monkeypatch.setattr(warmup, "algorithms", lambda: patched)
    monkeypatch.setattr(warmup, "run_examples", lambda algorithm, graph, each, skewed: calls.add(
        ("examples", algorithm.name, graph.n, graph.directed, skewed)))
    monkeypatch.setattr(warmup, "warm_up_inputs", lambda each, part=None: calls.update(
        ("inputs", name) for name in ((*warmup.GENERATOR_EXAMPLES, warmup.PARSER)
                                      if part is None else (part,))))
    monkeypatch.setattr(warmup, "reserve_buffers", lambda each: calls.add(("buffers",)))
    warmup.warm_up(backend)
    whole = set(calls)
    calls.clear()
    for share in warmup._shares([backend], processes):
        warmup._compile(*share)
    assert calls == whole - {("buffers",)}
    assert any(call[0] == "hook" for call in whole) and ("buffers",) in whole
