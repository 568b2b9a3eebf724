"""Cut the GitHub REST operations the app uses out of GitHub's published OpenAPI description.

GitHub publishes its REST description as the npm package `@octokit/openapi`. The GitHub double in
`tests/support/github_double/` checks every request the app makes against this cut (path template, required
parameters, query and JSON body schemas) and every answer it gives against the success response
schemas, so the double cannot drift from GitHub's shapes without a test noticing.

Run from the repository root (needs `npm`, which reaches the npm registry):

    .venv/bin/python scripts/cut_openapi.py                 # the pinned version
    .venv/bin/python scripts/cut_openapi.py --version 23.0.2
    .venv/bin/python scripts/cut_openapi.py --from-file path/to/api.github.com.json

It writes `tests/data/github-openapi.json`, still OpenAPI 3.0 (so `nullable` stays as GitHub wrote
it; the double translates it for JSON Schema). What is kept, per operation: method, path,
operationId, parameters and request body with every `$ref` resolved inline, and the 2xx response
schemas with their `$ref`s kept and the referenced component schemas copied alongside. Prose
(descriptions, examples, docs links) is dropped to keep the file small. To add an operation the
app needs, add its operationId to OPERATIONS and re-run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from npm_package import read_json_from_package, repo_root

PACKAGE = "@octokit/openapi"
PINNED_VERSION = "23.0.2"
MEMBER = "generated/api.github.com.json"  # api.github.com, not GHES: the app targets both, GitHub.com first
OUTPUT = Path("tests/data/github-openapi.json")

# operationId -> (method, path): the path is asserted so a renamed operation cannot slip by.
OPERATIONS: dict[str, tuple[str, str]] = {
    "apps/get-authenticated": ("get", "/app"),
    "apps/create-installation-access-token": ("post", "/app/installations/{installation_id}/access_tokens"),
    "apps/get-repo-installation": ("get", "/repos/{owner}/{repo}/installation"),
    # `reviewer setup`: the manifest flow's last step, turning GitHub's one-time code into the app's credentials
    "apps/create-from-manifest": ("post", "/app-manifests/{code}/conversions"),
    "repos/get": ("get", "/repos/{owner}/{repo}"),
    "repos/compare-commits-with-basehead": ("get", "/repos/{owner}/{repo}/compare/{basehead}"),
    "git/get-tree": ("get", "/repos/{owner}/{repo}/git/trees/{tree_sha}"),
    "repos/get-content": ("get", "/repos/{owner}/{repo}/contents/{path}"),
    "pulls/get": ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    "pulls/list-files": ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/files"),
    "pulls/list-review-comments": ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"),
    "pulls/list-reviews": ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    "pulls/create-review": ("post", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    "pulls/dismiss-review": ("put", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/dismissals"),
    "checks/create": ("post", "/repos/{owner}/{repo}/check-runs"),
    "checks/update": ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    "checks/list-for-ref": ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    # intent: the issues a pull request links, read for their text (docs/reviews.md "Linked issues")
    "issues/get": ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    "issues/list-comments": ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    "issues/create-comment": ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    "issues/update-comment": ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    "pulls/create-reply-for-review-comment": (
        "post", "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"),
    "repos/get-collaborator-permission-level": (
        "get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    # learnings: a 👎 on a finding comment is read at the next review (reactions are no webhook event)
    "reactions/list-for-pull-request-review-comment": (
        "get", "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"),
}

_PROSE = {"description", "example", "examples", "externalDocs", "summary", "deprecated", "discriminator"}
_SCHEMA_MAPS = {"properties", "patternProperties"}
_SCHEMA_LISTS = {"allOf", "anyOf", "oneOf"}
_SCHEMA_ONE = {"items", "additionalProperties", "not"}


def _lookup(doc: dict, ref: str) -> Any:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def clean_schema(schema: Any, doc: dict, *, inline: bool, refs: set[str], depth: int = 0) -> Any:
    """Drop prose from a schema; resolve `$ref`s inline, or keep them and collect their targets."""
    if depth > 60:
        raise SystemExit("schema nests deeper than 60 levels: a recursive $ref cannot be inlined")
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        if inline:
            return clean_schema(_lookup(doc, schema["$ref"]), doc, inline=True, refs=refs, depth=depth + 1)
        refs.add(schema["$ref"])
        return {"$ref": schema["$ref"]}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _PROSE or key.startswith("x-"):
            continue
        if key in _SCHEMA_MAPS:
            out[key] = {name: clean_schema(v, doc, inline=inline, refs=refs, depth=depth + 1) for name, v in value.items()}
        elif key in _SCHEMA_LISTS:
            out[key] = [clean_schema(v, doc, inline=inline, refs=refs, depth=depth + 1) for v in value]
        elif key in _SCHEMA_ONE:
            out[key] = clean_schema(value, doc, inline=inline, refs=refs, depth=depth + 1)
        else:
            out[key] = value
    return out


def cut_parameter(param: dict, doc: dict) -> dict:
    if "$ref" in param:
        param = _lookup(doc, param["$ref"])
    out = {k: param[k] for k in ("name", "in", "required") if k in param}
    if param.get("x-multi-segment"):
        out["x-multi-segment"] = True  # the value may span several path segments (`a/b/c.txt`)
    out["schema"] = clean_schema(param.get("schema", {}), doc, inline=True, refs=set())
    return out


def cut_operation(op: dict, shared_params: list, doc: dict, refs: set[str]) -> dict:
    out: dict[str, Any] = {"operationId": op["operationId"]}
    params = [cut_parameter(p, doc) for p in [*shared_params, *op.get("parameters", [])]]
    if params:
        out["parameters"] = params
    body = op.get("requestBody")
    if body is not None:
        if "$ref" in body:
            body = _lookup(doc, body["$ref"])
        media = body.get("content", {}).get("application/json")
        if media is None:
            raise SystemExit(f"{op['operationId']}: request body is not application/json")
        out["requestBody"] = {
            "required": bool(body.get("required")),
            "content": {"application/json": {"schema": clean_schema(media.get("schema", {}), doc, inline=True, refs=set())}},
        }
    responses: dict[str, Any] = {}
    for status, response in op["responses"].items():
        if not status.startswith("2"):
            continue
        if "$ref" in response:
            response = _lookup(doc, response["$ref"])
        cut: dict[str, Any] = {}
        media = response.get("content", {}).get("application/json")
        if media is not None and "schema" in media:
            cut["content"] = {"application/json": {"schema": clean_schema(media["schema"], doc, inline=False, refs=refs)}}
        responses[status] = cut
    out["responses"] = responses
    return out


def collect_components(doc: dict, refs: set[str]) -> dict[str, Any]:
    """Copy every component schema the kept responses reach, following `$ref`s transitively."""
    schemas: dict[str, Any] = {}
    pending = set(refs)
    while pending:
        ref = pending.pop()
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith("#/components/schemas/"):
            raise SystemExit(f"unexpected $ref outside components/schemas: {ref}")
        if name in schemas:
            continue
        found: set[str] = set()
        schemas[name] = clean_schema(_lookup(doc, ref), doc, inline=False, refs=found)
        pending |= {r for r in found if r.rsplit("/", 1)[-1] not in schemas}
    return dict(sorted(schemas.items()))


def cut(doc: dict, version: str) -> dict:
    paths: dict[str, dict] = {}
    refs: set[str] = set()
    for op_id, (method, path) in OPERATIONS.items():
        item = doc["paths"].get(path, {})
        op = item.get(method)
        if not isinstance(op, dict) or op.get("operationId") != op_id:
            raise SystemExit(f"{op_id}: not found as {method.upper()} {path} in {PACKAGE}@{version}")
        paths.setdefault(path, {})[method] = cut_operation(op, item.get("parameters", []), doc, refs)
    return {
        "openapi": doc["openapi"],
        "info": {
            "title": "GitHub REST API: the operations Reviewer uses",
            "version": doc["info"]["version"],
            "x-source": f"{PACKAGE}@{version} {MEMBER}",
            "x-cut-by": "scripts/cut_openapi.py",
        },
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": collect_components(doc, refs)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=PINNED_VERSION, help=f"{PACKAGE} version (default {PINNED_VERSION})")
    parser.add_argument("--from-file", type=Path, help="an already downloaded api.github.com.json")
    args = parser.parse_args()
    doc = json.loads(args.from_file.read_text()) if args.from_file else read_json_from_package(PACKAGE, args.version, MEMBER)
    out = repo_root() / OUTPUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(cut(doc, args.version), indent=1, sort_keys=False) + "\n")
    print(f"wrote {OUTPUT} ({out.stat().st_size:,} bytes, {len(OPERATIONS)} operations)")


if __name__ == "__main__":
    main()
