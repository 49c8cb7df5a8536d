"""A job's result on its way out: the arrays the worker writes (identity ids left out, node ids
narrowed, GPU arrays copied once), the folder's round trip, and what users read back."""

from __future__ import annotations

import io
import uuid

import numpy as np
import pytest

from graphgpu.kernels.algorithms.traversal import BfsParams
from graphgpu.kernels.algorithms.traversal.cpu import bfs as bfs_cpu
from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import UnknownName
from graphgpu.kernels.core.graph import build_graph
from graphgpu.kernels.core.registry import AlgorithmResult, no_progress
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.workers import tasks
from graphgpu.workers.context import WorkerContext
from graphgpu.workers.tasks import result_arrays
from tests.conftest import Stack


def _graph(ids: list[int]):
    """A path through ``ids`` in order, plus an isolated last id."""
    graph, _ = build_graph(np.array(ids[:-2]), np.array(ids[1:-1]), extra_nodes=np.array(ids))
    return graph


def _result(node_ids: np.ndarray) -> AlgorithmResult:
    """Internal ids 1, -1, 0, ... in a node-id field and in an array, beside other values."""
    n = node_ids.shape[0]
    parent = np.where(np.arange(n) % 2 == 0, np.arange(n) - 1, -1).astype(np.int64)
    return AlgorithmResult(summary={}, node_values={"parent": parent,
                                                    "level": np.arange(n, dtype=np.int32)},
                           arrays={"members": np.array([n - 1, 0], dtype=np.int64)},
                           node_id_fields=("parent", "members"))


def _expected(node_ids: np.ndarray, internal: np.ndarray) -> np.ndarray:
    return np.where(internal >= 0, node_ids[np.maximum(internal, 0)], -1)


@pytest.mark.parametrize("ids, identity, dtype", [
    (list(range(7)), True, np.int32),          # 0..n-1: nothing to translate, no node_id file
    ([3, 8, 20, 21, 40, 41, 99], False, np.int32),
    ([0, 1, 2, 5, 2**40, 2**40 + 1, 2**41], False, np.int64),  # ids past int32 stay int64
])
def test_result_arrays_translate_and_narrow(ids: list[int], identity: bool,
                                            dtype: type) -> None:
    graph = _graph(ids)
    result = _result(graph.node_ids)
    arrays, is_identity = result_arrays(graph, result)
    assert is_identity == identity
    assert ("node_id" in arrays) == (not identity)
    if not identity:
        np.testing.assert_array_equal(arrays["node_id"], ids)
    for name in ("parent", "members"):
        values = {**result.node_values, **result.arrays}[name]
        assert arrays[name].dtype == dtype, name
        np.testing.assert_array_equal(arrays[name], _expected(graph.node_ids, values))
    assert arrays["level"] is result.node_values["level"]  # not a node-id field: as it was


def test_write_result_round_trip(tmp_path) -> None:
    """Arrays over several write chunks, empty, 2-D, boolean and strided come back exactly;
    identity node ids are not written and read back as int64 0..n-1."""
    settings = Settings(data_dir=tmp_path)
    rng = np.random.default_rng(0)
    big = rng.integers(-5, 2**40, size=protocol.PARALLEL_WRITE_BYTES // 8 + 123)
    arrays = {"big": big, "empty": np.zeros(0, np.int32), "matrix": rng.random((5, 3)),
              "flags": rng.random(11) < 0.5, "strided": np.arange(20, dtype=np.int16)[::3]}
    manifest = protocol.ResultManifest(summary={"x": 1}, n=11, node_values=["flags"],
                                       arrays=["big", "empty", "matrix", "strided"],
                                       identity_ids=True)
    assert manifest.files() == ["flags", "big", "empty", "matrix", "strided"]
    assert manifest.names() == ["node_id", *manifest.files()]
    job_id = uuid.uuid4().hex
    protocol.write_result(settings, job_id, manifest, arrays)
    folder = protocol.result_folder(settings, job_id)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [protocol.RESULT_MANIFEST, *(f"{name}.npy" for name in arrays)])
    assert protocol.read_manifest(settings, job_id) == manifest
    for name, array in arrays.items():
        back = protocol.read_array(folder, name)
        assert back.dtype == array.dtype and back.shape == array.shape
        np.testing.assert_array_equal(back, array)
        np.testing.assert_array_equal(np.load(folder / f"{name}.npy"), array)
    ids = protocol.read_array(folder, "node_id")
    assert ids.dtype == np.int64
    np.testing.assert_array_equal(ids, np.arange(11))
    with pytest.raises(OSError):
        protocol.read_array(folder, "nope")


def test_stored_graphs_stay_open_until_deleted(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path)
    store = GraphStore(settings.graphs_dir, settings.tmp_dir)
    ctx = WorkerContext(settings=settings, redis=None, graphs=store, name="w", backend="cpu",
                        device="cpu")
    graph, report = build_graph(np.array([1, 5, 9]), np.array([5, 9, 12]))
    meta, _ = store.put(graph, name="g", source={"format": "test"}, report=report)
    first = tasks.load_graph(ctx, meta["id"])
    assert tasks.load_graph(ctx, meta["id"]) is first
    np.testing.assert_array_equal(first.node_ids, graph.node_ids)
    store.delete(meta["id"])
    with pytest.raises(UnknownName):
        tasks.load_graph(ctx, meta["id"])


