"""The ``graphgpu`` command line: run the service, upload graphs, run algorithms, get results.

Results and single objects are printed as JSON on stdout (for scripts and ``jq``); listings are
tables unless ``--json`` is given; progress bars and errors go to stderr. Exit status: 0 on
success, 1 when the service (or a job) reports an error, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from graphgpu.client import clihelp, edgetable
from graphgpu.client.errors import GraphGPUError, JobCanceled, JobFailed
from graphgpu.client.models import Job
from graphgpu.client.sdk import Client, default_api_key, default_url

Handler = Callable[[Client, argparse.Namespace], int]


def parse_param(text: str) -> tuple[str, Any]:
    """Parse one ``-p key=value``; the value is JSON when it parses as JSON, else a string.

    Parameters
    ----------
    text : str
        E.g. ``source=0``, ``p=0.1``, ``directed=true``, ``name=karate``.

    Returns
    -------
    tuple of (str, Any)
        The key and the decoded value.

    Raises
    ------
    argparse.ArgumentTypeError
        Without ``=`` or with an empty key (argparse turns it into a usage error).
    """
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    try:
        return key.strip(), json.loads(value)
    except json.JSONDecodeError:
        return key.strip(), value


def _params(pairs: list[tuple[str, Any]] | None) -> dict[str, Any]:
    return dict(pairs or [])  # a repeated key: the last one wins, as with most CLIs


def version() -> str:
    """The installed graphgpu distribution's version (``unknown`` when not installed)."""
    try:
        return metadata.version("graphgpu")
    except metadata.PackageNotFoundError:
        return "unknown"


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2))


def _console() -> Any:
    from rich.console import Console
    # Created per call so that it writes to the current sys.stdout; piped output (grep, files)
    # gets wide lines instead of rich's 80-column default, so ids and names are never cut.
    return Console(width=None if sys.stdout.isatty() else 240)


def _when(timestamp: float | None) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S") if timestamp else ""


# -- processes ---------------------------------------------------------------------------------

