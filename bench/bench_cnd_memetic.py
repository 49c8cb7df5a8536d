"""Critical nodes at equal time: ``method=memetic`` (CPU and GPU backends) against PyCNP.

Run as ``python bench/bench_cnd_memetic.py [--plan "1,5,30:cnp;5,30:real;5,30:synthetic"]
[--cpu-processes 10] [--gpu-processes 4] [--out FILE]``.

Instances (``--plan`` picks budgets per group):

* ``cnp``: the 16 synthetic CNP instances of ``--data-dir``/cnp (``instances.tsv``: k and the
  best-known objective);
* ``real``: ca-GrQc, ca-HepTh and ca-CondMat with the literature's k (about n / 10) and
  best-known objectives, dblp-2010 with k = floor(n / 100) (``--data-dir``, SNAP edge lists);
* ``synthetic``: Barabási-Albert (m = 2), Watts-Strogatz (k = 4, p = 0.1) and Erdős-Rényi
  G(n, 2n) graphs of 1,000, 5,000 and 20,000 nodes (seed 1), k = n / 10.

Every run is a process of its own (this script with ``--one``), so a peer that overruns its
budget is stopped (after ``2 * budget + 30`` s) without holding the others up, and each
process compiles its kernels before its clock starts. Ours: ``method=memetic``, seed 0, the
objective recomputed by SciPy in the result. PyCNP 0.1.4:
``Model.solve("CNP", k, MaxRuntime(budget), seed=0)``; its wall time is reported, since it
does not always stop at its budget. CPU runs (ours and PyCNP) take ``--cpu-processes`` cores;
GPU runs ``--gpu-processes`` at once (each improves at most 128 sets at a time, a warp each,
so several fit on one GPU side by side; run the NVIDIA MPS daemon so that they share it
rather than take turns). ratio = ours / PyCNP (below 1: ours is better).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import add_data_args, pycnp_solve, use_gpu, write_out  # noqa: E402
from graphgpu.kernels.algorithms.critical_nodes import (  # noqa: E402
    CndParams,
    critical_nodes_cpu,
    critical_nodes_gpu,
)
from graphgpu.kernels.core.device import device_name  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph  # noqa: E402
from graphgpu.kernels.core.io.formats import parse_graph  # noqa: E402
from graphgpu.kernels.core.registry import get_algorithm, no_progress  # noqa: E402
from graphgpu.kernels.generators import generate  # noqa: E402

REAL = {"ca-GrQc": 10, "ca-HepTh": 10, "ca-CondMat": 10, "dblp-2010": 100}  # k = n // divisor
#: k and best-known objective of the literature's instances (issue 25).
REAL_BEST = {"ca-GrQc": (524, 13_590), "ca-HepTh": (988, 106_276), "ca-CondMat": (2_313, 2_298_596)}
MODELS = {"BA": ("barabasi_albert", {"m": 2}), "WS": ("watts_strogatz", {"k": 4, "p": 0.1}),
          "ER": ("erdos_renyi", {})}
SYNTHETIC_SIZES = (1000, 5000, 20000)
DEFAULT_PLAN = "1,5,30:cnp;5,30:real;5,30:synthetic"


def load(spec: dict[str, Any], data_dir: Path) -> Graph:
    """The graph of an instance spec (see :func:`instances`)."""
    if spec["group"] == "cnp":
        parsed = parse_graph((data_dir / "cnp" / spec["file"]).read_bytes(), "cnp")
        return build_graph(parsed.src, parsed.dst, extra_nodes=parsed.extra_nodes)[0]
    if spec["group"] == "real":
        parsed = parse_graph((data_dir / f"{spec['name']}.txt.gz").read_bytes())
        return build_graph(parsed.src, parsed.dst, extra_nodes=parsed.extra_nodes)[0]
    model, n = spec["name"].split("-")
    name, extra = MODELS[model]
    extra = {"m": 2 * int(n)} if model == "ER" else extra
    edges = generate(name, {"n": int(n), "seed": 1, **extra})
    return build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))[0]


def instances(group: str, data_dir: Path) -> list[dict[str, Any]]:
    """The instance specs of a group: name, n, k, best known (or None), how to load it."""
    if group == "cnp":
        lines = (data_dir / "cnp" / "instances.tsv").read_text().splitlines()
        head = lines[0].split("\t")
        rows = [dict(zip(head, line.split("\t"), strict=True)) for line in lines[1:] if line]
        return [{"group": group, "name": r["name"], "file": r["file"], "n": int(r["n"]),
                 "k": int(r["k"]), "best": int(r["best_known_objective"])} for r in rows]
    specs = []
    names = list(REAL) if group == "real" else [f"{m}-{n}" for m in MODELS
                                                 for n in SYNTHETIC_SIZES]
    for name in names:
        spec = {"group": group, "name": name, "best": None}
        n = load(spec, data_dir).n
        k = n // REAL[name] if group == "real" else n // 10
        if name in REAL_BEST:
            k, spec["best"] = REAL_BEST[name]
        specs.append({**spec, "n": n, "k": k})
    return specs


def run_one(job: dict[str, Any], data_dir: Path) -> dict[str, Any]:
    """One timed run (in its own process): ours on a backend, or PyCNP."""
    graph = load(job["spec"], data_dir)
    k, budget, who = job["spec"]["k"], job["budget"], job["who"]
    if who == "pycnp":
        objective, wall = pycnp_solve(graph, k, budget)
        return {"objective": objective, "wall_s": wall}
    solve = critical_nodes_gpu if who == "gpu" else critical_nodes_cpu
    # The worker's warm-up (every step, the first descent included: a 50-node warm-up run never
    # reached it, and a cold cache compiled it inside the first 5 s runs of ca-HepTh).
    get_algorithm("critical_nodes").warm_up(who)
    start = time.perf_counter()
    summary = solve(graph, CndParams(k=k, method="memetic", time_limit_s=budget, seed=0),
                    no_progress).summary
    return {"objective": summary["objective"], "wall_s": time.perf_counter() - start,
            "generations": summary["generations"]}


def launch(job: dict[str, Any], data_dir: Path) -> dict[str, Any]:
    """Run ``job`` in a child process; its outcome, or why there is none."""
    command = [sys.executable, str(Path(__file__).resolve()), "--one", json.dumps(job),
               "--data-dir", str(data_dir)]
    limit = 2 * job["budget"] + 30
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {**job, "objective": None, "note": f"no answer in {limit:g} s"}
    if done.returncode != 0:
        return {**job, "objective": None, "note": done.stderr.strip().splitlines()[-1][:80]}
    outcome = {**job, **json.loads(done.stdout.strip().splitlines()[-1])}
    print(job["spec"]["name"], job["who"], job["budget"], outcome["objective"],
          f"{outcome['wall_s']:.1f} s", flush=True)
    return outcome


def cell(outcome: dict[str, Any] | None, best: int | None) -> str:
    if outcome is None:
        return "—"
    if outcome["objective"] is None:
        return outcome["note"]
    gap = "" if not best else f" ({100.0 * (outcome['objective'] - best) / best:+.1f}%)"
    wall = f", {outcome['wall_s']:.1f} s" if "generations" in outcome else ""  # ours
    return f"{outcome['objective']:,}{gap}{wall}"


def ratio(ours: dict[str, Any] | None, peer: dict[str, Any] | None) -> str:
    if not ours or not peer or ours["objective"] is None or not peer["objective"]:
        return "—"
    return f"{ours['objective'] / peer['objective']:.3f}"


def table(results: dict[tuple[str, float, str], dict[str, Any]],
          runs: list[tuple[dict[str, Any], float]], gpu: bool) -> str:
    lines = ["| group | instance | n | k | budget | ours CPU | ours GPU | PyCNP | PyCNP wall s | "
             "ratio CPU | ratio GPU | best known |", "|" + "---|" * 12]
    tally: dict[str, list[int]] = {}
    for spec, budget in runs:
        get = lambda who, s=spec, b=budget: results.get((s["name"], b, who))  # noqa: E731
        cpu, on_gpu, peer = get("cpu"), get("gpu"), get("pycnp")
        wall = f"{peer['wall_s']:.1f}" if peer and peer.get("wall_s") else "—"
        best = spec["best"]
        lines.append(f"| {spec['group']} | {spec['name']} | {spec['n']:,} | {spec['k']:,} | "
                     f"{budget:g} s | {cell(cpu, best)} | {cell(on_gpu, best) if gpu else '—'} | "
                     f"{cell(peer, best)} | {wall} | {ratio(cpu, peer)} | "
                     f"{ratio(on_gpu, peer) if gpu else '—'} | "
                     f"{'—' if best is None else f'{best:,}'} |")
        for who, outcome in (("CPU", cpu), ("GPU", on_gpu)):
            if outcome is None or outcome["objective"] is None:
                continue
            key = f"{spec['group']} {budget:g} s, {who}"
            counts = tally.setdefault(key, [0, 0, 0, 0])
            if peer and peer["objective"] is not None:
                counts[0] += outcome["objective"] <= peer["objective"]
                counts[1] += 1
            if best:
                counts[2] += outcome["objective"] <= 1.01 * best
                counts[3] += 1
    lines += ["", "| runs | ours <= PyCNP | within 1% of best known |", "|---|---|---|"]
    lines += [f"| {key} | {c[0]}/{c[1]} | {f'{c[2]}/{c[3]}' if c[3] else '—'} |"
              for key, c in tally.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", default=DEFAULT_PLAN, help="budgets:group;... (groups: cnp, "
                        "real, synthetic; a group may name instances: cnp=ER2344,WS1000)")
    parser.add_argument("--cpu-processes", type=int, default=10)
    parser.add_argument("--gpu-processes", type=int, default=4)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    add_data_args(parser)
    args = parser.parse_args(argv)
    if args.one:  # ``launch`` passes the instance's own folder
        print(json.dumps(run_one(json.loads(args.one), args.data_dir)))
        return 0
    data_dir = args.data_dir  # the CNP instances' folder (the real graphs: --data-dir)
    if not (data_dir / "cnp").is_dir():
        data_dir = ROOT.parent / "shared" / "data"
    gpu = use_gpu(args)
    runs: list[tuple[dict[str, Any], float]] = []
    for part in args.plan.split(";"):
        budgets, group = part.split(":")
        group, _, chosen = group.partition("=")
        specs = instances(group, data_dir if group == "cnp" else args.data_dir)
        specs = [s for s in specs if not chosen or s["name"] in chosen.split(",")]
        runs += [(spec, float(b)) for b in budgets.split(",") for spec in specs]
    jobs = [{"spec": spec, "budget": budget, "who": who} for spec, budget in runs
            for who in ("cpu", "pycnp", *(("gpu",) if gpu else ()))]
    started = time.perf_counter()
    with ThreadPoolExecutor(args.cpu_processes) as cpus, \
            ThreadPoolExecutor(args.gpu_processes) as gpus:
        futures = [(gpus if j["who"] == "gpu" else cpus).submit(
            launch, j, data_dir if j["spec"]["group"] == "cnp" else args.data_dir)
            for j in sorted(jobs, key=lambda j: -j["budget"])]  # longest first
        results = {(o["spec"]["name"], o["budget"], o["who"]): o
                   for o in (f.result() for f in futures)}
    text = "\n".join([
        f"### Memetic search vs PyCNP at equal time — {device_name('gpu') if gpu else 'no GPU'}, "
        f"CPU {device_name('cpu')}, {date.today()}", "",
        f"`python bench/bench_cnd_memetic.py --plan \"{args.plan}\" --cpu-processes "
        f"{args.cpu_processes} --gpu-processes {args.gpu_processes}` "
        f"({time.perf_counter() - started:.0f} s)", "", table(results, runs, gpu)])
    print(text)
    write_out(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
