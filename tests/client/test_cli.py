"""The ``graphgpu`` command line, run in-process against the live stack."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import uuid

import numpy as np
import pytest

from graphgpu.client import Client
from graphgpu.client.cli import main, parse_param
from tests.conftest import wait_until


@pytest.fixture
def gg(stack, capsys):
    """Run ``graphgpu --url <stack> ARGS``; returns (exit code, stdout, stderr)."""
    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()  # drop anything printed before
        code = main(["--url", stack.base_url, *args])
        out, err = capsys.readouterr()
        return code, out, err
    return run


@pytest.fixture
def edge_file(tmp_path):
    base = uuid.uuid4().int % 10**9
    path = tmp_path / "edges.txt"
    path.write_text("".join(f"{base + i} {base + i + 1}\n" for i in range(6)))
    return path, base


def test_parse_param_reads_json_values():
    assert parse_param("source=3") == ("source", 3)
    assert parse_param("p=0.25") == ("p", 0.25)
    assert parse_param("directed=true") == ("directed", True)
    assert parse_param("name=karate") == ("name", "karate")
    assert parse_param("ids=[1, 2]") == ("ids", [1, 2])
    assert parse_param("expr=a=b") == ("expr", "a=b")


def test_upload_and_graphs(gg, edge_file):
    path, _ = edge_file
    code, out, _ = gg("upload", str(path), "--name", "cli-edges")
    assert code == 0
    graph = json.loads(out)
    assert (graph["n"], graph["m"], graph["name"], graph["created"]) == (7, 6, "cli-edges", True)
    code, out, _ = gg("upload", str(path), "--format", "edgelist")
    assert code == 0 and json.loads(out)["created"] is False

    code, out, _ = gg("graphs", "--json")
    assert code == 0 and graph["id"] in {g["id"] for g in json.loads(out)}
    code, out, _ = gg("graphs")
    assert code == 0 and "graphs" in out and "cli-edges" in out


def test_generate_run_wait_status_and_results(gg, tmp_path):
    code, out, _ = gg("generate", "grid", "-p", "rows=4", "-p", "cols=5", "--name", "g45")
    assert code == 0
    graph = json.loads(out)
    assert (graph["n"], graph["m"]) == (20, 31)

    code, out, _ = gg("run", "bfs", "--graph", graph["id"], "-p", "source=0", "--wait")
    assert code == 0
    done = json.loads(out)
    assert done["status"] == "succeeded"
    assert done["summary"].items() >= {"source": 0, "reached": 20, "max_level": 7}.items()
    job_id = done["job_id"]
    assert done["fetch"] == [f"graphgpu result {job_id} --format csv -o {job_id}.csv"]

    code, out, _ = gg("status", job_id)
    assert code == 0 and json.loads(out)["status"] == "succeeded"
    code, out, _ = gg("status")
    assert code == 0 and "jobs" in out and "workers" in out
    code, out, _ = gg("status", "--json", "--limit", "5")
    listing = json.loads(out)
    assert code == 0 and len(listing["jobs"]) <= 5 and listing["workers"]

    code, out, _ = gg("result", job_id, "--format", "json")
    levels = json.loads(out)["node_values"]["level"]
    assert code == 0 and levels["19"] == 7  # the far corner of the 4 x 5 grid

    csv_path, npy_path = tmp_path / "r.csv", tmp_path / "level.npy"
    assert gg("result", job_id, "--format", "csv", "-o", str(csv_path))[0] == 0
    rows = csv_path.read_text().splitlines()
    assert rows[0] == "node_id,level,parent" and len(rows) == 21
    assert gg("result", job_id, "--format", "npy", "--field", "level", "-o", str(npy_path))[0] == 0
    level = np.load(npy_path, allow_pickle=False)
    assert level.tolist() == [int(r.split(",")[1]) for r in rows[1:]]
    parquet_path = tmp_path / "r.parquet"
    assert gg("result", job_id, "--format", "parquet", "-o", str(parquet_path))[0] == 0
    import pandas as pd
    assert pd.read_parquet(parquet_path)["level"].tolist() == level.tolist()


def test_run_without_wait_then_cancel(gg, stack, edge_file):
    path, _ = edge_file
    graph = json.loads(gg("upload", str(path))[1])
    code, out, _ = gg("run", "test_sleep", "--graph", graph["id"], "-p", "seconds=30")
    assert code == 0
    job = json.loads(out)
    assert job["status"] in ("queued", "running")
    with Client(stack.base_url) as client:
        wait_until(lambda: client.job(job["id"]).status == "running", timeout=30)
        code, out, _ = gg("cancel", job["id"])
        assert code == 0 and json.loads(out)["id"] == job["id"]
        wait_until(lambda: client.job(job["id"]).status == "canceled", timeout=20)
    code, _, err = gg("cancel", job["id"])
    assert code == 1 and err.startswith("error: job_finished: ")
    code, _, err = gg("result", job["id"])
    assert code == 1 and "job_not_succeeded" in err


def test_algorithms(gg):
    code, out, _ = gg("algorithms")
    assert code == 0 and "bfs" in out and "test_sleep" in out
    names = [m.group(1) for m in re.finditer(r"^│ (\w+) ", out, re.MULTILINE)]
    assert "sssp" in names and names == sorted(names)
    assert "prune={auto|on|off}:off" in out and "dtype={float32|float64}:float64" in out
    code, out, _ = gg("algorithms", "--json")
    by_name = {a["name"]: a for a in json.loads(out)}
    assert by_name["bfs"]["node_params"] == ["source", "sources"]


def test_errors_and_exit_codes(gg, tmp_path, stack):
    code, _, err = gg("run", "bfs", "--graph", "nope", "-p", "source=0")
    assert code == 1 and err.startswith("error: not_found: ")

    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n1 two\n")
    code, _, err = gg("upload", str(bad), "--format", "edgelist")
    assert code == 1 and "(line 2" in err

    code, _, err = gg("upload", str(tmp_path / "missing.txt"))
    assert code == 1 and err.startswith("error: FileNotFoundError")

    assert gg("run", "bfs")[0] == 2  # --graph is required
    assert gg("run", "bfs", "--graph", "x", "-p", "novalue")[0] == 2
    assert main(["--url", "http://127.0.0.1:9", "graphs"]) == 1


def test_serve_and_worker_exec_the_modules(monkeypatch):
    calls: list[list[str]] = []
    monkeypatch.setattr(os, "execv", lambda exe, argv: calls.append([exe, *argv]))
    # setenv records the variables' state before the test, which teardown restores: serve
    # writes them into os.environ, and later tests must not inherit what it wrote.
    monkeypatch.setenv("GRAPHGPU_PORT", "8000")
    monkeypatch.setenv("GRAPHGPU_LOG_REQUESTS", "false")
    assert main(["serve", "--port", "9999"]) == 0
    assert calls[-1] == [sys.executable, sys.executable, "-m", "graphgpu.service"]
    assert os.environ["GRAPHGPU_PORT"] == "9999"
    assert os.environ["GRAPHGPU_LOG_REQUESTS"] == "false"  # not asked for
    assert main(["serve", "--log-requests"]) == 0
    assert os.environ["GRAPHGPU_LOG_REQUESTS"] == "true"
    assert main(["worker", "--backend", "cpu", "--burst"]) == 0
    assert calls[-1][2:] == ["-m", "graphgpu.workers", "--backend", "cpu", "--burst"]
    assert main(["worker", "--backend", "gpu", "--queues", "gpu,auto"]) == 0
    assert calls[-1][2:] == ["-m", "graphgpu.workers", "--backend", "gpu", "--queues", "gpu,auto"]


def test_help_is_plain_text_and_run_help_lists_algorithms_and_backends(gg, stack):
    code, out, _ = gg("--help")
    assert code == 0 and "``" not in out and "jq" in out
    code, out, _ = gg("run", "--help")
    assert code == 0 and "bfs: source=null, sources=null, prune={auto|on|off}:off" in out
    assert "sssp: source, dtype={float32|float64}:float64" in out
    assert "backends: auto" in out and "gpu" in out.split("backends:")[1]


def test_result_prints_the_summary_and_npy_needs_a_field(gg, tmp_path):
    graph = json.loads(gg("generate", "grid", "-p", "rows=3", "-p", "cols=3")[1])
    job_id = json.loads(gg("run", "bfs", "--graph", graph["id"], "-p", "source=0",
                           "--wait")[1])["job_id"]
    code, out, _ = gg("result", job_id)
    shown = json.loads(out)
    assert code == 0 and "node_values" not in shown and shown["summary"]["reached"] == 9
    assert shown["available"]["node_values"] == ["level", "parent"]
    code, out, err = gg("result", job_id, "--format", "npy", "-o", str(tmp_path / "x.npy"))
    assert code == 2 and "needs --field" in err and not (tmp_path / "x.npy").exists()
    assert gg("result", job_id, "-o", str(tmp_path / "r.csv"))[0] == 0  # format from suffix
    assert (tmp_path / "r.csv").read_text().startswith("node_id,level,parent")


def test_upload_csv_with_header_weight_column_and_directed(gg, tmp_path):
    base = uuid.uuid4().int % 10**9
    path = tmp_path / "edges.csv"
    path.write_text(f"source,target,cost,weight\n{base},{base + 1},7,0.5\n"
                    f"{base + 1},{base + 2},8,0.25\n")
    code, out, err = gg("upload", str(path), "--weight-column", "cost", "--directed")
    graph = json.loads(out)
    assert code == 0, err
    assert (graph["n"], graph["m"], graph["weighted"], graph["directed"]) == (3, 2, True, True)
    name = f"csv-{base}"
    assert gg("upload", str(path), "--name", name)[0] == 0  # the 'weight' column by default
    code, out, _ = gg("run", "sssp", "--graph", name, "-p", f"source={base}", "--wait")
    assert code == 0 and json.loads(out)["summary"]["max_distance"] == 0.75
    code, _, err = gg("upload", str(path), "--weight-column", "nope")
    assert code == 1 and "no weight column 'nope'" in err


def test_upload_labelled_edges_keeps_the_labels(gg, tmp_path):
    tag = uuid.uuid4().hex[:8]
    path = tmp_path / "people.tsv"
    path.write_text(f"alice\tbob-{tag}\nbob-{tag}\tcarol\ncarol\tdave\n")
    code, out, err = gg("upload", str(path), "--name", f"people-{tag}")
    graph = json.loads(out)
    assert code == 0 and (graph["n"], graph["m"], graph["labelled"]) == (4, 3, True), err
    code, out, err = gg("run", "bfs", "--graph", f"people-{tag}", "-p", "source=alice", "--wait")
    assert code == 0 and json.loads(out)["summary"]["reached"] == 4, err
    # A header and a weight column are read by the client; the labels still reach the service.
    path = tmp_path / "people.csv"
    path.write_text(f"source,target,weight\nalice,bob-{tag},2\nbob-{tag},carol,3\n")
    code, out, err = gg("upload", str(path), "--name", f"weighted-people-{tag}")
    graph = json.loads(out)
    assert code == 0 and (graph["n"], graph["weighted"], graph["labelled"]) == (3, True, True)
    code, out, err = gg("run", "sssp", "--graph", f"weighted-people-{tag}", "-p", "source=alice",
                        "--wait")
    assert code == 0 and json.loads(out)["summary"]["max_distance"] == 5.0, err


def test_graph_by_unique_name(gg, tmp_path):
    tag = uuid.uuid4().hex[:8]
    for rows in (2, 3):
        gg("generate", "grid", "-p", f"rows={rows}", "-p", "cols=2", "--name", f"twin-{tag}")
    code, _, err = gg("run", "bfs", "--graph", f"twin-{tag}", "-p", "source=0")
    assert code == 1 and "2 graphs are named" in err
    path = tmp_path / "solo.txt"
    base = int(tag, 16) % 10**9
    path.write_text("".join(f"{base + i} {base + i + 1}\n" for i in range(9)))
    assert gg("upload", str(path), "--name", f"solo-{tag}")[0] == 0
    code, out, err = gg("run", "bfs", "--graph", f"solo-{tag}", "-p", f"source={base}", "--wait")
    assert code == 0, err
    assert json.loads(out)["summary"]["reached"] == 10


def test_progress_line_fits_80_columns(monkeypatch):
    from graphgpu.client import models

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    bar = models._progress_bar("always")
    task = bar.add_task("critical_nodes 0123abcd", total=1.0, message="")
    bar.update(task, completed=0.42, message="running: memetic generation 12, best 123456 "
               "after 3.2 s on island 3 of 4, pool of 20")
    lines = ["".join(s.text for s in line)
             for line in bar.console.render_lines(bar.get_renderable(), bar.console.options)]
    assert len(lines) == 1 and len(lines[0].rstrip()) <= 80
    assert "42%" in lines[0] and "━" in lines[0] and "running: memetic" in lines[0]


def test_brief_summary_hides_long_lists_unless_verbose():
    from graphgpu.client.clihelp import brief

    summary = {"objective": 3, "timeline": [[0.1 * i, i] for i in range(30)], "few": [1, 2]}
    assert brief(summary) == {"objective": 3, "few": [1, 2],
                              "timeline": "[30 entries; --verbose shows them]"}
