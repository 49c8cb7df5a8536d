"""Searches end on time: the memetic search starts no improvement past its deadline.

A 5 s GPU memetic run on dblp-2010 ended at 5.9 s: its descent ran to the deadline, then the
driver started an improvement whose set-up alone (the GPU chains') took 0.9 s. Here a descent
that uses its whole time and a slow improvement stand in for them, on the CPU.
"""

from __future__ import annotations

import time

import networkx as nx
import numpy as np

from graphgpu.kernels.algorithms.critical_nodes.cpu import CpuImprover
from graphgpu.kernels.algorithms.critical_nodes.memetic import memetic
from graphgpu.kernels.algorithms.critical_nodes.tuning import RUIN_NODES
from graphgpu.kernels.core.registry import no_progress
from tests.kernels.algorithms.critical_nodes.test_critical_nodes import from_nx


class SlowImprover(CpuImprover):
    """The CPU improver whose descent lasts until its deadline and whose improvements each
    take 0.2 s more; it records when each improvement starts."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.starts: list[float] = []

    def descend(self, nodes: np.ndarray, deadline: float) -> np.ndarray:
        out = super().descend(nodes, deadline)
        while time.perf_counter() < deadline:
            time.sleep(0.01)
        return out

    def __call__(self, sets: list[np.ndarray], moves: int, deadline: float
                 ) -> list[tuple[int, np.ndarray]]:
        self.starts.append(time.perf_counter())
        time.sleep(0.2)
        return super().__call__(sets, moves, deadline)


def test_memetic_starts_no_improvement_past_its_deadline() -> None:
    graph = from_nx(nx.random_regular_graph(3, 4 * RUIN_NODES, seed=4))  # a giant: a descent
    k = 4 * RUIN_NODES // 20
    improve = SlowImprover(graph, k, 0)
    started = time.perf_counter()
    deadline = started + 1.5
    outcome = memetic(graph, k, 0, improve, 1, started, deadline, no_progress)
    assert outcome.removed.shape == (k,)
    assert all(start < deadline for start in improve.starts)
