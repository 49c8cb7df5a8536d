"""The OpenAPI document: each algorithm's params schema under ``POST /v1/jobs``, from the registry.

The route itself reads ``params`` as a free object and validates it against the named
algorithm's model (so an unknown algorithm gets our own error); the published schema is the
discriminated union on ``algorithm``, so /docs shows every algorithm's parameters.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from graphgpu.kernels.core.registry import Algorithm, algorithms
from graphgpu.service.schemas import JobRequest, RequestedBackend

#: Operation whose request body is the union.
SUBMIT_OPERATION = "jobs-submit"
REF_TEMPLATE = "#/components/schemas/{model}"


def request_model(algorithm: Algorithm) -> type[BaseModel]:
    """``JobRequest`` narrowed to one algorithm: its name as a constant, its params model."""
    return create_model(
        f"JobRequest_{algorithm.name}",
        __config__=ConfigDict(extra="forbid", title=f"{algorithm.name}: {algorithm.summary}"),
        graph_id=(str, ...),
        algorithm=(Literal[algorithm.name], ...),  # type: ignore[valid-type]
        params=(algorithm.params_model, Field(default_factory=algorithm.params_model)),
        backend=(RequestedBackend, "auto"),
    )


def job_request_schema() -> tuple[dict[str, Any], dict[str, Any]]:
    """The union's schema and the component schemas it refers to."""
    variants = tuple(request_model(a) for _, a in sorted(algorithms().items()))
    union = Annotated[Union[variants], Field(discriminator="algorithm")]  # noqa: UP007
    schema = TypeAdapter(union).json_schema(ref_template=REF_TEMPLATE)
    components = schema.pop("$defs", {})
    schema["description"] = JobRequest.__doc__ or "A job: an algorithm, its params, a graph."
    return schema, components


def install_openapi(app: FastAPI) -> None:
    """Make ``app.openapi()`` publish the per-algorithm request bodies (built on first use)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(title=app.title, version=app.version, routes=app.routes,
                               description=app.description)
            union, components = job_request_schema()
            spec.setdefault("components", {}).setdefault("schemas", {}).update(components)
            for path in spec["paths"].values():
                for operation in path.values():
                    if operation.get("operationId") == SUBMIT_OPERATION:
                        body = operation["requestBody"]["content"]["application/json"]
                        body["schema"] = union
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