def _exec_module(module: str, args: list[str]) -> int:
    """Replace this process with ``python -m module``: signals (Ctrl-C, SIGTERM from a process
    manager) then reach the service directly, with no wrapper in between to forward them."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", module, *args])
    return 0  # not reached, except where a test replaces os.execv


def cmd_serve(args: argparse.Namespace) -> int:
    """``graphgpu serve``: Redis, the API and the workers (see ``python -m service``)."""
    if args.host:
        os.environ["GRAPHGPU_HOST"] = args.host
    if args.port:
        os.environ["GRAPHGPU_PORT"] = str(args.port)
    if args.log_requests:
        os.environ["GRAPHGPU_LOG_REQUESTS"] = "true"
    return _exec_module("graphgpu.service", [])


def cmd_worker(args: argparse.Namespace) -> int:
    """``graphgpu worker``: one more worker against the configured Redis."""
    extra = ["--backend", args.backend, *(["--name", args.name] if args.name else []),
             *(["--queues", args.queues] if args.queues else []),
             *(["--burst"] if args.burst else []),
             # the API's data over HTTP, not a shared folder (a worker on another host)
             *(["--remote"] if os.environ.get("GRAPHGPU_URL")
               and os.environ.get("GRAPHGPU_WORKER_KEY") else [])]
    return _exec_module("graphgpu.workers", extra)


# -- commands that talk to the service ---------------------------------------------------------

def cmd_upload(client: Client, args: argparse.Namespace) -> int:
    """``graphgpu upload FILE``: print the stored graph's metadata.

    Edge lists (integer or labelled nodes), the other formats and any ``--format`` go to the
    service as they are (its parser, its line numbers in errors); with ``auto``, an edge list
    with a header or a weight column by name is read here (:mod:`.edgetable`) and sent as
    arrays, or as JSON edges when it names nodes by labels (the service keeps the labels).
    """
    source = sys.stdin.buffer if args.file == "-" else args.file
    if args.format != "auto" or (args.file != "-" and not edgetable.needs_client(
            edgetable.read_head(args.file), args.header, args.weight_column)):
        _print_json(client.upload(source, format=args.format, name=args.name,
                                  directed=args.directed).to_dict())
        return 0  # the service parses it, streamed from the file
    data = edgetable.read_bytes(source)
    if not edgetable.needs_client(data[:edgetable.HEAD_BYTES], args.header, args.weight_column):
        _print_json(client.upload(data, format=args.format, name=args.name,
                                  directed=args.directed).to_dict())
        return 0
    table = edgetable.parse_table(data, args.header, args.weight_column)
    if table.labels is None:
        graph = client.upload_edges(table.src, table.dst, table.weights, name=args.name,
                                    directed=args.directed)
    else:
        graph = client.upload(edgetable.labelled_json(table), format="json", name=args.name,
                              directed=args.directed)
    _print_json(graph.to_dict())
    return 0


def cmd_generate(client: Client, args: argparse.Namespace) -> int:
    """``graphgpu generate NAME -p k=v``: print the new graph (or, with --no-wait, the job)."""
    result = client.generate(args.generator, name=args.name, backend=args.backend,
                             wait=not args.no_wait, timeout=args.timeout, **_params(args.param))
    _print_json(result.to_dict())
    return 0


def cmd_run(client: Client, args: argparse.Namespace) -> int:
    """``graphgpu run ALGO --graph ID``: print the job, or with --wait the result summary."""
    job = client.run(client.find_graph(args.graph).id, args.algorithm, backend=args.backend,
                     idempotency_key=args.idempotency_key, **_params(args.param))
    if not args.wait:
        _print_json(job.to_dict())
        return 0
    try:
        job.wait(timeout=args.timeout, progress=not args.no_progress)
    except KeyboardInterrupt:
        # Leaving the job running is the safe default; say how to stop it.
        print(f"interrupted; job {job.id} goes on (graphgpu cancel {job.id})", file=sys.stderr)
        return 130
    except TimeoutError:
        print(f"job {job.id} goes on (graphgpu status {job.id})", file=sys.stderr)
        raise
    except (JobFailed, JobCanceled):
        _print_json(job.to_dict())  # the job id and its error, for scripts
        raise
    # The summary alone: the whole result (an apsp matrix, a million node values) can be
    # large, and a succeeded job is a success whatever its size.
    result = job.result(fields="summary")
    _print_json({"job_id": job.id, "status": job.status, "algorithm": job.algorithm,
                 "graph_id": job.graph_id, "backend": job.backend, "device": job.device,
                 "timings": job.timings,
                 "summary": result.summary if args.verbose else clihelp.brief(result.summary),
                 "fetch": clihelp.fetch_commands(job.id, result.available)})
    return 0


def _jobs_table(jobs: list[Job]) -> Any:
    from rich.table import Table
    table = Table(title="jobs")
    for column in ("id", "algorithm", "status", "progress", "backend", "total ms", "created"):
        table.add_column(column, no_wrap=column in ("id", "status"))
    for job in jobs:
        total = job.timings.get("total_ms")
        table.add_row(job.id, job.algorithm, job.status,
                      f"{100 * float(job.progress.get('fraction') or 0):.0f}%",
                      job.backend or "", "" if total is None else f"{total:.1f}",
                      _when(job.created_at))
    return table


def cmd_status(client: Client, args: argparse.Namespace) -> int:
    """``graphgpu status [JOB_ID]``: one job as JSON, or tables of jobs and workers."""
    if args.job_id:
        _print_json(client.job(args.job_id).to_dict())
        return 0
    jobs, workers = client.jobs(status=args.status, limit=args.limit), client.workers()
    if args.json:
        _print_json({"jobs": [j.to_dict() for j in jobs], "workers": workers})
        return 0
    from rich.table import Table
    console = _console()
    console.print(_jobs_table(jobs))
    table = Table(title="workers")
    for column in ("name", "backend", "device", "host", "pid", "current job", "started"):
        table.add_column(column)
    for w in workers:
        table.add_row(w["name"], w["backend"], w["device"], w["host"], str(w["pid"]),
                      w.get("current_job") or "", _when(w.get("started_at")))
    console.print(table)
    return 0


def cmd_result(client: Client, args: argparse.Namespace) -> int:
    """``graphgpu result JOB_ID``: the summary and what can be fetched; with ``-o FILE`` (or
    an explicit ``--format`` to a pipe) the result itself, as JSON, CSV, ``.npy`` or Parquet."""
    fmt = args.format or (_format_of(args.output) if args.output else None)
    if fmt is None:
        job = client.job(args.job_id)
        result = job.result(fields="summary")
        _print_json({"job_id": job.id, "algorithm": job.algorithm, "graph_id": job.graph_id,
                     "summary": result.summary if args.verbose else clihelp.brief(result.summary),
                     "available": result.available,
                     "fetch": clihelp.fetch_commands(job.id, result.available)})
        return 0
    if fmt == "npy" and not args.field:
        arrays = client.job(args.job_id).result(fields="summary").available.get("arrays", [])
        print(f"error: --format npy needs --field, one of: {', '.join(arrays) or '(none)'}",
              file=sys.stderr)
        return 2
    if args.output:
        client.download_result(args.job_id, args.output, fmt, args.field)
        print(f"wrote {args.output}", file=sys.stderr)
        return 0
    if fmt in ("npy", "parquet") and sys.stdout.isatty():
        print(f"error: refusing to write binary .{fmt} data to a terminal; use -o FILE",
              file=sys.stderr)
        return 2
    sys.stdout.flush()
    client.download_result(args.job_id, sys.stdout.buffer, fmt, args.field)
    if fmt == "json":
        sys.stdout.buffer.write(b"\n")
    sys.stdout.buffer.flush()
    return 0


def _format_of(path: str) -> str:
    """The result format a file name asks for (``.csv``, ``.npy``, ``.parquet``; else JSON)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return suffix if suffix in ("csv", "npy", "parquet") else "json"


