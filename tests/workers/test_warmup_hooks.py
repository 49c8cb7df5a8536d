"""The warm-up hooks of the time-limited families run every step whatever the clock says.

A first start compiles in a pool of busy processes: there a 50 ms example ran out of time before
its later steps compiled, and a job compiled them after the worker was ready. Here the clock of
those families jumps an hour at every reading (every deadline has passed), and each hook must
still reach the steps a job can take.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from graphgpu.kernels.algorithms.critical_nodes import cpu as cnd_cpu
from graphgpu.kernels.algorithms.critical_nodes import gpu_ruin, memetic, ruin
from graphgpu.kernels.algorithms.critical_nodes import search as cnd_search
from graphgpu.kernels.algorithms.mis import cpu as mis_cpu
from graphgpu.kernels.algorithms.mis import driver as mis_driver
from graphgpu.kernels.core.registry import get_algorithm


class _Clock:
    """``time`` with a perf_counter that moves an hour per reading."""

    def __init__(self) -> None:
        self.ticks = itertools.count()

    def perf_counter(self) -> float:
        return 3600.0 * next(self.ticks)

    def __getattr__(self, name: str) -> Any:
        import time

        return getattr(time, name)


def _count(calls: Counter, name: str, fn: Callable) -> Callable:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return fn(*args, **kwargs)

    return counted


@pytest.fixture
def busy_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (mis_driver, cnd_cpu, memetic):
        monkeypatch.setattr(module, "time", _Clock())


def test_mis_hook_runs_every_iterated_step(busy_clock: None,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter = Counter()
    for step in ("improve", "mark", "release", "restore_best", "reduce_round", "freeze"):
        monkeypatch.setattr(mis_cpu.CpuEngine, step,
                            _count(calls, step, getattr(mis_cpu.CpuEngine, step)))
    hook = get_algorithm("mis").warm_up
    assert hook is not None
    hook("cpu")
    assert {step for step, n in calls.items() if n} == {
        "improve", "mark", "release", "restore_best", "reduce_round", "freeze"}


def _count_descent(monkeypatch: pytest.MonkeyPatch, calls: Counter) -> None:
    monkeypatch.setattr(ruin, "ruin_rounds", _count(calls, "ruin_rounds", ruin.ruin_rounds))


def test_critical_nodes_hook_runs_search_fill_and_improver(
        busy_clock: None, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter = Counter()
    _count_descent(monkeypatch, calls)
    monkeypatch.setattr(cnd_search, "swap_search",
                        _count(calls, "swap_search", cnd_search.swap_search))
    monkeypatch.setattr(memetic, "fill_round", _count(calls, "fill_round", memetic.fill_round))
    monkeypatch.setattr(memetic, "greedy_fill",
                        _count(calls, "greedy_fill", memetic.greedy_fill))
    hook = get_algorithm("critical_nodes").warm_up
    assert hook is not None
    hook("cpu")
    # swap_search: the plain chain and the memetic improver's restarting chain
    assert calls["swap_search"] >= 2 and calls["fill_round"] and calls["greedy_fill"]
    assert calls["ruin_rounds"]  # the memetic's first descent


@pytest.mark.gpu
def test_critical_nodes_gpu_hook_runs_the_gpu_descent(monkeypatch: pytest.MonkeyPatch) -> None:
    # The GPU memetic's first descent (its kernel and the host code that makes its pools): a
    # cold cache compiled the descent inside a first job's time limit when no hook ran it.
    ran: list[str | None] = []
    real = gpu_ruin.GpuDescent.__call__

    def descend(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        ran.append(self.ran_on)
        return out

    monkeypatch.setattr(gpu_ruin.GpuDescent, "__call__", descend)
    get_algorithm("critical_nodes").warm_up("gpu")
    assert ran == ["gpu"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["mis", "critical_nodes"])
def test_hooks_run_on_the_gpu(name: str) -> None:
    hook = get_algorithm(name).warm_up
    assert hook is not None
    hook("gpu")
