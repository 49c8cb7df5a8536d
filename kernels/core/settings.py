"""The one settings object, read once at start-up by every process (API, workers, CLI serve).

It lives in the bottom layer so that the service and the workers, which must not import each
other, read the same names for paths, Redis keys and limits.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ApiKey(BaseModel):
    """Who an API key belongs to."""

    tenant: str = Field(min_length=1, description="Owner of the graphs and jobs made with the key.")
    admin: bool = Field(False, description="Sees and manages every tenant's graphs and jobs.")


class Settings(BaseSettings):
    """Service configuration; every field can be set as ``GRAPHGPU_<FIELD>`` in the environment."""

    model_config = SettingsConfigDict(env_prefix="GRAPHGPU_", extra="ignore")

    data_dir: Path = Field(
        Path("graphgpu-data"), description="Graphs, results and embedded Redis data."
    )
    redis_url: str | None = Field(None, description="Redis to use; unset = start an embedded one.")
    host: str = "127.0.0.1"
    port: int = 8000
    max_upload_bytes: int = Field(
        512 * 1024**2, description="Largest accepted upload (compressed)."
    )
    max_decompressed_bytes: int = Field(
        8 * 1024**3, description="Largest graph text after gunzip (guards against gzip bombs)."
    )
    max_nodes: int = Field(200_000_000, description="Largest graph, in nodes.")
    max_edges: int = Field(2_000_000_000, description="Largest graph, in undirected edges.")
    max_node_id: int = Field(2**53 - 1, description="Largest original node id accepted.")
    max_job_seconds: int = Field(3600, description="Wall-clock limit of one job.")
    result_ttl: int = Field(86_400, description="Seconds that finished jobs and results are kept.")
    max_result_bytes: int = Field(
        4 * 1024**3, description="Largest result a job may write (estimated before queueing)."
    )
    max_json_result_nodes: int = Field(
        2_000_000, description="Largest per-node result served as JSON (use csv/npy above it)."
    )
    worker_heartbeat_seconds: float = Field(2.0, description="How often a worker says it is alive.")
    worker_dead_after_seconds: float = Field(
        10.0, description="Silence after which a worker's running job is failed as worker_lost."
    )
    worker_warm_up: bool = Field(
        True, description="Compile (or load from the disk caches) every kernel before a worker "
                          "takes jobs. Off, each kernel loads at its first job instead: quicker "
                          "starts where the caches are filled already (the test stacks)."
    )
    gpu_cache_bytes: int = Field(8 * 1024**3, description="Graphs kept resident on a GPU worker.")
    cpu_workers: int = Field(1, description=(
        "CPU workers that `serve` starts; on a GPU host they start once the GPU workers are "
        "live and take the jobs asked of the CPU backend (0: the GPU workers take those)."))
    # Workers on other hosts (`graphgpu worker`; see workers/remote.py).
    url: str | None = Field(None, description="The API's URL, for `graphgpu worker` on another "
                                              "host (e.g. http://api-host:8000).")
    worker_key: SecretStr | None = Field(
        None, description="Credential of the API's worker routes, set on the API and on every "
                          "worker that reaches it over HTTP; accepted there only.")
    graph_cache_bytes: int = Field(
        32 * 1024**3, ge=0, description="Disk that a worker on another host gives to the graphs "
                                        "it fetched (least recently used go first).")
    extra_algorithm_modules: list[str] = Field(
        default_factory=list, description="More modules that register algorithms (plugins)."
    )
    redis_prefix: str = "graphgpu"
    api_keys: dict[str, ApiKey] = Field(
        default_factory=dict,
        description='API keys, as JSON: {"<key>": {"tenant": "alice", "admin": false}} or '
                    '{"<key>": "alice"}. No keys (here or in api_key_file) = open mode.')
    api_key_file: Path | None = Field(
        None, description="File of API keys, one `<key or sha256:hex> <tenant> [admin]` a line.")
    require_api_keys: bool = Field(
        False, description="Refuse to start without API keys (never run open by mistake).")
    rate_limit_per_second: float = Field(
        0.0, ge=0, description="Requests per second per API key, on average (0 = no limit).")
    rate_limit_burst: int = Field(
        100, ge=1, description="Requests per API key allowed at once above the average rate.")
    max_active_jobs_per_key: int = Field(
        1000, ge=0, description="Queued plus running jobs per API key (0 = no limit).")
    log_format: str = Field("json", pattern="^(json|text)$",
                            description="`json` (one object a line) or `text` logs.")
    max_name_length: int = Field(
        200, ge=1, description="Longest graph name (upload or generator); control characters "
                               "are refused whatever the length.")
    parse_memory_bytes: int = Field(
        default_factory=lambda: _physical_memory() // 4,
        description="Host memory one upload's parse may use (default a quarter of RAM): an "
                    "upload whose declared size or decompressed text needs more is refused "
                    "with 413 and the estimate.")
    stop_grace_seconds: float = Field(
        2.0, ge=0, description="After a cancel or the job time limit, how long a kernel may "
                               "take to stop on its own before its worker is killed (and "
                               "restarted by `serve`).")
    trusted_hosts: list[str] = Field(
        default_factory=lambda: ["*"],
        description='Host headers the API answers, as JSON (["api.example.org"]); "*" = any.')
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Origins allowed to call the API from a browser (CORS), as JSON; none by "
                    "default.")
    log_requests: bool = Field(False, description="Log every API request at info level "
                                                  "(default: at debug, i.e. not shown).")
    max_long_polls: int = Field(
        50, ge=0, description="Long-polls (GET /v1/jobs/{id}?wait=) one API process holds at "
                              "once (they share one pub/sub connection); past it a poll is "
                              "answered at once with Retry-After.")
    max_json_body_bytes: int = Field(
        1024**2, ge=1, description="Largest request body of every route but the upload (JSON "
                                   "bodies): 413 from Content-Length before it is read, or as "
                                   "soon as a streamed body passes it.")
    max_params_bytes: int = Field(
        64 * 1024, ge=1, description="Largest `params` of a job or generator, as stored (JSON "
                                     "bytes): 413 past it. Also bounds a GET /v1/jobs page "
                                     "(at most 1000 records of this size).")
    body_idle_timeout_seconds: float = Field(
        10.0, gt=0, description="Longest wait for the next chunk of a request body: 408 and "
                                "the connection closed past it.")
    body_min_bytes_per_second: int = Field(
        1024, ge=0, description="Slowest average rate a request body may arrive at once it has "
                                "taken longer than body_idle_timeout_seconds (0 = no minimum): "
                                "408 below it (slowloris bodies).")
    header_timeout_seconds: float = Field(
        10.0, gt=0, description="Longest time a connection may take to send a request's headers "
                                "(from connecting, or from the end of its previous response); "
                                "the connection is closed past it.")
    keep_alive_seconds: int = Field(
        5, ge=1, description="How long an idle keep-alive connection stays open.")
    api_loop: Literal["auto", "asyncio", "uvloop"] = Field(
        "auto", description="The API's event loop (uvicorn's --loop): auto is uvloop, which "
                            "is installed with the service, else asyncio's own.")
    max_connections: int = Field(
        2048, ge=1, description="Open connections the API accepts in all; more are closed at "
                                "once (and requests past it answered 503).")
    max_connections_per_client: int = Field(
        64, ge=0, description="Open connections per client address; more are closed at once "
                              "(0 = no limit; behind a proxy every client has its address).")
    max_inflation_ratio: float = Field(
        100.0, ge=0, description="Most bytes of text a gzip'd upload may inflate to per "
                                 "compressed byte, beyond the first 64 MiB (0 = no limit): "
                                 "413 as soon as a bomb passes it.")
    stored_bytes_per_upload_byte: float = Field(
        256.0, ge=0, description="Most bytes a graph may take on disk per byte uploaded, beyond "
                                "stored_bytes_allowance (0 = no limit): a file declaring a huge "
                                "node count with few edges is refused (413).")
    stored_bytes_allowance: int = Field(
        64 * 1024**2, ge=0, description="Bytes on disk any upload may take whatever its size.")
    max_tenant_stored_bytes: int = Field(
        64 * 1024**3, ge=0, description="Bytes of graphs on disk one tenant may hold (graphs "
                                        "it uploaded or claimed; 0 = no quota): 507 past it.")
    max_concurrent_downloads: int = Field(
        2, ge=1, description="GET /v1/graphs/{id}/edges streams served at once by an API "
                             "process; 429 with Retry-After past it.")

    @field_validator("api_keys", mode="before")
    @classmethod
    def _tenant_shorthand(cls, value: object) -> object:
        """Accept ``{"<key>": "alice"}`` for ``{"<key>": {"tenant": "alice"}}``."""
        if isinstance(value, dict):
            return {k: {"tenant": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    @property
    def graphs_dir(self) -> Path:
        return self.data_dir / "graphs"

    @property
    def results_dir(self) -> Path:
        return self.data_dir / "results"

    @property
    def tmp_dir(self) -> Path:
        return self.data_dir / "tmp"

    def queue_name(self, backend: str) -> str:
        """RQ queue of jobs that asked for ``backend`` (``auto``, ``gpu`` or ``cpu``)."""
        return f"{self.redis_prefix}-{backend}"

    def key(self, *parts: str) -> str:
        """Redis key under this deployment's prefix, e.g. ``key("job", job_id)``."""
        return ":".join((self.redis_prefix, *parts))


def _physical_memory() -> int:
    """Bytes of RAM of this host (8 GiB where the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 1024**3


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read from the environment on first use."""
    return Settings()
