"""The one registry of algorithms and graph generators.

An algorithm is declared once, in its family's module, with :func:`register_algorithm`: its name,
pydantic parameter model, result summary model and its CPU and GPU functions. The API validates
requests and publishes schemas from here, the worker runs from here, the CLI and docs list it.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel

from graphgpu.kernels.core import device
from graphgpu.kernels.core.errors import InvalidInput, UnknownName
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.settings import get_settings

Backend = Literal["cpu", "gpu"]
DirectedRule = Literal["refuse", "symmetrise", "native"]
BACKENDS: tuple[Backend, ...] = ("cpu", "gpu")

#: Package whose sub-packages are the algorithm families (each registers itself on import).
ALGORITHMS_PACKAGE = "graphgpu.kernels.algorithms"
#: Module that registers the graph generators.
GENERATORS_MODULE = "graphgpu.kernels.generators"
#: Sub-package of :data:`ALGORITHMS_PACKAGE` with shared building blocks, not a family.
COMMON = "common"


class ProgressFn(Protocol):
    """Called by kernels as they go; may raise
    :class:`~graphgpu.kernels.core.errors.JobCanceled`."""

    def __call__(self, fraction: float, message: str = "") -> None: ...


def no_progress(fraction: float, message: str = "") -> None:
    """A :class:`ProgressFn` that ignores reports (direct library use, tests)."""


def progress_part(progress: ProgressFn, low: float, high: float) -> ProgressFn:
    """``progress`` for a step of a job that fills ``low``..``high`` of its bar."""
    return lambda fraction, message="": progress(low + (high - low) * fraction, message)


@dataclass
class AlgorithmResult:
    """What an algorithm returns, in internal node ids.

    A GPU backend leaves its arrays on the device (CuPy): the worker translates node ids
    there, narrows them and copies each array once into pinned host memory, from which the
    result is written (``workers/tasks.py``); callers that compare or index the arrays on the
    host take :meth:`host`.

    Attributes
    ----------
    summary : dict
        JSON-ready scalars and small lists; validated against the algorithm's result model.
    node_values : dict of str to array
        Arrays of length n, one value per internal node (NumPy, or CuPy from a GPU backend).
    arrays : dict of str to array
        Other arrays (component sizes, member lists, ...).
    node_id_fields : tuple of str
        Names in ``node_values`` or ``arrays`` whose values are internal node ids (``-1`` = none);
        the worker translates them to original ids.
    """

    summary: dict[str, Any]
    node_values: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, Any] = field(default_factory=dict)
    node_id_fields: tuple[str, ...] = ()

    def host(self) -> AlgorithmResult:
        """This result with every array a NumPy array (device arrays copied to the host)."""
        return dataclasses.replace(self, node_values=device.to_host(self.node_values),
                                   arrays=device.to_host(self.arrays))


AlgorithmFn = Callable[[Graph, Any, ProgressFn], AlgorithmResult]

#: ``json_schema_extra`` of a result-model field that varies from run to run (a timing) or with
#: the backend that ran it (a device), so it is left out when the backends' answers are compared
#: (:func:`comparable_summary`).
VOLATILE: dict[str, Any] = {"volatile": True}


def comparable_summary(result_model: type[BaseModel], summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` without the fields that ``result_model`` marks :data:`VOLATILE`."""
    fields = result_model.model_fields
    return {key: value for key, value in summary.items()
            if key not in fields or fields[key].json_schema_extra != VOLATILE}


#: ``json_schema_extra`` of a result-model field whose value is an original node id (or a list
#: of them; null = none), as :attr:`AlgorithmResult.node_id_fields` marks arrays: the API names
#: the node by its label on a labelled graph (:func:`node_id_summary_fields`).
NODE_ID_VALUE: dict[str, Any] = {"node_id": True}


def node_id_summary_fields(result_model: type[BaseModel]) -> frozenset[str]:
    """The fields of ``result_model`` marked :data:`NODE_ID_VALUE`."""
    return frozenset(key for key, info in result_model.model_fields.items()
                     if info.json_schema_extra == NODE_ID_VALUE)


