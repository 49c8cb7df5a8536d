"""Worker warm-up of ``mis``: every step of every method once, with no clock in the way.

The documented ``iterated`` example stops at its 50 ms limit. On a busy machine (the parallel
compile of a first start) compiling its first steps spends the limit, so the perturbation
steps (drop, release, complete again, improve, restore) were left to a job to compile. Here the
run of :func:`graphgpu.kernels.algorithms.mis.driver.compute` is capped by iterations instead,
for each reduction mode, on a graph where reductions fire (pendants, a triangle, an isolated
node) and a perturbation has something to move.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from graphgpu.kernels.algorithms.mis import cpu, driver, gpu
from graphgpu.kernels.core.graph import Graph, simple_graph
from graphgpu.kernels.core.registry import Backend, no_progress

#: Iterations of the capped ``iterated`` runs: the second starts from a restored best.
ITERATIONS = 3


def warm_up_graph() -> Graph:
    """A 32-node ring with pendants on every fourth node, a triangle and an isolated node."""
    ring = np.arange(32)
    pendants = np.arange(0, 32, 4)
    src = np.concatenate([ring, pendants, [40, 41, 42]])
    dst = np.concatenate([np.roll(ring, 1), pendants + 100, [41, 42, 40]])
    return simple_graph(src, dst, extra_nodes=np.array([500]))


def warm_up(backend: Backend) -> None:
    """Run every method and reduction mode on ``backend``'s engine (``iterated`` capped at
    :data:`ITERATIONS` iterations), verifying each set as a job does."""
    graph = warm_up_graph()
    for method in ("iterated", "degree", "luby"):
        for reduce in ("none", "once", "exhaustive"):
            engine = cpu.CpuEngine(graph) if backend == "cpu" else gpu.engine_for(graph)
            params = SimpleNamespace(method=method, reduce=reduce, seed=1, update_frequency=2,
                                     time_limit_s=math.inf)  # driver.RunParams, no deadline
            driver.compute(engine, graph.n, params, no_progress, iterations_cap=ITERATIONS)
            engine.verify()
            engine.in_set()