def test_identity_ids_read_back_as_before(stack: Stack) -> None:
    """A graph on ids 0..n-1: every format shows what a result with a node_id file showed
    (the parent field's npy now int32)."""
    graph = stack.upload("0 1\n1 2\n2 3\n3 4\n5 6\n", name="identity")
    job = stack.wait_job(stack.submit(graph["id"], "bfs", {"source": 1}).json()["id"])
    assert job["status"] == "succeeded", job
    result = stack.http.get(job["result_url"]).json()
    assert result["node_values"]["level"] == {"0": 1, "1": 0, "2": 1, "3": 2, "4": 3,
                                              "5": -1, "6": -1}
    assert result["node_values"]["parent"] == {"0": 1, "1": 1, "2": 1, "3": 2, "4": 3,
                                               "5": -1, "6": -1}
    csv = stack.http.get(job["result_url"], params={"format": "csv"}).text.splitlines()
    assert csv[:3] == ["node_id,level,parent", "0,1,1", "1,0,1"] and csv[-1] == "6,-1,-1"

    def npy(field: str) -> np.ndarray:
        response = stack.http.get(job["result_url"], params={"format": "npy", "field": field})
        assert response.status_code == 200
        assert f"{job['id']}.{field}.npy" in response.headers["content-disposition"]
        return np.load(io.BytesIO(response.content), allow_pickle=False)

    ids, parent = npy("node_id"), npy("parent")
    assert ids.dtype == np.int64 and ids.tolist() == list(range(7))
    assert parent.dtype == np.int32 and parent.tolist() == [1, 1, 1, 2, 3, -1, -1]


# GPU (device machine only: python3 -m pytest -m gpu)

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("ids", [list(range(7)), [3, 8, 20, 21, 40, 41, 99],
                                 [0, 1, 2, 5, 2**40, 2**40 + 1, 2**41]])
def test_result_arrays_from_the_device(ids: list[int]) -> None:
    """Device arrays are translated and narrowed on the device and copied to pinned host
    memory: the same arrays, dtypes included, as from host arrays."""
    from graphgpu.kernels.core.device import cupy

    cp = cupy()
    graph = _graph(ids)
    host = _result(graph.node_ids)
    on_device = AlgorithmResult(
        summary={}, node_values={k: cp.asarray(v) for k, v in host.node_values.items()},
        arrays={k: cp.asarray(v) for k, v in host.arrays.items()},
        node_id_fields=host.node_id_fields)
    expected, identity = result_arrays(graph, host)
    got, same_identity = result_arrays(graph, on_device)
    assert same_identity == identity and got.keys() == expected.keys()
    for name, array in expected.items():
        assert isinstance(got[name], np.ndarray)
        assert got[name].dtype == array.dtype, name
        np.testing.assert_array_equal(got[name], array, err_msg=name)
    back = on_device.host()
    for name, array in {**host.node_values, **host.arrays}.items():
        np.testing.assert_array_equal({**back.node_values, **back.arrays}[name], array)


@pytest.mark.gpu
@needs_gpu
def test_gpu_bfs_writes_what_cpu_bfs_writes(tmp_path) -> None:
    """The traversal family leaves its GPU arrays on the device; the worker's arrays from them
    equal the CPU backend's (a graph whose ids are not 0..n-1, so parents are translated)."""
    from graphgpu.kernels.algorithms.traversal.gpu import bfs as bfs_gpu

    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 5000, 20_000) * 3 + 7, rng.integers(0, 5000, 20_000) * 3 + 7
    graph, _ = build_graph(src, dst)
    params = BfsParams(source=int(graph.node_ids[10]))
    gpu = bfs_gpu(graph, params, no_progress)
    assert not isinstance(gpu.node_values["parent"], np.ndarray)  # left on the device
    cpu_arrays, _ = result_arrays(graph, bfs_cpu(graph, params, no_progress))
    gpu_arrays, _ = result_arrays(graph, gpu)
    assert gpu_arrays.keys() == cpu_arrays.keys()
    for name, array in cpu_arrays.items():
        assert gpu_arrays[name].dtype == array.dtype
        np.testing.assert_array_equal(gpu_arrays[name], array, err_msg=name)


@pytest.mark.gpu
@needs_gpu
def test_staging_buffer_holds_each_result_whole() -> None:
    """Arrays of mixed dtypes and sizes land in the pinned staging buffer intact, again after
    it grows; host arrays pass through untouched."""
    from graphgpu.kernels.core import device

    cp = device.cupy()
    host = np.arange(5)
    for scale in (1, 64):  # the second is larger than the buffer's first size
        arrays = {"flags": cp.arange(1001) % 3 == 0, "small": cp.arange(7, dtype=cp.int8),
                  "big": cp.arange(scale * 100_000, dtype=cp.float64) / 3,
                  "empty": cp.zeros(0, dtype=cp.int32), "grid": cp.arange(12).reshape(3, 4).T,
                  "host": host}
        out = device.to_host(arrays, staging=True)
        assert out["host"] is host
        for name, array in arrays.items():
            assert isinstance(out[name], np.ndarray) and out[name].dtype == array.dtype
            np.testing.assert_array_equal(out[name], cp.asnumpy(array), err_msg=name)