@dataclass(frozen=True)
class Estimate:
    """What a job will cost, worked out before it is queued; ``None`` = not estimated.

    The API refuses a job whose estimate passes a limit (``result_bytes`` over
    ``max_result_bytes``: 413; ``seconds`` over ``max_job_seconds``: 422) and records the
    estimate in the job otherwise.

    Attributes
    ----------
    seconds : float or None
        Expected compute time on the backend that will run it.
    result_bytes : int or None
        Size of the result files.
    device_bytes : int or None
        Device (GPU) memory the GPU backend needs at its peak.
    host_bytes : int or None
        Host memory the job needs at its peak (an upper bound; generators: see
        ``kernels/generators/estimates.py``).
    detail : str
        How it was estimated, for people (e.g. "sampled 64 of 5,242 roots").
    """

    seconds: float | None = None
    result_bytes: int | None = None
    device_bytes: int | None = None
    host_bytes: int | None = None
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


EstimateFn = Callable[[Graph, Any, Backend], Estimate]
#: Splits a job into shard jobs (one params dict each), or None to run it whole.
ShardFn = Callable[[Any], list[dict[str, Any]] | None]
#: Merges the shards' summaries (None for a shard that did not succeed) into the job's summary;
#: returns the index of the shard whose result arrays the job keeps, and that summary.
MergeFn = Callable[[Any, list[dict[str, Any] | None]], tuple[int, dict[str, Any]]]


