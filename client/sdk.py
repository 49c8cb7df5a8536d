"""Python SDK of the graphgpu service: upload graphs, run algorithms, wait, fetch results.

It speaks HTTP only (httpx), so it runs anywhere the service is reachable::

    with Client() as gg:                      # GRAPHGPU_URL or http://127.0.0.1:8000
        graph = gg.generate("rmat", scale=16, edge_factor=8, seed=1)
        job = gg.run(graph.id, "bfs", source=0).wait()
        levels = job.array("level")           # aligned with job.array("node_id")
"""

from __future__ import annotations

import io
import os
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

import httpx
import numpy as np

from graphgpu.client import edgetable
from graphgpu.client.bodies import file_pieces, npz_pieces, slices
from graphgpu.client.errors import (
    NotFoundError,
    ValidationError,
    error_from_response,
    retry_after,
    unreachable,
)
from graphgpu.client.models import Graph, Job, Result

__all__ = ["DEFAULT_URL", "Client", "Graph", "Job", "Result", "default_api_key", "default_url"]

DEFAULT_URL = "http://127.0.0.1:8000"
#: GETs answered 429 are retried this many times, when the service asks to wait at most this long.
_RATE_LIMIT_RETRIES = 3
_RATE_LIMIT_MAX_WAIT = 10.0


def default_url() -> str:
    """The service URL: ``$GRAPHGPU_URL`` if set, else ``http://127.0.0.1:8000``."""
    return os.environ.get("GRAPHGPU_URL") or DEFAULT_URL


def default_api_key() -> str | None:
    """The API key: ``$GRAPHGPU_API_KEY`` if set, else None (a service in open mode)."""
    return os.environ.get("GRAPHGPU_API_KEY") or None


def _params(format: str, name: str | None, directed: bool) -> dict[str, str]:
    """The query of an upload."""
    return {"format": format, **({"name": name} if name else {}),
            **({"directed": "true"} if directed else {})}


