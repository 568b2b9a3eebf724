"""GitHub's published REST description, as the double's contract with the app.

The cut in `tests/data/github-openapi.json` (made by `scripts/cut_openapi.py`) lists the operations
the app may call. Every request is matched to one of them and checked the way GitHub would check
it (path template, required parameters, query and JSON body against the operation's schemas);
every 2xx answer the double gives is checked against GitHub's response schema, so a mistake in
the double shows up as loudly as a mistake in the app.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from jsonschema import Draft7Validator

SPEC_PATH = Path(__file__).resolve().parent.parent.parent / "data" / "github-openapi.json"


def openapi_to_json_schema(schema: Any) -> Any:
    """OpenAPI 3.0 `nullable: true` means "or null"; JSON Schema has no such keyword."""
    if isinstance(schema, list):
        return [openapi_to_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: openapi_to_json_schema(value) for key, value in schema.items() if key != "nullable"}
    if schema.get("nullable") is True:
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


@dataclass(frozen=True)
class Parameter:
    name: str
    location: str  # path | query
    required: bool
    schema: dict


@dataclass
class Operation:
    operation_id: str
    method: str
    template: str
    parameters: list[Parameter]
    body_schema: dict | None
    body_required: bool
    response_schemas: dict[int, dict]
    components: dict = field(repr=False)
    pattern: re.Pattern = field(init=False, repr=False)
    _responses: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        multi = {p.name for p in self.parameters if p.location == "path" and p.schema.get("x-multi-segment")}
        regex = ""
        for literal, name in re.findall(r"([^{]*)(?:\{(\w+)\})?", self.template):
            regex += re.escape(literal)
            if name:
                regex += f"(?P<{name}>.+?)" if name in multi else f"(?P<{name}>[^/]+)"
        self.pattern = re.compile(f"^{regex}$")

    @property
    def route(self) -> str:
        """`METHOD /template`: how tests name a route for faults and counts."""
        return f"{self.method} {self.template}"

    @cached_property
    def literal_segments(self) -> int:
        return sum(1 for part in self.template.split("/") if part and "{" not in part)

    def _validator(self, schema: dict) -> Draft7Validator:
        # `$ref`s in GitHub's schemas point at #/components/..., so the root carries components.
        return Draft7Validator({"allOf": [schema], "components": self.components})

    @cached_property
    def body_validator(self) -> Draft7Validator | None:
        return self._validator(self.body_schema) if self.body_schema is not None else None

    def response_validator(self, status: int) -> Draft7Validator | None:
        if status not in self._responses:
            schema = self.response_schemas.get(status)
            self._responses[status] = self._validator(schema) if schema is not None else None
        return self._responses[status]


def _coerce(value: str, schema: dict) -> Any:
    """Query and path values arrive as text; the schema says what they stand for."""
    kind = schema.get("type")
    if kind == "integer":
        return int(value) if re.fullmatch(r"-?\d+", value) else value
    if kind == "boolean":
        return {"true": True, "false": False}.get(value, value)
    return value


def _describe(errors: list, where: str) -> list[str]:
    out = []
    for error in errors:
        pointer = "".join(f"/{p}" for p in error.absolute_path)
        out.append(f"{where}{' ' + pointer if pointer else ''}: {error.message}")
    return out


class RestDescription:
    """The operations of the cut, matched by method and path like GitHub's router."""

    def __init__(self, path: Path = SPEC_PATH) -> None:
        doc = openapi_to_json_schema(json.loads(path.read_text()))
        self.version = doc["info"]["version"]
        components = doc.get("components", {})
        self.operations: list[Operation] = []
        for template, item in doc["paths"].items():
            for method, op in item.items():
                body = op.get("requestBody")
                self.operations.append(Operation(
                    operation_id=op["operationId"],
                    method=method.upper(),
                    template=template,
                    parameters=[Parameter(p["name"], p["in"], bool(p.get("required")),
                                          {**p.get("schema", {}), **({"x-multi-segment": True} if p.get("x-multi-segment") else {})})
                                for p in op.get("parameters", [])],
                    body_schema=body["content"]["application/json"]["schema"] if body else None,
                    body_required=bool(body and body.get("required")),
                    response_schemas={int(code): r["content"]["application/json"]["schema"]
                                      for code, r in op.get("responses", {}).items() if "content" in r},
                    components=components,
                ))
        self.by_route = {op.route: op for op in self.operations}

    def match(self, method: str, raw_path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation for a request and its path parameters (percent-decoded), or None."""
        found = []
        for op in self.operations:
            if op.method != method:
                continue
            m = op.pattern.match(raw_path)
            if m:
                found.append((op.literal_segments, op, {k: unquote(v) for k, v in m.groupdict().items()}))
        if not found:
            return None
        found.sort(key=lambda item: -item[0])
        return found[0][1], found[0][2]

    def check_request(self, op: Operation, path_params: dict[str, str], query: dict[str, list[str]],
                      body: bytes, content_type: str) -> tuple[dict[str, Any], Any, list[str]]:
        """Validate one request: returns (typed parameters, decoded body, problems)."""
        problems: list[str] = []
        params: dict[str, Any] = {}
        declared = {p.name: p for p in op.parameters}
        for name in query:
            if name not in declared or declared[name].location != "query":
                problems.append(f"query parameter {name!r} is not a parameter of {op.operation_id}")
        for p in op.parameters:
            raw = path_params.get(p.name) if p.location == "path" else (query.get(p.name) or [None])[-1]
            if raw is None:
                if p.required:
                    problems.append(f"{p.location} parameter {p.name!r} is required")
                continue
            value = _coerce(raw, p.schema)
            schema = {k: v for k, v in p.schema.items() if not k.startswith("x-")}
            problems += _describe(list(Draft7Validator(schema).iter_errors(value)), f"{p.location} parameter {p.name!r}")
            params[p.name] = value
        data: Any = None
        if body:
            if op.body_schema is None:
                problems.append(f"{op.operation_id} takes no request body")
            elif not content_type.startswith("application/json"):
                problems.append(f"request body must be application/json, not {content_type!r}")
            else:
                try:
                    data = json.loads(body)
                except ValueError as exc:
                    problems.append(f"request body is not JSON: {exc}")
                else:
                    problems += _describe(sorted(op.body_validator.iter_errors(data), key=str), "body")
        elif op.body_required:
            problems.append(f"{op.operation_id} requires a JSON request body")
        return params, data, problems

    def check_response(self, op: Operation, status: int, data: Any) -> list[str]:
        validator = op.response_validator(status)
        if validator is None:
            return []
        return _describe(list(validator.iter_errors(data))[:20], f"response {status} of {op.operation_id}")