def cmd_cancel(client: Client, args: argparse.Namespace) -> int:
    """``graphgpu cancel JOB_ID``: print the job as the service left it."""
    _print_json(client.cancel(args.job_id).to_dict())
    return 0


def cmd_algorithms(client: Client, args: argparse.Namespace) -> int:
    """``graphgpu algorithms``: a table (or JSON) of the registered algorithms, sorted."""
    algorithms = sorted(client.algorithms(), key=lambda a: a["name"])
    if args.json:
        _print_json(algorithms)
        return 0
    _console().print(clihelp.algorithms_table(algorithms))
    return 0


def cmd_graphs(client: Client, args: argparse.Namespace) -> int:
    """``graphgpu graphs``: a table (or JSON) of the stored graphs."""
    graphs = client.graphs()
    if args.json:
        _print_json([g.to_dict() for g in graphs])
        return 0
    from rich.table import Table
    table = Table(title="graphs")
    for column in ("id", "name", "n", "m", "weighted", "created"):
        table.add_column(column, no_wrap=column == "id")
    for g in graphs:
        table.add_row(g.id, g.name or "", str(g.n), str(g.m), "yes" if g.weighted else "no",
                      _when(g.created_at))
    _console().print(table)
    return 0


# -- parser ------------------------------------------------------------------------------------