class Client:
    """A connection to a graphgpu service.

    Parameters
    ----------
    base_url : str, optional
        The service URL; default ``$GRAPHGPU_URL`` or ``http://127.0.0.1:8000``.
    timeout : float, optional
        Seconds to wait for each response (``None``: no limit). Uploads are parsed before the
        service answers, so very large files may need more.
    transport : httpx.BaseTransport, optional
        A custom transport (e.g. ``httpx.MockTransport`` in tests).
    api_key : str, optional
        Sent as ``Authorization: Bearer <key>``; default ``$GRAPHGPU_API_KEY``, none for a
        service in open mode.
    """

    def __init__(self, base_url: str | None = None, timeout: float | None = 120.0,
                 transport: httpx.BaseTransport | None = None,
                 api_key: str | None = None) -> None:
        self.base_url = (base_url or default_url()).rstrip("/")
        limits = httpx.Timeout(timeout, connect=None if timeout is None else min(timeout, 10.0))
        key = api_key or default_api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else None
        self._http = httpx.Client(base_url=self.base_url, timeout=limits, transport=transport,
                                  headers=headers)
        self._node_params: dict[str, list[str]] | None = None  # by algorithm, fetched once

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    # -- graphs -------------------------------------------------------------------------------

    def upload(self, data: str | os.PathLike[str] | bytes | IO[bytes], format: str = "auto",
               name: str | None = None, directed: bool = False) -> Graph:
        """Upload a graph file (any supported format, optionally gzip'd).

        The returned graph's ``created`` is False when the same graph was already stored.

        Parameters
        ----------
        data : path, bytes or binary file
            A path is streamed from disk (never read whole into memory); its file name is the
            default ``name``.
        format : str
            ``auto``, ``edgelist``, ``metis``, ``mtx``, ``cnp``, ``json``, ``npz`` or
            ``parquet``.
        name : str, optional
            A label for the graph.
        directed : bool
            Keep edge directions (``u v`` is the arc u -> v) for edgelist, json and MTX
            ``general``; other formats are stored undirected (the graph's ``directed`` says).
        """
        params = _params(format, name, directed)
        if isinstance(data, bytes | bytearray | memoryview):
            return self._post_pieces([data], params)
        headers = {"Content-Type": "application/octet-stream"}
        if isinstance(data, str | os.PathLike):
            path = Path(data)
            params.setdefault("name", path.name)
            with path.open("rb") as fh:
                # A declared length lets the service refuse an oversized file before reading it.
                headers["Content-Length"] = str(os.fstat(fh.fileno()).st_size)
                return self._post_graph(file_pieces(fh), params, headers)
        if hasattr(data, "read"):  # length unknown: sent chunked
            return self._post_graph(file_pieces(data), params, headers)
        raise TypeError(f"upload() takes a path, bytes or a binary file, not {type(data)}")

    def _post_pieces(self, pieces: list[Any], params: dict[str, str]) -> Graph:
        """POST the concatenation of ``pieces`` (buffers) as the body, never joined here."""
        views = [memoryview(piece).cast("B") for piece in pieces]
        headers = {"Content-Type": "application/octet-stream",
                   "Content-Length": str(sum(view.nbytes for view in views))}
        return self._post_graph(slices(views), params, headers)

    def _post_graph(self, content: Any, params: dict[str, str],
                    headers: dict[str, str]) -> Graph:
        response = self.request("POST", "/v1/graphs", content=content, params=params,
                                 headers=headers)
        return Graph.from_json(response.json(), created=response.status_code == 201)

    def upload_networkx(self, G: Any, name: str | None = None,  # noqa: N803
                        directed: bool = False) -> Graph:
        """Upload a networkx graph, isolated nodes and edge weights included.

        Parameters
        ----------
        G : networkx.Graph
            Nodes may be any hashable labels. When every node is a non-negative integer, the
            integers are the node ids and the edges go up as binary columns (``format=npz``).
            Strings and numbers are sent as they are (JSON): the service keeps them
            (``labelled``), takes them as node parameters (``source="alice"``) and names nodes
            by them in every result, for any client (``Client().job(id)``). Other labels
            (tuples...) are numbered in ``G.nodes`` order and the returned graph's ``labels``
            keeps the mapping: pass that :class:`Graph` (not its id) to :meth:`run`. Edges are
            weighted by their ``weight`` attribute when every edge has one. Directed graphs are
            symmetrised unless ``directed``.
        name : str, optional
            A label for the graph.
        directed : bool
            Keep edge directions (store a directed graph).

        Raises
        ------
        ValueError
            A weight is not a number.
        """
        columns = edgetable.networkx_columns(G)
        if columns is not None:
            return self._post_pieces(npz_pieces(columns), _params("npz", name, directed))
        body, labels = edgetable.networkx_json(G)
        graph = self.upload(body, format="json", name=name, directed=directed)
        return graph if labels is None else replace(graph, labels=labels)

    def upload_edges(self, src: Any, dst: Any, weights: Any = None,
                     name: str | None = None, directed: bool = False,
                     nodes: Any = None) -> Graph:
        """Upload an edge list given as arrays (NumPy or any array-like), sent as binary
        columns (``format=npz``: no text written or parsed).

        Parameters
        ----------
        src, dst : array_like of int
            Endpoints of each edge: non-negative integer node ids, same length.
        weights : array_like of float, optional
            Finite edge weights, same length.
        name : str, optional
            A label for the graph.
        directed : bool
            Keep edge directions: ``src[i] -> dst[i]`` is an arc.
        nodes : array_like of int, optional
            Ids of nodes that exist even without edges (isolated nodes).

        Raises
        ------
        ValueError
            Arrays of other shapes, non-integer or negative ids, non-finite weights.
        """
        columns = edgetable.edge_columns(src, dst, weights, nodes)  # sent from their memory
        return self._post_pieces(npz_pieces(columns), _params("npz", name, directed))

    def upload_pandas(self, frame: Any, source: str = "source", target: str = "target",
                      weight: str | None = None, name: str | None = None,
                      directed: bool = False) -> Graph:
        """Upload the edges of a DataFrame (pandas, or anything whose columns ``to_numpy``).

        Integer id columns go up as binary columns (:meth:`upload_edges`); other node columns
        (strings...) as JSON edges of labels, which the service keeps (``labelled``).

        Parameters
        ----------
        frame : pandas.DataFrame
            One row per edge.
        source, target : str
            The columns of the edge ends.
        weight : str, optional
            The column of the edge weights (finite numbers); none: unweighted.
        name : str, optional
            A label for the graph.
        directed : bool
            Keep edge directions: ``source -> target`` is an arc.

        Raises
        ------
        ValueError
            Negative integer ids, non-finite weights.
        """
        u, v = frame[source].to_numpy(), frame[target].to_numpy()
        w = None if weight is None else frame[weight].to_numpy()
        if u.dtype.kind in "iu" and v.dtype.kind in "iu":
            return self.upload_edges(u, v, w, name=name, directed=directed)
        weights = None if w is None else np.asarray(w, np.float64)
        table = edgetable.EdgeTable(None, None, weights, np.column_stack([u, v]).astype(object))
        return self.upload(edgetable.labelled_json(table), format="json", name=name,
                           directed=directed)

    def graphs(self) -> list[Graph]:
        """Every stored graph."""
        return [Graph.from_json(g) for g in self.request("GET", "/v1/graphs").json()["graphs"]]

    def find_graph(self, id_or_name: str) -> Graph:
        """The stored graph with this id, or else the one graph with this name.

        Raises
        ------
        NotFoundError
            No graph has that id or name (code ``not_found``).
        ValidationError
            Several graphs have that name (code ``ambiguous_name``; the message lists their
            ids).
        """
        graphs = self.graphs()
        named = [g for g in graphs if g.id == id_or_name] or [
            g for g in graphs if g.name == id_or_name]
        if len(named) == 1:
            return named[0]
        if not named:
            raise NotFoundError(None, "not_found", f"no graph has the id or name {id_or_name!r}")
        raise ValidationError(None, "ambiguous_name", f"{len(named)} graphs are named "
                              f"{id_or_name!r}; pass one of their ids: "
                              f"{', '.join(g.id for g in named)}")

    def graph(self, graph_id: str) -> Graph:
        """One graph's metadata (:class:`NotFoundError` if unknown)."""
        return Graph.from_json(self.request("GET", f"/v1/graphs/{graph_id}").json())

    def download(self, graph_id: str | Graph, as_: str = "numpy") -> Any:
        """A stored graph's edges, back from the service.

        Parameters
        ----------
        graph_id : str or Graph
            The graph (nodes named by the labels the service keeps, or by a :class:`Graph`'s
            ``labels``).
        as_ : {"numpy", "networkx"}
            ``numpy``: a dict of arrays ``src``, ``dst`` (original ids, each undirected edge
            once), ``nodes`` (every node, isolated ones included) and ``weight`` when weighted.
            ``networkx``: a ``networkx.Graph`` (``DiGraph`` for a directed graph) with the
            weights as ``weight`` edge attributes.

        Returns
        -------
        dict of numpy.ndarray or networkx.Graph
        """
        if as_ not in ("numpy", "networkx"):
            raise ValueError(f"as_ must be 'numpy' or 'networkx', not {as_!r}")
        gid = getattr(graph_id, "id", graph_id)
        response = self.request("GET", f"/v1/graphs/{gid}/edges")
        with np.load(io.BytesIO(response.content), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        labels = getattr(graph_id, "labels", None)
        if as_ == "numpy":
            return arrays
        import networkx as nx
        meta = self.graph(gid)
        if labels is None and meta.labelled:
            labels = self.request("GET", f"/v1/graphs/{gid}/labels").json()
        G = nx.DiGraph() if meta.directed else nx.Graph()  # noqa: N806
        name = (lambda i: i) if labels is None else labels.__getitem__
        G.add_nodes_from(name(i) for i in arrays["nodes"].tolist())
        src, dst = arrays["src"].tolist(), arrays["dst"].tolist()
        if "weight" in arrays:
            G.add_weighted_edges_from(zip(map(name, src), map(name, dst),
                                          arrays["weight"].tolist(), strict=True))
        else:
            G.add_edges_from(zip(map(name, src), map(name, dst), strict=True))
        return G

    def delete_graph(self, graph_id: str) -> None:
        """Delete a graph (:class:`ConflictError` while a queued or running job uses it)."""
        self.request("DELETE", f"/v1/graphs/{graph_id}")

    def generate(self, generator: str, name: str | None = None, backend: str = "auto",
                 wait: bool = True, *, timeout: float | None = None,
                 **params: Any) -> Graph | Job:
        """Generate a graph on the service (e.g. ``generate("grid", rows=3, cols=4)``).

        Parameters
        ----------
        generator : str
            Name from :meth:`generators`.
        name : str, optional
            A label for the graph.
        backend : {"auto", "gpu", "cpu"}
            Where to generate it.
        wait : bool
            Wait for the generator job and return the :class:`Graph`; False returns the
            :class:`Job` at once.
        timeout : float, optional
            Seconds to wait at most.
        **params
            The generator's parameters (``seed`` included).
        """
        body = {"generator": generator, "params": params, "backend": backend,
                **({"name": name} if name else {})}
        job = self._job(self.request("POST", "/v1/graphs/generate", json=body))
        if not wait:
            return job
        summary = job.wait(timeout=timeout).result(fields="summary").summary
        return replace(self.graph(summary["graph_id"]), created=bool(summary.get("created")))

    # -- jobs ---------------------------------------------------------------------------------

    def run(self, graph_id: str | Graph, algorithm: str, backend: str = "auto",
            idempotency_key: str | None = None, **params: Any) -> Job:
        """Submit an algorithm job (e.g. ``run(g.id, "bfs", source=0)``); does not wait.

        Parameters
        ----------
        graph_id : str or Graph
            The graph to run on. A :class:`Graph` with ``labels`` (from
            :meth:`upload_networkx`) takes node parameters as labels (``source="alice"``) and
            gives a job whose results are keyed by label.
        algorithm : str
            Name from :meth:`algorithms`.
        backend : {"auto", "gpu", "cpu"}
            ``auto`` takes the first free worker; ``gpu`` needs a GPU worker to be running.
        idempotency_key : str, optional
            Resubmitting with the same key and body returns the same job instead of a new one.
        **params
            The algorithm's parameters, e.g. ``source``.
        """
        labels = getattr(graph_id, "labels", None)
        if labels is not None:
            params = self._node_params_to_ids(algorithm, labels, params)
        body = {"graph_id": getattr(graph_id, "id", graph_id), "algorithm": algorithm,
                "params": params, "backend": backend}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        response = self.request("POST", "/v1/jobs", json=body, headers=headers)
        return Job(self, response.json(), retry_after(response), labels=labels)

    def _node_params_to_ids(self, algorithm: str, labels: tuple[Any, ...],
                            params: dict[str, Any]) -> dict[str, Any]:
        """Node parameters (``source``, ``sources``...) given as labels, as the service's ids."""
        if self._node_params is None:
            self._node_params = {a["name"]: a.get("node_params") or []
                                 for a in self.algorithms()}
        index = {v: i for i, v in enumerate(labels)}

        def to_id(value: Any) -> Any:
            if isinstance(value, list | tuple):
                return [to_id(v) for v in value]
            if value is None:
                return None
            if value not in index:
                raise ValueError(f"node {value!r} is not in the graph")
            return index[value]

        return {k: to_id(v) if k in self._node_params.get(algorithm, ()) else v
                for k, v in params.items()}

    def job(self, job_id: str) -> Job:
        """Poll one job."""
        return self._job(self.request("GET", f"/v1/jobs/{job_id}"))

    def jobs(self, status: str | None = None, limit: int = 100) -> list[Job]:
        """Recent jobs, newest first, optionally only those with ``status``."""
        params = {"limit": limit, **({"status": status} if status else {})}
        response = self.request("GET", "/v1/jobs", params=params)
        return [Job(self, data) for data in response.json()["jobs"]]

    def cancel(self, job_id: str) -> Job:
        """Cancel a job (:class:`ConflictError` with code ``job_finished`` if it has ended)."""
        return self._job(self.request("DELETE", f"/v1/jobs/{job_id}"))

    # -- service ------------------------------------------------------------------------------

    def algorithms(self) -> list[dict[str, Any]]:
        """Registered algorithms with their parameter and result JSON schemas."""
        return self.request("GET", "/v1/algorithms").json()["algorithms"]

    def generators(self) -> list[dict[str, Any]]:
        """Registered graph generators with their parameter JSON schemas."""
        return self.request("GET", "/v1/generators").json()["generators"]

    def workers(self) -> list[dict[str, Any]]:
        """Live workers: name, backend, device, host, pid, started_at."""
        return self.request("GET", "/v1/workers").json()["workers"]

    def health(self) -> dict[str, Any]:
        """The service's liveness report."""
        return self.request("GET", "/v1/health").json()

    # -- plumbing -----------------------------------------------------------------------------

    def _job(self, response: httpx.Response) -> Job:
        return Job(self, response.json(), retry_after(response))

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send a request; raise the typed error for a non-2xx answer or a transport failure.

        Parameters
        ----------
        method : str
            HTTP method.
        url : str
            Path under the service URL, e.g. ``/v1/jobs``.
        **kwargs
            Passed to ``httpx.Client.request`` (``params``, ``json``, ``timeout``...).

        Returns
        -------
        httpx.Response
            A 2xx response.

        Notes
        -----
        A GET refused for the key's request rate (429) is sent again after the ``Retry-After``
        the service asked for, a few times: polling a job should not fail for polling too fast.
        """
        for attempt in range(_RATE_LIMIT_RETRIES + 1):
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.TransportError as exc:
                raise unreachable(self.base_url, exc) from exc
            wait = retry_after(response)
            if (response.status_code != 429 or method != "GET" or wait is None
                    or wait > _RATE_LIMIT_MAX_WAIT or attempt == _RATE_LIMIT_RETRIES):
                break
            time.sleep(wait)
        if response.is_error:
            raise error_from_response(response)
        return response

    def download_result(self, job_id: str, dest: str | os.PathLike[str] | IO[bytes],
                        format: str = "csv", field: str | None = None) -> None:
        """Stream a succeeded job's result to a file, never holding it whole in memory.

        Parameters
        ----------
        job_id : str
            The job.
        dest : path or binary file
            Where to write; a path is created only once the service has answered 2xx.
        format : {"csv", "npy", "json", "parquet"}
            Result format (``parquet``: the node values as a table; the service needs pyarrow).
        field : str, optional
            The array to send for ``format="npy"`` (default: the first node value field).
        """
        url = f"/v1/jobs/{job_id}/result"
        params = {"format": format, **({"field": field} if field else {})}
        try:
            with self._http.stream("GET", url, params=params) as response:
                if response.is_error:
                    response.read()
                    raise error_from_response(response)
                # Open the file only once the answer is good: no empty file left on an error.
                with (open(dest, "wb") if isinstance(dest, str | os.PathLike)
                      else nullcontext(dest)) as out:
                    for chunk in response.iter_bytes(1 << 20):
                        out.write(chunk)
        except httpx.TransportError as exc:
            raise unreachable(self.base_url, exc) from exc
