"""Markdown result tables and the timers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

COLUMNS: tuple[str, ...] = ("graph", "n", "m", "backend", "time_ms", "throughput", "peer",
                            "peer_ms", "ratio")
MISSING = "—"


def format_cell(value: object, small: str = ".2f", large: str = ".0f", limit: float = 1000.0
                ) -> str:
    """One markdown table cell.

    Parameters
    ----------
    value : object
        ``None``, ``""`` and NaN print as :data:`MISSING`; bools as ``True``/``False``; ints with
        thousands separators; strings with ``|`` escaped.
    small, large : str
        Float formats (after the thousands separator) below and from ``limit`` in magnitude.
    limit : float
        Where floats switch from ``small`` to ``large``.

    Returns
    -------
    str
    """
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:  # NaN: nothing measured
            return MISSING
        return format(value, "," + (small if abs(value) < limit else large))
    return str(value).replace("|", "\\|")


def table_lines(rows: list[dict], columns: list[str] | tuple[str, ...],
                cell: Callable[[object], str] = format_cell) -> list[str]:
    """The header, separator and one line per row of a markdown table (missing keys print as
    ``cell(None)``)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
    return lines


def markdown_table(rows: list[dict], columns: list[str] | tuple[str, ...], title: str,
                   cell: Callable[[object], str] = format_cell) -> str:
    """A ``###`` heading and the table of :func:`table_lines`, printed (flushed) and returned."""
    text = "\n".join([f"### {title}", "", *table_lines(rows, columns, cell)])
    print(text, flush=True)
    return text


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
    return markdown_table(rows, COLUMNS, title)


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


def timed_ms(fn: Callable[[], object], repeat: int, warm: bool = True
             ) -> tuple[float, object]:
    """Median wall time in ms of ``fn`` over ``repeat`` runs (after one warm-up call when
    ``warm``), and the last call's answer."""
    out = fn() if warm else None
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), out


def wall_ms(fn: Callable[[], object], repeat: int, warm: bool = True) -> float:
    """Median wall time in ms of ``fn`` over ``repeat`` runs (after one warm-up call when
    ``warm``)."""
    return timed_ms(fn, repeat, warm)[0]


def once_ms(fn: Callable[[], object]) -> tuple[float, object]:
    """Wall time in ms of one call of ``fn``, and its answer."""
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1e3, out
