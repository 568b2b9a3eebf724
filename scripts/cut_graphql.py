"""Cut the part of GitHub's GraphQL schema the app uses out of GitHub's published schema.

GitHub publishes its GraphQL schema as the npm package `@octokit/graphql-schema` (`schema.graphql`,
the SDL). The GitHub double in `tests/support/github_double/` validates every GraphQL request the
app makes against this cut, and answers it from the review comments it stores, so a query the real
GitHub would refuse (a field it does not have, an argument of the wrong type) fails the test.

Run from the repository root (needs `npm`, which reaches the npm registry):

    .venv/bin/python scripts/cut_graphql.py                   # the pinned version
    .venv/bin/python scripts/cut_graphql.py --from-file path/to/schema.graphql

It writes `tests/data/github-graphql.graphql`: the types and fields in KEEP, exactly as GitHub
declares them (arguments, defaults, nullability), descriptions dropped, and every type their
fields and arguments name (an input object, an enum, a scalar) whole. An interface is kept among
a type's `implements` only when the cut keeps it. To use another field, add it to KEEP and re-run.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
from pathlib import Path

from graphql import parse, print_ast
from graphql.language import (
    DocumentNode,
    EnumTypeDefinitionNode,
    InputObjectTypeDefinitionNode,
    InterfaceTypeDefinitionNode,
    ListTypeNode,
    NamedTypeNode,
    NonNullTypeNode,
    ObjectTypeDefinitionNode,
    ScalarTypeDefinitionNode,
    TypeNode,
    UnionTypeDefinitionNode,
)
from npm_package import read_text_from_package, repo_root

PACKAGE = "@octokit/graphql-schema"
PINNED_VERSION = "15.26.1"
MEMBER = "schema.graphql"
OUTPUT = Path("tests/data/github-graphql.graphql")
BUILT_IN = {"ID", "String", "Int", "Float", "Boolean"}

# type -> the fields the app's queries read (bot/github/threads.py, bot/github/issues.py), and what the double serves.
KEEP: dict[str, tuple[str, ...]] = {
    "Query": ("repository",),
    "Mutation": ("resolveReviewThread",),
    "Repository": ("id", "name", "nameWithOwner", "pullRequest"),
    "PullRequest": ("id", "number", "reviewThreads", "closingIssuesReferences"),
    "IssueConnection": ("nodes", "pageInfo", "totalCount"),
    "Issue": ("id", "number", "repository"),
    "PullRequestReviewThreadConnection": ("nodes", "pageInfo", "totalCount"),
    "PageInfo": ("endCursor", "hasNextPage", "hasPreviousPage", "startCursor"),
    "PullRequestReviewThread": ("id", "isResolved", "isOutdated", "path", "line", "startLine", "comments",
                                "resolvedBy", "viewerCanResolve"),
    "PullRequestReviewCommentConnection": ("nodes", "pageInfo", "totalCount"),
    "PullRequestReviewComment": ("id", "databaseId", "author", "body", "path"),
    "Actor": ("login",),
    "Bot": ("id", "login"),
    "User": ("id", "login"),
    "ResolveReviewThreadPayload": ("clientMutationId", "thread"),
}


def _named(type_node: TypeNode) -> str:
    while isinstance(type_node, NonNullTypeNode | ListTypeNode):
        type_node = type_node.type
    assert isinstance(type_node, NamedTypeNode)
    return type_node.name.value


def cut(sdl: str) -> str:
    document = parse(sdl, no_location=True)
    by_name = {d.name.value: d for d in document.definitions if hasattr(d, "name") and d.name is not None}
    kept: dict[str, object] = {}
    wanted = list(KEEP)
    while wanted:
        name = wanted.pop()
        if name in kept or name in BUILT_IN:
            continue
        node = by_name[name]
        node = _strip(node, KEEP.get(name))
        kept[name] = node
        wanted += _references(node)
    for name, node in kept.items():  # an interface is implemented only where the cut keeps it
        if isinstance(node, ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode):
            kept[name] = _with(node, interfaces=tuple(i for i in node.interfaces or () if i.name.value in kept))
    definitions = [kept[name] for name in sorted(kept)]
    header = (f"# Cut from {PACKAGE}@{PINNED_VERSION} ({MEMBER}) by scripts/cut_graphql.py: the types and fields the\n"
              "# app's GraphQL uses, as GitHub declares them. Do not edit by hand: add to KEEP and re-run.\n")
    schema = "schema {\n  query: Query\n  mutation: Mutation\n}\n\n"
    return header + schema + print_ast(DocumentNode(definitions=tuple(definitions))) + "\n"


def _with(node, **changes):
    """A copy of an AST node with `changes`: graphql-core 3.3's nodes are frozen dataclasses, 3.2's
    plain objects."""
    if dataclasses.is_dataclass(node):
        return dataclasses.replace(node, **changes)
    node = copy.copy(node)
    for key, value in changes.items():
        setattr(node, key, value)
    return node


def _strip(node, fields: tuple[str, ...] | None):
    """The node without descriptions or directives, with only `fields` (every field when None)."""
    node = _with(node, description=None, directives=())
    if isinstance(node, ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode | InputObjectTypeDefinitionNode):
        present = {f.name.value for f in node.fields}
        missing = set(fields or ()) - present
        if missing:
            raise SystemExit(f"{node.name.value} has no field(s) {sorted(missing)}: GitHub's schema changed")
        node = _with(node, fields=tuple(_plain(f) for f in node.fields if fields is None or f.name.value in fields))
    if isinstance(node, EnumTypeDefinitionNode):
        node = _with(node, values=tuple(_plain(v) for v in node.values))
    return node


def _plain(node):
    changes: dict = {"description": None, "directives": ()}
    if getattr(node, "arguments", None):
        changes["arguments"] = tuple(_with(a, description=None, directives=()) for a in node.arguments)
    return _with(node, **changes)


def _references(node) -> list[str]:
    names: list[str] = []
    if isinstance(node, ObjectTypeDefinitionNode | InterfaceTypeDefinitionNode | InputObjectTypeDefinitionNode):
        for field in node.fields:
            names.append(_named(field.type))
            names += [_named(a.type) for a in getattr(field, "arguments", None) or ()]
    if isinstance(node, UnionTypeDefinitionNode):
        names += [t.name.value for t in node.types]
    if isinstance(node, ScalarTypeDefinitionNode | EnumTypeDefinitionNode):
        return []
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", default=PINNED_VERSION)
    parser.add_argument("--from-file", type=Path)
    args = parser.parse_args()
    sdl = args.from_file.read_text() if args.from_file else read_text_from_package(PACKAGE, args.version, MEMBER)
    out = repo_root() / OUTPUT
    out.write_text(cut(sdl))
    print(f"wrote {OUTPUT} ({out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
