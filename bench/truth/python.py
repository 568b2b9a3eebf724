"""Python's own rules, read with its parser (`ast`): the names a line reads, where a name is used,
and the file's definitions with their true extents (bench/context_truth.py says the rules)."""

from __future__ import annotations

import ast

from truth.model import Tag


def python_loads(text: str) -> dict[int, list[tuple[str, bool]]] | None:
    """Per line, the names Python code reads there: (name, used through an attribute)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[int, list[tuple[str, bool]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            out.setdefault(node.lineno, []).append((node.id, False))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            out.setdefault(node.end_lineno or node.lineno, []).append((node.attr, True))
    return out


def python_uses(text: str, name: str) -> set[int] | None:
    """Lines where Python code uses `name` (a name, or an attribute `x.name`); None: no parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines: set[int] = set()
    shadowed: set[int] = set()  # lines of functions where the name is a parameter or a local
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                                      *(x for x in (node.args.vararg, node.args.kwarg) if x))]
            stores = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name
                      and isinstance(n.ctx, ast.Store)]
            if name in params or stores:
                shadowed.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and node.lineno not in shadowed:
            lines.add(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == name:
            lines.add(node.end_lineno or node.lineno)
        elif isinstance(node, ast.alias) and (node.asname or node.name).split(".")[-1] == name:
            lines.add(node.lineno)
    return lines


def python_tags(path: str, text: str) -> list[Tag] | None:
    """Python's definitions read with its own parser (`ast`), which knows where each one ends:
    functions, classes, methods, and module-level assignments (annotated ones too, which ctags
    misses). None when the file does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: list[Tag] = []

    def visit(nodes, scope: list[str], in_class: bool) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else ("member" if in_class else "function")
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                out.append(Tag(node.name, path, start, node.end_lineno or node.lineno, kind, ".".join(scope),
                               "class" if in_class else "function" if scope else ""))
                visit(node.body, [*scope, node.name], isinstance(node, ast.ClassDef))
            elif not scope and isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        out.append(Tag(target.id, path, node.lineno, node.end_lineno or node.lineno, "variable", ""))
            elif isinstance(node, (ast.If, ast.Try)) and not scope:
                visit([*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])], scope, in_class)

    visit(tree.body, [], False)
    return out