class RunHelp(argparse.Action):
    """``run --help``: the options, then the algorithms (from the service named by --url or
    $GRAPHGPU_URL, else the local registry) with their parameters, and the backends."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        url = getattr(namespace, "url", None) or default_url()
        key = getattr(namespace, "api_key", None) or default_api_key()
        parser.epilog = clihelp.run_epilog(clihelp.fetch_algorithms(url, key))
        parser.print_help()
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``graphgpu`` (its subcommands set ``func`` or ``local``)."""
    url_help = "service URL (default: $GRAPHGPU_URL or http://127.0.0.1:8000)"
    key_help = "API key (default: $GRAPHGPU_API_KEY; none for a service in open mode)"
    url = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: a --url given before the subcommand is not reset by the subcommand's default.
    url.add_argument("--url", default=argparse.SUPPRESS, help=url_help)
    url.add_argument("--api-key", default=argparse.SUPPRESS, help=key_help)
    parser = argparse.ArgumentParser(prog="graphgpu", description=clihelp.plain(__doc__),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=None, help=url_help)
    parser.add_argument("--api-key", default=None, help=key_help)
    parser.add_argument("--version", action="version", version=f"graphgpu {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[url], help=help, description=help)
        p.set_defaults(func=handler)
        return p

    def param_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("-p", "--param", action="append", type=parse_param, metavar="KEY=VALUE",
                       help="a parameter; the value is read as JSON if it can be (repeatable)")

    def backend_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto")

    p = sub.add_parser("serve", help="run the service: Redis, API and one worker per GPU")
    p.add_argument("--host", help="address to listen on (GRAPHGPU_HOST)")
    p.add_argument("--port", type=int, help="port to listen on (GRAPHGPU_PORT; clients find "
                   "the service through GRAPHGPU_URL, e.g. http://127.0.0.1:PORT)")
    p.add_argument("--log-requests", action="store_true",
                   help="log every API request (GRAPHGPU_LOG_REQUESTS; default: quiet)")
    p.set_defaults(local=cmd_serve)

    p = sub.add_parser("worker", help="run one more worker (on another host than the API's: "
                       "set GRAPHGPU_URL and GRAPHGPU_WORKER_KEY too)")
    backend_option(p)
    p.add_argument("--name", help="worker name (default: host and pid)")
    p.add_argument("--queues", help="comma-separated queues to take jobs from (gpu, auto, cpu; "
                   "default: a GPU worker's all three, a CPU worker's auto and cpu)")
    p.add_argument("--burst", action="store_true", help="exit when the queues are empty")
    p.set_defaults(local=cmd_worker)

    p = command("upload", cmd_upload, "upload a graph file ('-' reads stdin): an edge list "
                "'u v [w]' of ids or of names, CSV/TSV with or without a header, or --format")
    p.add_argument("file")
    p.add_argument("--format", default="auto",
                   choices=("auto", "edgelist", "metis", "mtx", "cnp", "json"),
                   help="file format (default: auto)")
    p.add_argument("--name", help="a name to find the graph by (--graph NAME)")
    p.add_argument("--directed", action="store_true",
                   help="keep edge directions (default: undirected)")
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="the first row names the columns (default: detected)")
    p.add_argument("--weight-column", metavar="NAME",
                   help="weights from this column of the header (default: 'weight' or the "
                        "third column)")

    p = command("generate", cmd_generate, "generate a graph, e.g. rmat -p scale=16 -p seed=1")
    p.add_argument("generator")
    param_option(p)
    p.add_argument("--name")
    backend_option(p)
    p.add_argument("--no-wait", action="store_true", help="print the job instead of waiting")
    p.add_argument("--timeout", type=float, help="seconds to wait at most")

    p = sub.add_parser("run", parents=[url], add_help=False,
                       help="run an algorithm, e.g. bfs --graph ID -p source=0 --wait",
                       description="run an algorithm, e.g. bfs --graph ID -p source=0 --wait",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=cmd_run)
    p.add_argument("-h", "--help", action=RunHelp, nargs=0,
                   help="show this help (with the service's algorithms) and exit")
    p.add_argument("algorithm", help="algorithm name (listed below)")
    p.add_argument("--graph", required=True, help="graph id or unique graph name")
    param_option(p)
    backend_option(p)
    p.add_argument("--wait", action="store_true", help="wait and print the result summary")
    p.add_argument("--timeout", type=float, help="seconds to wait at most (with --wait)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar while waiting")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print long summary lists (a memetic run's timeline) in full")
    p.add_argument("--idempotency-key", help="resubmitting with the same key gives the same job")

    p = command("status", cmd_status, "one job as JSON, or tables of recent jobs and workers")
    p.add_argument("job_id", nargs="?")
    p.add_argument("--status", choices=("queued", "running", "succeeded", "failed", "canceled"))
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true", help="JSON instead of tables")

    p = command("result", cmd_result, "a succeeded job's summary; its data with -o FILE")
    p.add_argument("job_id")
    p.add_argument("--format", choices=("json", "csv", "npy", "parquet"),
                   help="result format (default: the summary; with -o, from the file's suffix)")
    p.add_argument("--field", help="array to fetch with --format npy (required there)")
    p.add_argument("-o", "--output", help="write the result to this file")
    p.add_argument("-v", "--verbose", action="store_true", help="long summary lists in full")

    p = command("cancel", cmd_cancel, "cancel a queued or running job")
    p.add_argument("job_id")

    for name, handler, text in (("algorithms", cmd_algorithms, "list the algorithms"),
                                ("graphs", cmd_graphs, "list the stored graphs")):
        command(name, handler, text).add_argument("--json", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``graphgpu`` with ``argv`` (default ``sys.argv[1:]``).

    Parameters
    ----------
    argv : list of str, optional
        The arguments, without the program name.

    Returns
    -------
    int
        0 on success, 1 on an error from the service or a job, 2 on a usage error.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on usage errors and --help; report, don't exit
        return exc.code if isinstance(exc.code, int) else 0
    if hasattr(args, "local"):
        return args.local(args)
    try:
        with Client(args.url or default_url(), api_key=args.api_key) as client:
            return args.func(client, args)
    except GraphGPUError as exc:
        print(f"error: {exc}", file=sys.stderr)
    except TimeoutError as exc:
        print(f"error: timeout: {exc}", file=sys.stderr)
    except (OSError, ValueError) as exc:  # an unreadable file, a bad local argument
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
