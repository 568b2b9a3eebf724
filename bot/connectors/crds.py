"""Shapes → Kubernetes CustomResourceDefinitions (`apiextensions.k8s.io/v1`), for `reviewer crds`.

A CRD's schema must be *structural* (every node typed, no `$ref`, no `additionalProperties:
false`, no `const`), which JSON Schema 2020-12 is not; so this walks the shapes themselves rather
than converting the published JSON Schema. Unknown fields are pruned by the API server, which is
the Kubernetes way of refusing them. Values of several types become `x-kubernetes-int-or-string`
(`force_authn`, durations) or, for anything else, `x-kubernetes-preserve-unknown-fields`.
"""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML

from bot.connectors.kinds import GROUP, KINDS, ConnectorKind
from bot.connectors.structure import shape_of
from bot.shapes import AnyOf, AnyValue, Arr, Bool, Int, Obj, Shape, Str
from bot.shapes.export import scalar_keywords

# Keywords of a Check's exported schema that a structural schema may carry.
_CHECK_KEYWORDS = ("format", "enum", "pattern", "not")


def to_openapi_v3(shape: Shape) -> dict[str, Any]:
    """A structural OpenAPI v3 schema of `shape`, named shapes inlined."""
    out: dict[str, Any] = scalar_keywords(shape)
    out.pop("exclusiveMinimum", None)  # a structural schema takes minimum/maximum only
    if isinstance(shape, Arr):
        out["items"] = to_openapi_v3(shape.items)
    if isinstance(shape, Obj):
        out["type"] = "object"
        if shape.properties:
            out["properties"] = {key: to_openapi_v3(value) for key, value in shape.properties.items()}
        if shape.required:
            out["required"] = list(shape.required)
        if shape.values is not None:
            out["additionalProperties"] = to_openapi_v3(shape.values)
    elif isinstance(shape, AnyOf):
        out.update(_any_of(shape))
    elif isinstance(shape, AnyValue):
        out["x-kubernetes-preserve-unknown-fields"] = True
    for check in shape.checks:
        for key, value in (check.schema or {}).items():
            if key == "const":
                out["enum"] = [value]
            elif key in _CHECK_KEYWORDS:
                out[key] = value
    out.setdefault("description", shape.description or None)
    if out["description"] is None:
        del out["description"]
    return out


def _any_of(shape: AnyOf) -> dict[str, Any]:
    kinds = {type(option) for option in shape.options}
    if kinds <= {Int, Str, Bool}:
        # Kubernetes has no string-or-integer-or-boolean; a boolean `force_authn` is taken by the
        # service's own API, while in a cluster it is written as `yes`/`no`.
        note = " In Kubernetes write a boolean as the string yes or no." if Bool in kinds else ""
        return {"x-kubernetes-int-or-string": True, "description": shape.description + note}
    return {"x-kubernetes-preserve-unknown-fields": True}


def crd(kind: ConnectorKind) -> dict[str, Any]:
    shape = shape_of(kind)
    assert isinstance(shape, Obj)
    root = {
        "type": "object",
        "description": shape.description,
        "properties": {
            "apiVersion": {"type": "string", "description": "Versioned schema of the representation."},
            "kind": {"type": "string", "description": f"Always {kind.kind}."},
            "metadata": {"type": "object"},  # the API server validates metadata itself
            "spec": to_openapi_v3(shape.properties["spec"]),
            "status": to_openapi_v3(shape.properties["status"]),
        },
        "required": ["spec"],
    }
    versions = [{
        "name": version,
        "served": True,
        "storage": version == kind.version,
        **({"deprecated": True, "deprecationWarning": f"{GROUP}/{version} {kind.kind} is stored as "
                                                      f"{kind.api_version}; write {kind.api_version}"}
           if version != kind.version else {}),
        "subresources": {"status": {}},
        "additionalPrinterColumns": [
            {"name": "Reconciled", "type": "string",
             "jsonPath": '.status.conditions[?(@.type=="SuccessfullyReconciled")].status'},
            {"name": "Reason", "type": "string",
             "jsonPath": '.status.conditions[?(@.type=="SuccessfullyReconciled")].reason'},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ],
        "schema": {"openAPIV3Schema": root},
    } for version in kind.accepted_versions]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind.kind, "listKind": kind.list_kind, "plural": kind.plural,
                      "singular": kind.singular},
            "scope": "Namespaced",
            "versions": versions,
        },
    }


def crds_yaml() -> str:
    """Both CRDs as one multi-document YAML stream."""
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    # keep the Kubernetes field order; ruamel declares the attribute `= None` but reads it as a flag
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 4096
    yaml.representer.ignore_aliases = lambda _data: True  # shared parts are written out, never `&id001`
    out = io.StringIO()
    yaml.dump_all([crd(kind) for kind in KINDS], out)
    return out.getvalue()
