"""A first start's compile pool: shares, stamps, locks, the order of the shares, loading."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import pytest

from graphgpu.workers import compile_pool, warmup


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


def test_fingerprint_follows_the_sources_and_the_backend(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "family").mkdir()
    source = tmp_path / "family" / "kernels.cu"
    source.write_text("// v1\n")
    monkeypatch.setattr(compile_pool, "KERNELS", tmp_path)
    first = compile_pool.fingerprint("cpu")
    assert compile_pool.fingerprint("cpu") == first
    source.write_text("// version 2\n")
    assert compile_pool.fingerprint("cpu") != first


@pytest.fixture
def kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kernels folder of one source, so stamps land in tmp_path (not in our __pycache__)."""
    (tmp_path / "family").mkdir()
    (tmp_path / "family" / "kernels.cu").write_text("// v1\n")
    monkeypatch.setattr(compile_pool, "KERNELS", tmp_path)
    return tmp_path


def test_stamps_sit_beside_their_cache(kernels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    assert compile_pool.stamp_path("gpu").parent == kernels / "cupy"
    assert compile_pool.stamp_path("cpu").parent == kernels / "__pycache__"


def test_a_matching_stamp_skips_the_parallel_pass(kernels: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    stamp = compile_pool.stamp_path("cpu")
    stamp.parent.mkdir(parents=True)
    stamp.write_text(json.dumps({"fingerprint": compile_pool.fingerprint("cpu")}))

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("the caches are filled: no helper process may start")

    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", no_pool)
    assert compile_pool.precompile("cpu") == set()


def test_a_first_start_compiles_in_helpers_and_stamps(kernels: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_pool, "typical_seconds", dict)  # no share ever timed
    pool = InProcessPool()
    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", pool)
    assert compile_pool.precompile("cpu", processes=1) == set()  # no gain: nothing runs
    assert not pool.submitted
    assert compile_pool.precompile("cpu", processes=2) == {"cpu"}
    shares = [share for _, share, _ in pool.submitted]
    names = [name for share in shares for name in share]
    from graphgpu.kernels.core.registry import algorithms

    assert sorted(names) == sorted(algorithms())  # every algorithm once
    assert () in shares  # and the generators and parser
    # longest first: the families with warm-up hooks, then the generators and parser, the rest
    hooked = [any(algorithms()[name].warm_up for name in share) for share in shares]
    inputs = shares.index(())
    assert all(hooked[:inputs]) and hooked[:inputs] and not any(hooked[inputs:])
    assert json.loads(compile_pool.stamp_path("cpu").read_text())["fingerprint"]
    assert compile_pool.precompile("cpu", processes=2) == set()


def test_one_pool_fills_both_backends(kernels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A GPU worker's first start: one pool, each family (and the inputs) once per backend,
    the hooked families' GPU shares first; each backend gets its stamp, and a second start runs
    nothing."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    monkeypatch.setattr(compile_pool, "fingerprint", lambda backend: f"code-{backend}")
    pool = InProcessPool()
    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", pool)
    assert compile_pool.precompile("gpu", "cpu", processes=2) == {"gpu", "cpu"}
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
        assert json.loads(compile_pool.stamp_path(backend).read_text())["fingerprint"] == \
            f"code-{backend}"
    assert compile_pool.precompile("gpu", "cpu", processes=2) == set()


def test_many_cores_split_the_pool_finer(kernels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From FINE_PROCESSES processes a GPU share is one algorithm, one part of a warm-up hook,
    one generator or the parser; a CPU share stays a family (the generators and parser one),
    but a hook that splits on the CPU gives each part a share, its examples one more. Every
    algorithm's examples once per backend, every hook part once where it splits (elsewhere the
    hook whole), the hooked algorithms first; below it, a family per share (the test above)."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    monkeypatch.setattr(compile_pool, "typical_seconds", dict)  # no share ever timed
    monkeypatch.setattr(compile_pool, "fingerprint", lambda backend: f"code-{backend}")
    pool = InProcessPool()
    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", pool)
    fine = compile_pool.FINE_PROCESSES
    assert compile_pool.precompile("gpu", "cpu", processes=fine) == {"gpu", "cpu"}
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
    monkeypatch.setattr(compile_pool, "fingerprint", lambda backend: f"{code['version']}-{backend}")
    pool = InProcessPool()
    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", pool)
    assert compile_pool.precompile("cpu", processes=compile_pool.FINE_PROCESSES) == {"cpu"}
    shares = [(backend, share, part) for backend, share, part in pool.submitted]
    stamp = json.loads(compile_pool.stamp_path("cpu").read_text())
    assert sorted(stamp["seconds"]) == sorted(map(compile_pool.share_key, shares))
    timed = dict(zip(map(compile_pool.share_key, shares), range(len(shares)), strict=True))
    new = compile_pool.share_key(shares[0])
    del timed[new]  # a share the last pool did not have
    stamp["seconds"] = timed
    compile_pool.stamp_path("cpu").write_text(json.dumps(stamp))
    code["version"] = "two"
    pool.submitted.clear()
    assert compile_pool.precompile("cpu", processes=compile_pool.FINE_PROCESSES) == {"cpu"}
    order = [compile_pool.share_key(share) for share in pool.submitted]
    assert order[0] == new
    assert order[1:] == sorted(timed, key=lambda key: -timed[key])


def test_pool_processes_leave_without_teardown() -> None:
    """A helper that skips the interpreter's teardown (``os._exit`` from ``atexit``) still
    hands its result back, and the pool still shuts down cleanly."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn, initializer=compile_pool._skip_teardown) as pool:
        assert pool.submit(os.getpid).result() != os.getpid()


def test_load_takes_each_share_as_its_helper_ends(kernels: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``load`` the worker loads every share the pool compiled, in this process, while the
    pool runs (its own warm-up afterwards finds them loaded); without it, none."""
    pool = InProcessPool()
    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", pool)
    loaded: list[tuple] = []
    monkeypatch.setattr(compile_pool, "_compile", lambda *share: loaded.append(share) or 0.0)
    assert compile_pool.precompile("cpu", processes=2) == {"cpu"}
    assert loaded == []
    compile_pool.stamp_path("cpu").unlink()
    assert compile_pool.precompile("cpu", processes=2, load=True) == {"cpu"}
    assert sorted(loaded, key=repr) == sorted(pool.submitted[len(pool.submitted) // 2:], key=repr)

    def fails(*share: object) -> float:  # one share does not load here: a full warm-up follows
        if share == pool.submitted[-1]:
            raise RuntimeError("no such kernel")
        return 0.0

    monkeypatch.setattr(compile_pool, "_compile", fails)
    compile_pool.stamp_path("cpu").unlink()
    assert compile_pool.precompile("cpu", processes=2, load=True) == set()


@pytest.mark.parametrize("processes", [2, compile_pool.FINE_PROCESSES])
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
    monkeypatch.setattr(compile_pool, "algorithms", lambda: patched)
    monkeypatch.setattr(warmup, "run_examples", lambda algorithm, graph, each, skewed: calls.add(
        ("examples", algorithm.name, graph.n, graph.directed, skewed)))
    monkeypatch.setattr(warmup, "warm_up_inputs", lambda each, part=None: calls.update(
        ("inputs", name) for name in ((*warmup.GENERATOR_EXAMPLES, warmup.PARSER)
                                      if part is None else (part,))))
    monkeypatch.setattr(warmup, "reserve_buffers", lambda each: calls.add(("buffers",)))
    warmup.warm_up(backend)
    whole = set(calls)
    calls.clear()
    for share in compile_pool._shares([backend], processes):
        compile_pool._compile(*share)
    assert calls == whole - {("buffers",)}
    assert any(call[0] == "hook" for call in whole) and ("buffers",) in whole


class GatedPool(InProcessPool):
    """As :class:`InProcessPool`, but the shares of ``gated`` backends end only at
    :meth:`release` (their helpers still compiling)."""

    def __init__(self, gated: set[str]) -> None:
        super().__init__()
        self.gated, self.pending = gated, []

    def submit(self, fn: object, backend: object, share: tuple[str, ...], part: object) -> Future:
        self.submitted.append((backend, share, part))
        future: Future = Future()
        if backend in self.gated:
            self.pending.append(future)
        else:
            future.set_result(0.0)
        return future

    def release(self) -> None:
        for future in self.pending:
            future.set_result(0.0)


def lock_free(backend: str) -> bool:
    """Whether another worker of the host could take ``backend``'s compile lock now."""
    with open(compile_pool.stamp_path(backend).with_suffix(".lock"), "ab") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def test_later_backends_compile_after_and_hold_their_lock(kernels: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A GPU worker that leaves CPU jobs to a CPU worker: its pool takes the GPU's shares
    first and returns once they are done (the GPU stamped) while the CPU's still compile; the
    CPU's lock is held until their stamp is written, then the CPU worker finds it filled."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    monkeypatch.setattr(compile_pool, "fingerprint", lambda backend: f"code-{backend}")
    pool = GatedPool({"cpu"})
    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", pool)
    assert compile_pool.precompile("gpu", processes=2, load=False, later=("cpu",)) == {"gpu"}
    order = [backend for backend, _, _ in pool.submitted]
    assert order == ["gpu"] * order.count("gpu") + ["cpu"] * order.count("cpu")
    assert order.count("cpu") > 0
    assert json.loads(compile_pool.stamp_path("gpu").read_text())["fingerprint"] == "code-gpu"
    assert not compile_pool.stamp_path("cpu").exists()
    assert lock_free("gpu") and not lock_free("cpu")
    pool.release()
    finishing = [t for t in threading.enumerate() if t.name == "compile-pool"]
    for thread in finishing:
        thread.join(30)
    assert finishing and lock_free("cpu")
    assert json.loads(compile_pool.stamp_path("cpu").read_text())["fingerprint"] == "code-cpu"
    assert compile_pool.precompile("cpu", processes=2) == set()  # the CPU worker: filled


def test_a_second_worker_waits_for_the_first_ones_pool(kernels: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """While another worker of the host holds a backend's compile lock, precompile waits; once
    that worker's stamp is written and its lock released, it starts no pool of its own."""
    monkeypatch.setattr(compile_pool, "fingerprint", lambda backend: f"code-{backend}")

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("the other worker filled the caches: no pool may start")

    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", no_pool)
    stamp = compile_pool.stamp_path("cpu")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    returned: list[set[str]] = []
    waiting = threading.Thread(
        target=lambda: returned.append(compile_pool.precompile("cpu", processes=2)))
    with open(stamp.with_suffix(".lock"), "ab") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker's pool is running
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive() and not returned  # it cannot pass the lock we hold
        stamp.write_text(json.dumps({"fingerprint": "code-cpu"}))
    waiting.join(30)
    assert returned == [set()]


def test_a_first_start_orders_its_shares_by_the_gpu_hosts_seconds(
        kernels: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a stamp, the shares go longest first by the seconds shipped with the code, those
    it does not know before them; every share it knows is one of today's (many-core layout)."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    monkeypatch.setattr(compile_pool, "fingerprint", lambda backend: f"code-{backend}")
    typical = compile_pool.typical_seconds()
    fine = compile_pool.FINE_PROCESSES
    shares = set(map(compile_pool.share_key, compile_pool._shares(["gpu", "cpu"], fine)))
    assert set(typical) <= shares, set(typical) - shares
    pool = InProcessPool()
    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", pool)
    assert compile_pool.precompile("gpu", "cpu", processes=fine) == {"gpu", "cpu"}
    keys = list(map(compile_pool.share_key, pool.submitted))
    unknown = [key for key in keys if key not in typical]
    assert keys[:len(unknown)] == unknown
    known = [typical[key] for key in keys[len(unknown):]]
    assert known == sorted(known, reverse=True) and len(known) == len(typical)


def test_a_later_backend_another_pool_holds_is_left_to_it(kernels: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A second GPU's worker, while the first one's pool still compiles the CPU's shares: it
    does not wait for them (nor compile them again), only its own backend's."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(kernels / "cupy"))
    monkeypatch.setattr(compile_pool, "fingerprint", lambda backend: f"code-{backend}")
    pool = InProcessPool()
    monkeypatch.setattr(compile_pool, "ProcessPoolExecutor", pool)
    cpu = compile_pool.stamp_path("cpu")
    cpu.parent.mkdir(parents=True, exist_ok=True)
    with open(cpu.with_suffix(".lock"), "ab") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker's pool, compiling the CPU's shares
        assert compile_pool.precompile("gpu", processes=2, later=("cpu",)) == {"gpu"}
    assert {backend for backend, _, _ in pool.submitted} == {"gpu"} and not cpu.exists()
