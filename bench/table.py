"""Markdown result tables and the timers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

COLUMNS: tuple[str, ...] = ("graph", "n", "m", "backend", "time_ms", "throughput", "peer",
                            "peer_ms", "ratio")
MISSING = "—"


def _cell(value: object) -> str:
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:  # NaN: nothing measured
            return MISSING
        return f"{value:,.2f}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value).replace("|", "\\|")


def print_table(rows: list[dict], title: str) -> str:
    """Print benchmark rows as a markdown table and return the text.

    Parameters
    ----------
    rows : list of dict
        One dict per row, keyed by the names in :data:`COLUMNS` (graph, n, m, backend, time_ms,
        throughput, peer, peer_ms, ratio). Missing keys or ``None`` values print as ``—``;
        keys outside :data:`COLUMNS` are ignored.
    title : str
        Printed as a ``###`` heading above the table.

    Returns
    -------
    str
        The markdown that was printed (heading, header row, separator, one line per row).
    """
    lines = [f"### {title}", "", "| " + " | ".join(COLUMNS) + " |",
             "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(c)) for c in COLUMNS) + " |")
    text = "\n".join(lines)
    print(text)
    return text


def event_ms(fn: Callable[[], object], repeat: int) -> float:
    """Median CUDA-event time in ms of ``fn`` over ``repeat`` runs, after one warm-up call
    (which compiles kernels and uploads graphs)."""
    import cupy as cp

    fn()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def wall_ms(fn: Callable[[], object], repeat: int, warm: bool = True) -> float:
    """Median wall time in ms of ``fn`` over ``repeat`` runs (after one warm-up call when
    ``warm``)."""
    if warm:
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)