class Exchange(Protocol):
    """Shares a shard's best answer with the other shards of its job while they run (the
    migration between the islands of a distributed search): posts ``(objective, nodes)`` and
    returns the latest one each other shard has posted (internal node ids)."""

    def __call__(self, objective: int, nodes: np.ndarray) -> list[tuple[int, np.ndarray]]: ...


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm.

    Attributes
    ----------
    name : str
    summary : str
        One line for listings and docs.
    params_model : type[BaseModel]
        Validates the request's ``params``; its JSON schema is published.
    result_model : type[BaseModel]
        Schema of :attr:`AlgorithmResult.summary`.
    cpu, gpu : AlgorithmFn
        Same signature, same answer.
    node_params : tuple of str
        Parameters that name nodes by original id (checked against the graph before queueing).
    estimate : EstimateFn or None
        Cost of a run before it is queued (``estimate(graph, params, backend)``), for algorithms
        whose time or result size can pass a limit; cheap (sampling, closed forms), never a run.
    shards : ShardFn or None
        For algorithms that can run as independent queue jobs: ``shards(params)`` gives each
        shard's params (run as this algorithm), or None to run the job whole. The worker fans
        the shards out and a reduce job calls ``merge`` (``workers/fanout.py``).
    merge : MergeFn or None
        Required with ``shards``; may raise :class:`~graphgpu.kernels.core.errors.KernelError` (the
        job fails).
    migrates : bool
        With ``shards``: when run as a shard, both functions are also given
        ``exchange=`` (an :class:`Exchange` over the job's shards); run whole, nothing.
    directed : {"refuse", "symmetrise", "native"}
        What the algorithm does on a directed graph (:func:`graph_view`): ``native`` runs on it
        (out-CSR in ``indptr``/``indices``, in-CSR in ``in_*``); ``symmetrise`` runs on
        :meth:`Graph.undirected` (the job records ``graph_view: "symmetrised"``); ``refuse``
        (the API answers 422 naming ``directed``).
    warm_up : callable or None
        ``warm_up(backend)``, run by worker warm-up after the documented examples (which run on a
        64-node ring): runs the kernels those do not reach (e.g. searches that need cliques), so
        that no job compiles them.
    warm_up_parts : tuple of str
        Names of independent parts of ``warm_up``, each run alone as ``warm_up(backend, part)``
        (a first start on a machine of many cores compiles them in separate processes).
    warm_up_split : tuple of str
        The backends on which those parts compile apart; on the others the hook runs whole in
        one share. A part apart compiles again whatever code it shares with the others
        (count_cliques' CPU search is the same code at every clique size: its four parts
        apart took 14.6 s of work on the 2-core VM, whole 3.8 s).
    """

    name: str
    summary: str
    params_model: type[BaseModel]
    result_model: type[BaseModel]
    cpu: AlgorithmFn
    gpu: AlgorithmFn
    node_params: tuple[str, ...] = ()
    estimate: EstimateFn | None = None
    shards: ShardFn | None = None
    merge: MergeFn | None = None
    migrates: bool = False
    directed: DirectedRule = "refuse"
    warm_up: Callable[..., None] | None = None
    warm_up_parts: tuple[str, ...] = ()
    warm_up_split: tuple[Backend, ...] = ("cpu", "gpu")

    def function(self, backend: Backend) -> AlgorithmFn:
        return self.cpu if backend == "cpu" else self.gpu


def view_name(algorithm: Algorithm, directed: bool) -> str:
    """The rule of :func:`graph_view` on a graph's ``directed`` flag alone (the API checks it
    from the graph's metadata, before a job is queued).

    Returns
    -------
    str
        ``undirected``, ``directed`` or ``symmetrised``.

    Raises
    ------
    InvalidInput
        A directed graph and an algorithm that refuses them (``field="directed"``).
    """
    if not directed:
        return "undirected"
    if algorithm.directed == "native":
        return "directed"
    if algorithm.directed == "symmetrise":
        return "symmetrised"
    raise InvalidInput(f"{algorithm.name} does not run on directed graphs; upload the graph "
                       "without directed=true", field="directed", code="directed_graph")


def graph_view(algorithm: Algorithm, graph: Graph) -> tuple[Graph, str]:
    """The graph ``algorithm`` runs on, and that view's name for job records.

    Returns
    -------
    graph : Graph
        ``graph`` itself, or its symmetrised view for a ``symmetrise`` algorithm on a directed
        graph.
    view : str
        ``undirected``, ``directed`` or ``symmetrised`` (:func:`view_name`).

    Raises
    ------
    InvalidInput
        A directed graph and an algorithm that refuses them (``field="directed"``).
    """
    view = view_name(algorithm, graph.directed)
    return (graph.undirected() if view == "symmetrised" else graph), view


@dataclass(frozen=True)
class EdgeSet:
    """Edges produced by a generator, before normalisation (see ``build_graph``)."""

    src: np.ndarray
    dst: np.ndarray
    num_nodes: int


GeneratorFn = Callable[[Any, ProgressFn], EdgeSet]


@dataclass(frozen=True)
class Generator:
    """A registered graph generator; ``gpu`` is None when only the CPU version exists."""

    name: str
    summary: str
    params_model: type[BaseModel]
    cpu: GeneratorFn
    gpu: GeneratorFn | None = None
    gpu_threshold_edges: int | None = None
    #: Host (and device) memory of a run from its params, checked before queueing.
    estimate: Callable[[Any, Backend], Estimate] | None = None

    def function(self, backend: Backend) -> GeneratorFn:
        if backend == "gpu" and self.gpu is not None:
            return self.gpu
        return self.cpu


_ALGORITHMS: dict[str, Algorithm] = {}
_GENERATORS: dict[str, Generator] = {}
_loaded = False


def register_algorithm(algorithm: Algorithm) -> Algorithm:
    """Add an algorithm to the registry (called at import of its family module)."""
    if algorithm.name in _ALGORITHMS and _ALGORITHMS[algorithm.name] is not algorithm:
        raise ValueError(f"algorithm {algorithm.name!r} registered twice")
    _ALGORITHMS[algorithm.name] = algorithm
    return algorithm


def register_generator(generator: Generator) -> Generator:
    """Add a graph generator to the registry."""
    if generator.name in _GENERATORS and _GENERATORS[generator.name] is not generator:
        raise ValueError(f"generator {generator.name!r} registered twice")
    _GENERATORS[generator.name] = generator
    return generator


def builtin_modules() -> list[str]:
    """The generators module and every family package under :data:`ALGORITHMS_PACKAGE`.

    Families are found by walking the package, so adding one is adding its folder.
    """
    package = importlib.import_module(ALGORITHMS_PACKAGE)
    families = sorted(info.name for info in pkgutil.iter_modules(package.__path__)
                      if info.ispkg and info.name != COMMON)
    return [GENERATORS_MODULE, *(f"{ALGORITHMS_PACKAGE}.{name}" for name in families)]


def _load() -> None:
    global _loaded
    if _loaded:
        return
    for module in (*builtin_modules(), *get_settings().extra_algorithm_modules):
        importlib.import_module(module)
    _loaded = True


def algorithms() -> dict[str, Algorithm]:
    """Every registered algorithm, by name."""
    _load()
    return dict(_ALGORITHMS)


def generators() -> dict[str, Generator]:
    """Every registered generator, by name."""
    _load()
    return dict(_GENERATORS)


def _named(table: dict[str, Any], name: str, kind: str) -> Any:
    """``table[name]``, or :class:`UnknownName` with the closest names ("did you mean") and
    the known ones (``field=kind``)."""
    try:
        return table[name]
    except KeyError:
        known = ", ".join(sorted(table))
        close = difflib.get_close_matches(name, table, n=3)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise UnknownName(f"unknown {kind} {name!r}{hint}; known: {known}",
                          field=kind) from None


def get_algorithm(name: str) -> Algorithm:
    return _named(algorithms(), name, "algorithm")


def get_generator(name: str) -> Generator:
    return _named(generators(), name, "generator")
