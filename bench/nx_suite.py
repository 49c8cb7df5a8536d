"""NetworkX's own test modules with the graphgpu backend forced: which tests ran on the service.

    python bench/nx_suite.py                       # a private service (redis, API, CPU worker)
    python bench/nx_suite.py --url http://127.0.0.1:8000 --modules test_cluster test_isolate
    python bench/nx_suite.py --out bench/results/nx_suite.md

Runs the test modules of every served function (:data:`MODULES`) from the installed NetworkX
with ``NETWORKX_TEST_BACKEND=graphgpu`` and fallback on, in a pytest subprocess that loads this
file as a plugin. Per test the plugin reads the backend's counters (served calls, jobs run,
calls that fell back) and the outcome. A test that passes on NetworkX's own code proves nothing
about the backend, so the table splits the tests that called a served function into

* ``service``: at least one job ran on the service;
* ``answered``: the backend answered without a job (an error raised as NetworkX raises it);
* ``fell back``: every served call raised ``NotImplementedError`` and NetworkX ran it;

and leaves out the tests that called no served function. Failures are listed with their
first error line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: NetworkX test modules (under the ``networkx`` package) of the served functions.
MODULES = (
    "algorithms/components/tests/test_connected.py",
    "algorithms/components/tests/test_weakly_connected.py",
    "algorithms/components/tests/test_strongly_connected.py",
    "algorithms/tests/test_isolate.py",
    "algorithms/tree/tests/test_recognition.py",
    "algorithms/tests/test_cluster.py",
    "algorithms/tests/test_core.py",
    "algorithms/tests/test_mis.py",
    "algorithms/tests/test_link_prediction.py",
    "algorithms/centrality/tests/test_closeness_centrality.py",
    "algorithms/centrality/tests/test_betweenness_centrality.py",
    "algorithms/community/tests/test_louvain.py",
    "algorithms/community/tests/test_leiden.py",
    "algorithms/link_analysis/tests/test_pagerank.py",
    "algorithms/shortest_paths/tests/test_unweighted.py",
    "algorithms/shortest_paths/tests/test_weighted.py",
    "algorithms/shortest_paths/tests/test_generic.py",
    "algorithms/traversal/tests/test_bfs.py",
    "algorithms/tests/test_dag.py",
)
#: The plugin writes its records here (one JSON line per test).
RECORDS_ENV = "GRAPHGPU_NX_SUITE_RECORDS"

# -- the pytest plugin (loaded with -p bench.nx_suite in the subprocess) -------------------------

_counts: dict[str, tuple[int, int, int]] = {}


def pytest_configure(config: Any) -> None:
    """Fingerprint graphs on every call: NetworkX's tests change edge data by hand
    (``G[u][v]["weight"] = 10``) between calls, and its test mode caches no conversion either."""
    import networkx as nx

    nx.config.backends.graphgpu.verify_cache = True


def _counters() -> tuple[int, int, int]:
    from graphgpu.client.nx_session import current

    session = current()
    return session.calls, session.jobs, session.fallbacks


def pytest_runtest_setup(item: Any) -> None:
    _counts[item.nodeid] = _counters()


def pytest_runtest_logreport(report: Any) -> None:
    if not (report.when == "call" or (report.when == "setup" and not report.passed)):
        return
    before = _counts.get(report.nodeid, (0, 0, 0))
    calls, jobs, fallbacks = (a - b for a, b in zip(_counters(), before, strict=True))
    outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
    error = ""
    if report.failed:
        text = str(report.longrepr)
        error = next((ln.strip() for ln in text.splitlines() if ln.startswith("E ")),
                     text.splitlines()[-1] if text else "")
    with open(os.environ[RECORDS_ENV], "a") as f:
        f.write(json.dumps({"test": report.nodeid, "outcome": outcome, "calls": calls,
                            "jobs": jobs, "fallbacks": fallbacks, "error": error[:200]}) + "\n")


# -- the driver ----------------------------------------------------------------------------------

def category(record: dict[str, Any]) -> str:
    """``service``, ``answered``, ``fell back`` or ``none`` (no served function called)."""
    if record["calls"] == 0:
        return "none"
    if record["jobs"] > 0:
        return "service"
    return "fell back" if record["fallbacks"] >= record["calls"] else "answered"


def run_suite(url: str, modules: list[str], records: Path, extra: list[str]) -> int:
    """Run the modules in a pytest subprocess against the service at ``url``."""
    import networkx

    package = Path(networkx.__file__).parent
    env = {**os.environ, "GRAPHGPU_URL": url, "NETWORKX_TEST_BACKEND": "graphgpu",
           "NETWORKX_FALLBACK_TO_NX": "True", RECORDS_ENV: str(records),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    # Run from NetworkX's folder (its conftest.py configures the backend), not from ours.
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "bench.nx_suite", "--rootdir", str(package.parent), "-c", os.devnull,
               "-W", "ignore::DeprecationWarning", *[str(package / m) for m in modules], *extra]
    return subprocess.run(command, env=env, cwd=package.parent,
                          stdout=subprocess.DEVNULL).returncode


def report(records: list[dict[str, Any]]) -> str:
    """Markdown: per module and in total, the tests by category and outcome; the failures."""
    by_module: dict[str, Counter[str]] = {}
    for r in records:
        module = r["test"].split("::")[0].rsplit("/", 1)[-1]
        counts = by_module.setdefault(module, Counter())
        counts[category(r)] += 1
        counts[f"{category(r)} {r['outcome']}"] += 1
    total: Counter[str] = sum(by_module.values(), Counter())
    head = ("| module | calling served | service (passed/failed) | answered (passed/failed) | "
            "fell back (passed/failed) | no served call |")
    lines = [head, "|---|---|---|---|---|---|"]
    for module, c in [*sorted(by_module.items()), ("**total**", total)]:
        calling = c["service"] + c["answered"] + c["fell back"]
        cells = [f"{c[k]} ({c[k + ' passed']}/{c[k + ' failed']})"
                 for k in ("service", "answered", "fell back")]
        lines.append(f"| {module} | {calling} | {' | '.join(cells)} | {c['none']} |")
    calling = total["service"] + total["answered"] + total["fell back"]
    share = (total["service"] + total["answered"]) / calling if calling else 0.0
    lines += ["", f"Tests calling a served function: {calling}; answered by the backend "
              f"(service or without a job): {share:.1%}; ran a job: "
              f"{total['service'] / max(calling, 1):.1%}.", ""]
    failed = [r for r in records if r["outcome"] == "failed"]
    if failed:
        lines += ["Failures:", ""] + [f"- `{r['test']}` ({category(r)}): {r['error']}"
                                      for r in failed]
    fell = [r["test"] for r in records if category(r) == "fell back"]
    if fell:
        lines += ["", "Fell back:", ""] + [f"- `{t}`" for t in fell]
    return "\n".join(lines)


@contextmanager
def service(url: str | None) -> Iterator[str]:
    """``url``, or a private service (redis-server, API, one CPU worker) for the block."""
    if url:
        yield url
        return
    sys.path.insert(0, str(REPO))  # run as a script: tests/ is found from the repo
    from graphgpu.service.redis_server import RedisServer
    from tests.conftest import Stack

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "redis").mkdir()
        server = RedisServer(Path(tmp) / "redis")
        stack = Stack(server.start(), Path(tmp) / "data")
        try:
            stack.start_api()
            stack.start_worker()
            yield stack.base_url
        finally:
            stack.stop()
            server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running service (default: start a private one)")
    parser.add_argument("--modules", nargs="*", help="module file names to run (default: all)")
    parser.add_argument("--out", type=Path, help="also write the report here (markdown)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    modules = [m for m in MODULES if not args.modules
               or any(m.endswith(f"/{name.removesuffix('.py')}.py") for name in args.modules)]
    with tempfile.TemporaryDirectory() as tmp:
        records = Path(tmp) / "records.jsonl"
        records.touch()
        with service(args.url) as url:
            run_suite(url, modules, records, args.pytest_args)
        text = report([json.loads(line) for line in records.read_text().splitlines()])
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
