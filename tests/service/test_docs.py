"""The README's algorithm table is the registry's (service/docs.py generates it)."""

from __future__ import annotations

from graphgpu.kernels.core.registry import algorithms
from graphgpu.service import docs
from tests.conftest import REPO


def test_readme_table_matches_the_registry() -> None:
    readme = (REPO / "README.md").read_text()
    assert docs.with_table(readme) == readme, (
        "README.md's algorithm table is stale: run `python -m graphgpu.service.docs`")


def test_table_lists_every_algorithm_with_its_params() -> None:
    table = docs.algorithm_table()
    for name, algorithm in docs.builtin_algorithms().items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{name}` |"))
        for param in algorithm.params_model.model_fields:
            assert f"`{param}" in row, (name, param)


def test_openapi_documents_each_algorithms_params(stack) -> None:
    spec = stack.http.get("/openapi.json").json()
    submit = spec["paths"]["/v1/jobs"]["post"]["requestBody"]["content"]["application/json"]
    mapping = submit["schema"]["discriminator"]["mapping"]
    assert set(mapping) == set(algorithms())
    schemas = spec["components"]["schemas"]
    bfs = schemas[mapping["bfs"].rsplit("/", 1)[1]]
    assert bfs["properties"]["algorithm"]["const"] == "bfs"
    params_ref = bfs["properties"]["params"]["$ref"].rsplit("/", 1)[1]
    assert "source" in schemas[params_ref]["properties"]
