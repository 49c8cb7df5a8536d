"""Connected components on the GPU: settings of ``components.cu`` side by side, phase by phase.

Run on the device as ``python bench/cc_variants.py [--graphs ca-GrQc,ca-CondMat,dblp-2010]
[--variant NAME=THREADS,BLOCKS[,-DX=Y...]]... [--ecl-bin DIR] [--out FILE]``. Each variant is
``DeviceComponents(dg, threads, blocks_per_sm, options)``: components.cu compiled with those
``-D`` options. Per graph and variant:

* ``same``: labels and sizes equal to the CPU backend's (numbering by smallest member);
* ``gpu_ms``: one run's GPU time, ``--batch`` runs queued back to back between two CUDA events
  (no host gap between runs), median of ``--repeat`` batches;
* ``run_ms``: one run as bench_peers' ``kernel_ms`` times it (events around the launch, the
  stream sync and the count read), median of ``--repeat``;
* phase columns, from a build with ``-DCC_STAMPS``: microseconds from block 0 starting a phase
  to the last block ending it (``%globaltimer``), and ``between``: the sum of the gaps from a
  phase's end to the next one's start (grid barriers and their serial steps); medians.

``--ecl-bin DIR``: ECL-CC's binary built beforehand (``DIR/cc``, from ``.peers/peers.py``'s
``build``), run on the same graphs: its own compute timer, median of 5.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.bench_peers import load  # noqa: E402
from bench.common import default_data_dir, load_timed, write_out  # noqa: E402
from bench.table import format_cell, table_lines  # noqa: E402
from graphgpu.kernels.algorithms.traversal.cpu import components_csr  # noqa: E402
from graphgpu.kernels.algorithms.traversal.gpu_components import (  # noqa: E402
    CC_BLOCKS_PER_SM,
    CC_SOURCE,
    CC_THREADS,
    DeviceComponents,
)
from graphgpu.kernels.core.cuda import module  # noqa: E402
from graphgpu.kernels.core.device import device_name, on_device  # noqa: E402

BASE = f"{CC_THREADS},{CC_BLOCKS_PER_SM}"
DEFAULT_VARIANTS = (
    f"no-link-dedup={BASE},-DCC_LINK_DEDUP=0",
    f"default={BASE}",
    f"small-first={BASE},-DCC_SMALL_FIRST=1",
    f"ecl-order={BASE},-DCC_AFFOREST=0",
    f"no-giant-rule={BASE},-DGIANT_SHARE=1000000",
)


def parse_variant(text: str) -> tuple[str, int, int, tuple[str, ...]]:
    """``NAME=THREADS,BLOCKS[,-DX=Y...]`` -> (name, threads, blocks, options)."""
    name, spec = text.split("=", 1)
    threads, blocks, *options = spec.split(",")
    return name, int(threads), int(blocks), tuple(options)


def gpu_ms(run: DeviceComponents, batch: int, repeat: int) -> float:
    """One run's GPU time: ``batch`` runs back to back between two events, median of ``repeat``."""
    import cupy as cp

    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat):
        start.record()
        for _ in range(batch):
            run.launch(0, len(run.PHASES) - 1)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / batch)
    return statistics.median(times)


def run_ms(run: DeviceComponents, repeat: int) -> float:
    """One run timed as bench_peers' ``kernel_ms``: launch, stream sync and count read."""
    import cupy as cp

    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeat):
        start.record()
        run.run()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def phase_us(run: DeviceComponents, repeat: int) -> dict[str, float]:
    """Median phase spans and the barrier time between them, from ``cc_stamps`` (us)."""
    import cupy as cp

    stamps = cp.ndarray((16,), cp.uint64, module(CC_SOURCE, run.options).get_global("cc_stamps"))
    samples: dict[str, list[float]] = {}
    for _ in range(repeat):
        stamps.fill(0)
        run.run()
        s = stamps.get().astype(np.int64)
        ran = [k for k in range(len(run.PHASES)) if s[2 * k + 1]]
        spans = {run.PHASES[k]: (s[2 * k + 1] - s[2 * k]) / 1e3 for k in ran}
        gaps = zip(ran, ran[1:], strict=False)
        spans["between"] = sum(s[2 * b] - s[2 * a + 1] for a, b in gaps) / 1e3
        spans["total"] = (s[2 * ran[-1] + 1] - s[2 * ran[0]]) / 1e3
        for key, value in spans.items():
            samples.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in samples.items()}


def ecl_ms(ecl_bin: Path, name: str, graph, folder: Path) -> float | None:
    """ECL-CC's own compute time (median of 5) with the peers' module's runner."""
    sys.path.insert(0, str(ROOT / ".peers"))
    import peers

    peers.BIN = str(ecl_bin)
    path = peers.write_egr(graph.indptr, graph.indices, path=str(folder / f"{name}.egr"))
    return peers.ecl_cc(path, reps=5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default="ca-GrQc,ca-CondMat,dblp-2010")
    parser.add_argument("--variant", action="append", help="NAME=THREADS,BLOCKS[,-DX=Y...]")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--ecl-bin", type=Path)
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    parser.add_argument("--work-dir", type=Path, help="where ECL's input files go (else a temp)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    variants = [parse_variant(v) for v in args.variant or DEFAULT_VARIANTS]
    folder = args.work_dir or Path(tempfile.mkdtemp(prefix="cc-variants-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.graphs.split(","):
        graph = load_timed(name, load, name, args.data_dir)
        label, sizes = components_csr(graph.indptr, graph.indices, graph.n)
        dg = on_device(graph)
        peer = ecl_ms(args.ecl_bin, name, graph, folder) if args.ecl_bin else None
        for vname, threads, blocks, options in variants:
            run = DeviceComponents(dg, threads, blocks, options)
            got_label, got_sizes = run.run()
            same = (np.array_equal(got_label.get(), label)
                    and np.array_equal(got_sizes.get(), sizes))
            run.run()  # recorded as a CUDA graph from here on, as in a job
            row = {"graph": name, "variant": vname, "grid": f"{run.grid[0]}x{threads}",
                   "regs": run.kernel.num_regs, "same": same,
                   "gpu_ms": gpu_ms(run, args.batch, args.repeat),
                   "run_ms": run_ms(run, args.repeat), "ecl_ms": peer}
            stamped = DeviceComponents(dg, threads, blocks, (*options, "-DCC_STAMPS"))
            stamped.run()
            row.update({f"{k}_us": v for k, v in phase_us(stamped, args.repeat).items()})
            rows.append(row)
            print(row, flush=True)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    lines = [f"Device: {device_name('gpu')}; cc_variants.py, median of {args.repeat}", "",
             *table_lines(rows, keys, lambda v: format_cell(v, small=".3f"))]
    text = "\n".join(lines)
    write_out(args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
