"""Content-addressed graph store on disk: one folder of memory-mappable ``.npy`` arrays per graph.

A graph is written into a private temporary folder and renamed into place, so a reader never sees
a half-written graph and a failed write leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

from graphgpu.kernels.core.errors import UnknownName
from graphgpu.kernels.core.graph import Graph, NormalizationReport, content_id
from graphgpu.kernels.core.labels import DATA_FILE, OFFSETS_FILE, Labels

META_FILE = "meta.json"
#: Label tables (and their lookup indexes, 8 bytes a label) a store object keeps in memory.
LABEL_TABLES_KEPT = 4
#: Node-id tables a store object keeps mapped: the API checks every job's node parameters
#: against one, and opening it (``np.load``'s header parse) was 0.3 ms of a small job's POST.
NODE_ID_TABLES_KEPT = 8

# np.load parses every .npy header with ast.literal_eval, and CPython's AST constructor keeps its
# recursion depth per interpreter: two threads parsing at once (a garbage collection switching
# threads mid-parse) can raise "SystemError: AST constructor recursion depth mismatch" (seen on
# 3.11.7 under load, cf. python/cpython#106905). The API reads arrays from its thread pool.
_NPY_HEADER_LOCK = threading.Lock()


def load_npy(path: Path, mode: Literal["r", "c"] = "r") -> np.ndarray:
    """A ``.npy`` array memory-mapped read-only (``"r"``) or copy-on-write (``"c"``); safe to
    call from many threads at once."""
    with _NPY_HEADER_LOCK:
        return np.load(path, mmap_mode=mode)


def graph_metadata(graph: Graph) -> dict[str, Any]:
    """Summary numbers of a graph (n, m, degrees, isolated nodes, bytes).

    For a directed graph ``m`` counts arcs, the ``degree_*`` figures are of in- plus out-degree,
    and ``out_degree_*``/``in_degree_*``, ``sources`` (no arc in) and ``sinks`` (no arc out) are
    added.
    """
    degrees = graph.degrees()
    extra: dict[str, Any] = {}
    if graph.directed:
        out_deg, in_deg = degrees, graph.in_degrees()
        degrees = out_deg + in_deg
        for kind, deg in (("out", out_deg), ("in", in_deg)):
            extra[f"{kind}_degree_min"] = int(deg.min()) if graph.n else 0
            extra[f"{kind}_degree_max"] = int(deg.max()) if graph.n else 0
        extra["sources"] = int((in_deg == 0).sum())
        extra["sinks"] = int((out_deg == 0).sum())
    return {
        "directed": graph.directed,
        "n": graph.n,
        "m": graph.m,
        "weighted": graph.weighted,
        "degree_min": int(degrees.min()) if graph.n else 0,
        "degree_max": int(degrees.max()) if graph.n else 0,
        "degree_mean": float(2 * graph.m / graph.n) if graph.n else 0.0,
        "isolated_nodes": int((degrees == 0).sum()),
        "node_id_min": int(graph.node_ids[0]) if graph.n else 0,
        "node_id_max": int(graph.node_ids[-1]) if graph.n else 0,
        "bytes": graph.nbytes(),
        **extra,
    }


class GraphStore:
    """Graphs under ``root/graphs/<id>/``; temporary writes under ``root/tmp/``.

    Parameters
    ----------
    graphs_dir, tmp_dir : Path
        Where graphs live and where they are assembled (same file system, for atomic renames).
    """

    def __init__(self, graphs_dir: Path, tmp_dir: Path) -> None:
        self.graphs_dir = Path(graphs_dir)
        self.tmp_dir = Path(tmp_dir)
        self.graphs_dir.mkdir(parents=True, exist_ok=True)
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        self._labels: OrderedDict[str, Labels | None] = OrderedDict()
        self._node_ids: OrderedDict[str, np.ndarray] = OrderedDict()
        self._kept_lock = threading.Lock()

    def path(self, graph_id: str) -> Path:
        if not graph_id.isalnum():
            raise UnknownName(f"graph {graph_id!r} does not exist", field="graph_id")
        return self.graphs_dir / graph_id

    def exists(self, graph_id: str) -> bool:
        return (self.path(graph_id) / META_FILE).is_file()

    def put(
        self,
        graph: Graph,
        *,
        name: str | None,
        source: dict[str, Any],
        report: NormalizationReport,
        labels: Labels | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Store a graph unless an identical one exists.

        ``labels`` (a graph whose upload named its nodes by labels: original id ``i`` is
        ``labels`` entry ``i``) is stored beside the arrays and part of the content address;
        the metadata then says ``labelled: true``.

        Returns
        -------
        meta : dict
            The stored metadata (the existing one if the graph was already there).
        created : bool
            False when an identical graph was already stored.
        """
        tables = labels.arrays() if labels is not None else {}
        graph_id = content_id(graph, labels.identity() if labels is not None else None)
        target = self.path(graph_id)
        if self.exists(graph_id):
            return self.meta(graph_id), False
        staging = self.tmp_dir / f"{graph_id}.{uuid.uuid4().hex}"
        staging.mkdir(parents=True)
        try:
            for stem, array in {**graph.arrays(), **tables}.items():
                np.save(staging / f"{stem}.npy", array)
            meta = {
                "id": graph_id,
                "name": name,
                "created_at": time.time(),
                **graph_metadata(graph),
                "labelled": labels is not None,
                "source": source,
                "normalization": report.as_dict(),
            }
            (staging / META_FILE).write_text(json.dumps(meta))
            try:
                os.rename(staging, target)
            except OSError:
                # Another writer stored the same content first: theirs is identical.
                if not self.exists(graph_id):
                    raise
                return self.meta(graph_id), False
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return meta, True

    def meta(self, graph_id: str) -> dict[str, Any]:
        try:
            return json.loads((self.path(graph_id) / META_FILE).read_text())
        except FileNotFoundError:
            raise UnknownName(f"graph {graph_id!r} does not exist", field="graph_id") from None

    def list(self) -> list[dict[str, Any]]:
        metas = []
        for folder in self.graphs_dir.iterdir():
            try:
                metas.append(json.loads((folder / META_FILE).read_text()))
            except (FileNotFoundError, NotADirectoryError):
                continue
        return sorted(metas, key=lambda meta: meta["created_at"])

    def load(self, graph_id: str, *, mmap: bool = True) -> Graph:
        """Load a stored graph, memory-mapped (copy-on-write) unless ``mmap`` is False."""
        folder = self.path(graph_id)
        if not self.exists(graph_id):
            raise UnknownName(f"graph {graph_id!r} does not exist", field="graph_id")
        # Copy-on-write maps: the stored files can never change, yet the arrays type as
        # writeable in Numba, so jobs run the very kernels that worker warm-up (in-memory
        # graphs) compiled instead of compiling read-only variants on their first call.
        arrays = {
            stem: load_npy(folder / f"{stem}.npy", mode="c")
            for stem in ("indptr", "indices", "node_ids", "weights", "in_indptr", "in_indices",
                         "in_weights")
            if (folder / f"{stem}.npy").exists()
        }
        if not mmap:
            arrays = {stem: np.array(array) for stem, array in arrays.items()}
        return Graph(**arrays, graph_id=graph_id, directed="in_indptr" in arrays)

    def _kept(self, kept: OrderedDict[str, Any], graph_id: str, load: Callable[[], Any],
              most: int) -> Any:
        """``kept[graph_id]``, else ``load()`` kept there (the last ``most`` loaded stay): a
        graph's content never changes under its id."""
        with self._kept_lock:
            if graph_id in kept:
                kept.move_to_end(graph_id)
                return kept[graph_id]
        value = load()
        with self._kept_lock:
            kept[graph_id] = value
            while len(kept) > most:
                kept.popitem(last=False)
        return value

    def node_ids(self, graph_id: str) -> np.ndarray:
        """Original node ids of a stored graph (memory-mapped; the last
        :data:`NODE_ID_TABLES_KEPT` read stay open)."""
        return self._kept(self._node_ids, graph_id,
                          lambda: load_npy(self.path(graph_id) / "node_ids.npy"),
                          NODE_ID_TABLES_KEPT)

    def labels(self, graph_id: str) -> Labels | None:
        """A stored graph's node labels (memory-mapped), or None for a graph without. The last
        :data:`LABEL_TABLES_KEPT` tables read are kept (with their lookup index, once built)."""
        return self._kept(self._labels, graph_id, lambda: self._load_labels(graph_id),
                          LABEL_TABLES_KEPT)

    def _load_labels(self, graph_id: str) -> Labels | None:
        folder = self.path(graph_id)
        if not (folder / f"{OFFSETS_FILE}.npy").is_file():
            if not self.exists(graph_id):
                raise UnknownName(f"graph {graph_id!r} does not exist", field="graph_id")
            return None
        return Labels(load_npy(folder / f"{DATA_FILE}.npy"),
                      load_npy(folder / f"{OFFSETS_FILE}.npy"))

    def delete(self, graph_id: str) -> None:
        folder = self.path(graph_id)
        if not self.exists(graph_id):
            raise UnknownName(f"graph {graph_id!r} does not exist", field="graph_id")
        with self._kept_lock:
            self._labels.pop(graph_id, None)
            self._node_ids.pop(graph_id, None)
        # Rename first so readers stop seeing it at once, then remove at leisure.
        trash = self.tmp_dir / f"deleted.{graph_id}.{uuid.uuid4().hex}"
        os.rename(folder, trash)
        shutil.rmtree(trash, ignore_errors=True)
