"""Request and response bodies of the HTTP API."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

JobStatus = Literal["queued", "running", "succeeded", "failed", "canceled"]
RequestedBackend = Literal["auto", "gpu", "cpu"]


class ErrorDetail(BaseModel):
    code: str = Field(examples=["invalid_token"])
    message: str = Field(examples=["line 3: 'x12' is not a non-negative integer node id"])
    line: int | None = Field(None, description="1-based line of the uploaded file at fault.")
    field: str | None = Field(None, description="Parameter or body field at fault.")
    estimate: dict[str, Any] | None = Field(
        None, description="The cost estimate behind a refusal (seconds, result_bytes, ...).")


class ErrorBody(BaseModel):
    error: ErrorDetail


class Normalization(BaseModel):
    edges_read: int
    self_loops_dropped: int
    duplicates_merged: int


class GraphSource(BaseModel):
    format: str = Field(examples=["edgelist"])
    compressed: bool = False
    bytes: int = Field(description="Size of the upload as received.")


class GraphOut(BaseModel):
    """A stored graph's metadata."""

    id: str = Field(examples=["4f1c0b8e2a7d4e3f9a1b2c3d4e5f6a7b"])
    name: str | None = None
    n: int
    m: int = Field(description="Edges; arcs of a directed graph.")
    weighted: bool
    directed: bool = Field(False, description="Uploaded with directed=true: arcs keep their "
                                              "direction (degree_* figures count in + out).")
    out_degree_min: int | None = None
    out_degree_max: int | None = None
    in_degree_min: int | None = None
    in_degree_max: int | None = None
    sources: int | None = Field(None, description="Directed: nodes with no arc in.")
    sinks: int | None = Field(None, description="Directed: nodes with no arc out.")
    labelled: bool = Field(False, description="Nodes named by labels (strings or numbers) "
                                              "that jobs take and answer with.")
    degree_min: int
    degree_max: int
    degree_mean: float
    isolated_nodes: int
    node_id_min: int
    node_id_max: int
    bytes: int = Field(description="Bytes of the stored CSR arrays.")
    created_at: float
    source: dict[str, Any]
    normalization: Normalization


class GraphList(BaseModel):
    graphs: list[GraphOut]


class GenerateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"generator": "rmat", "params": {"scale": 16, "edge_factor": 8, "seed": 1}}]
    })

    generator: str = Field(description="Name from GET /v1/generators.")
    params: dict[str, Any] = Field(default_factory=dict)
    name: str | None = None
    backend: RequestedBackend = "auto"


class JobRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"graph_id": "4f1c0b8e2a7d4e3f9a1b2c3d4e5f6a7b", "algorithm": "bfs",
                      "params": {"source": 0}, "backend": "auto"}]
    })

    graph_id: str
    algorithm: str = Field(description="Name from GET /v1/algorithms.")
    params: dict[str, Any] = Field(default_factory=dict)
    backend: RequestedBackend = "auto"


class Progress(BaseModel):
    fraction: float = 0.0
    message: str = ""


class Timings(BaseModel):
    queued_ms: float | None = None
    load_ms: float | None = None
    compute_ms: float | None = None
    total_ms: float | None = None


class JobOut(BaseModel):
    """A job's state, as polled."""

    id: str
    kind: Literal["algorithm", "generate"]
    algorithm: str = Field(description="Algorithm or generator name.")
    graph_id: str | None = None
    params: dict[str, Any]
    backend_requested: RequestedBackend
    status: JobStatus
    progress: Progress
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    backend: Literal["cpu", "gpu"] | None = Field(None, description="Backend that ran the job.")
    device: str | None = Field(None, description="Device that ran it (GPU model or CPU).")
    worker: str | None = None
    owner: str | None = Field(None, description="Tenant of the API key that submitted it.")
    attempts: int | None = Field(None, description="Times a worker took it (2 after a retry).")
    lost: list[dict[str, Any]] | None = Field(
        None, description="Workers that stopped while running it (worker, attempt, at).")
    timings: Timings
    estimate: dict[str, Any] | None = Field(
        None, description="Cost estimated before queueing (backend, seconds, result_bytes, ...).")
    error: ErrorDetail | None = None
    result_url: str | None = None


class JobList(BaseModel):
    jobs: list[JobOut]


class AlgorithmOut(BaseModel):
    name: str
    summary: str
    params_schema: dict[str, Any]
    result_schema: dict[str, Any]
    backends: list[str]
    node_params: list[str]


class AlgorithmList(BaseModel):
    algorithms: list[AlgorithmOut]


class GeneratorOut(BaseModel):
    name: str
    summary: str
    params_schema: dict[str, Any]
    backends: list[str]


class GeneratorList(BaseModel):
    generators: list[GeneratorOut]


class WorkerOut(BaseModel):
    name: str
    backend: Literal["cpu", "gpu"]
    device: str
    host: str | None = Field(None, description="Host of the worker (admins only).")
    pid: int | None = Field(None, description="Process id of the worker (admins only).")
    started_at: float
    current_job: str | None = Field(
        None, description="Job it runs now (admins, or the job's own tenant).")
    gpu_free_bytes: int | None = Field(None, description="GPU memory free (GPU workers).")
    gpu_total_bytes: int | None = Field(None, description="GPU memory in all (GPU workers).")
    host_free_bytes: int | None = Field(None, description="Host memory available (MemAvailable).")


class WorkerList(BaseModel):
    workers: list[WorkerOut]


class Health(BaseModel):
    status: Literal["ok"]
    redis: bool
    workers: int


class Ready(BaseModel):
    status: Literal["ready"]
    redis: bool
    workers: int


class ResultOut(BaseModel):
    """A finished job's result; node values keyed by original node id."""

    job_id: str
    algorithm: str
    graph_id: str | None
    backend: str
    device: str
    graph_view: str | None = Field(
        None, description="The graph the algorithm ran on: undirected, directed, or symmetrised "
                          "(a directed graph's arcs taken as undirected edges).")
    node_id_fields: list[str] = Field(
        default_factory=list, description="Fields of node_values or arrays whose values are "
                                          "node ids (original ids; -1 = none).")
    labelled: bool = Field(False, description="The graph names nodes by labels: node_values "
                           "are keyed by label and node_id_fields hold labels (null = none); "
                           "?format=npy holds ids into GET /v1/graphs/{id}/labels.")
    summary: dict[str, Any]
    node_values: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-node arrays: field -> {original node id: value}."
    )
    arrays: dict[str, list[Any]] = Field(default_factory=dict)
    available: dict[str, list[str]] = Field(
        default_factory=dict, description="Names of the result's `node_values` and `arrays`, "
        "each downloadable with `?format=npy&field=<name>` (also when `?fields=summary` left "
        "them out).")
