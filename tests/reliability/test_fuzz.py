"""Hostile input against the live API: schema-driven fuzzing and a corpus of malformed uploads.

The stack here has no worker, so whatever the fuzzer manages to queue just waits (and costs no
CPU); uploads are capped small so that generated bodies stay cheap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

# A dev dependency; the GPU machine's image lacks it (its gpu_check collects every module).
schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import status_code_conformance  # noqa: E402

from tests.conftest import Stack  # noqa: E402
from tests.reliability.corpus import Malformed, malformed_uploads  # noqa: E402

MAX_UPLOAD_BYTES = 1 << 20
MAX_DECOMPRESSED_BYTES = 1 << 20


@pytest.fixture(scope="module")
def api(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(redis_url, tmp_path_factory.mktemp("fuzz"),
                  max_upload_bytes=str(MAX_UPLOAD_BYTES),
                  max_decompressed_bytes=str(MAX_DECOMPRESSED_BYTES))
    stack.start_api()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def api_schema(api: Stack) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{api.base_url}/openapi.json")


def no_unplanned_server_error(ctx: schemathesis.CheckContext, response: schemathesis.Response,
                              case: schemathesis.Case) -> None:
    """A 5xx only where the operation documents it (the readiness probe's 503 with no worker)."""
    documented = case.operation.definition.raw.get("responses", {})
    if response.status_code >= 500 and str(response.status_code) not in documented:
        raise AssertionError(f"{response.status_code} from {case.operation.label}: "
                             f"{response.text[:500]}")


def test_every_operation_answers_within_its_schema(api_schema: schemathesis.BaseSchema) -> None:
    # One test over the operations of the live schema (schemathesis' lazy pytest loader does
    # not work with this pytest); valid and invalid requests, a bounded number of each.
    failures: dict[str, BaseException] = {}
    calls: Counter[str] = Counter()
    operations = [result.ok() for result in api_schema.get_all_operations()]
    for operation in operations:
        cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                          operation.as_strategy(GenerationMode.NEGATIVE))

        @given(cases)
        @settings(max_examples=25, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        def answers_within_schema(case: schemathesis.Case) -> None:
            calls[case.operation.label] += 1
            case.call_and_validate(checks=[no_unplanned_server_error, status_code_conformance],
                                   timeout=30)

        try:
            answers_within_schema()
        except (Exception, BaseExceptionGroup) as exc:  # report every operation that fails
            failures[operation.label] = exc
    assert set(calls) == {operation.label for operation in operations}  # every one exercised
    assert {"POST /v1/graphs", "POST /v1/jobs", "GET /v1/jobs/{job_id}"} <= set(calls)
    assert not failures, "\n\n".join(f"{label}: {exc}" for label, exc in failures.items())


def test_every_success_status_is_documented(api: Stack) -> None:
    # alternative successes that random requests reach only by luck
    responses = {op["operationId"]: set(op["responses"])
                 for path in api.http.get("/openapi.json").json()["paths"].values()
                 for op in path.values()}
    edges = b"100 200\n200 300\n"
    first, again = (api.http.post("/v1/graphs", content=edges) for _ in range(2))
    assert (first.status_code, again.status_code) == (201, 200)
    assert {"200", "201"} <= responses["graphs-upload"]
    body = {"graph_id": first.json()["id"], "algorithm": "bfs", "params": {"source": 100}}
    submits = [api.http.post("/v1/jobs", json=body, headers={"Idempotency-Key": "fuzz-once"})
               for _ in range(2)]
    assert [r.status_code for r in submits] == [202, 200]
    assert {"200", "202"} <= responses["jobs-submit"]


def _stored(api: Stack) -> tuple[list, list[Path]]:
    files = sorted(p for p in (api.data_dir / "graphs").rglob("*") if p.is_file())
    return api.http.get("/v1/graphs").json()["graphs"], files


CORPUS = malformed_uploads()


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 200
    assert len({case.name for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[case.name for case in CORPUS])
def test_malformed_upload_is_refused_and_stores_nothing(api: Stack, case: Malformed) -> None:
    before = _stored(api)
    response = api.http.post("/v1/graphs", content=case.body, params={"format": case.format},
                             headers={"content-type": "application/octet-stream"})
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    error = response.json()["error"]
    assert error["code"] and error["message"].strip()
    if case.line is not None:
        assert error.get("line") == case.line, error
    assert _stored(api) == before


def test_malformed_multipart_upload_is_refused(api: Stack) -> None:
    before = _stored(api)
    no_file = api.http.post("/v1/graphs", files={"other": ("g.txt", b"0 1\n")})
    assert no_file.status_code == 400 and no_file.json()["error"]["field"] == "file"
    bad_line = api.http.post("/v1/graphs", files={"file": ("g.txt", b"0 1\n1 -2\n")},
                             data={"format": "edgelist"})
    assert bad_line.status_code == 400 and bad_line.json()["error"]["line"] == 2
    wrong_type = api.http.post("/v1/graphs", content=b"0 1\n",
                               headers={"content-type": "image/png"})
    assert wrong_type.status_code == 415
    unknown = api.http.post("/v1/graphs", content=b"0 1\n", params={"format": "graphml"})
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "format"
    assert _stored(api) == before
