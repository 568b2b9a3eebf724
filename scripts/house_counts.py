"""The house's shape in figures, read from the source with `ast`: how many modules and packages
bot/ has, how many loose modules sit at its top, which import cycles there are (between modules and
between packages, at module level and counting the imports inside functions too), how many lines
of SQL and database-driver imports live outside bot/store, how many modules outside bot/server
import aiohttp.web, and how many docstrings cite a design file that is not in the repository.

Issue #21 asked for these counts before and after the restructure; docs/architecture.md says how
they are kept. Run it on any checkout:

    python scripts/house_counts.py [ROOT]          # ROOT defaults to the repository of this script
    python scripts/house_counts.py --cycles        # also list each cycle's modules
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SQL_START = re.compile(r"^\s*(SELECT\b[\s\S]*\bFROM\b|SELECT \d|INSERT INTO|UPDATE \w+\s+SET|DELETE FROM|"
                       r"CREATE (TABLE|INDEX|UNIQUE|SEQUENCE|VIEW)|ALTER TABLE|DROP (TABLE|INDEX)|WITH \w+ AS|PRAGMA)")
DRIVERS = ("sqlite3", "psycopg", "psycopg_pool")


@dataclass
class Module:
    """One module of bot/: its dotted name, its file and the bot modules it imports."""

    name: str
    path: Path
    is_package: bool
    top_level_imports: set[str] = field(default_factory=set)
    nested_imports: set[str] = field(default_factory=set)
    external: set[str] = field(default_factory=set)
    sql_lines: int = 0
    design_citations: int = 0


def module_name(root: Path, path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def resolve(importer: Module, node: ast.ImportFrom | ast.Import, known: set[str]) -> tuple[set[str], set[str]]:
    """The bot modules and the outside modules one import statement names."""
    inside: set[str] = set()
    outside: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            (inside if alias.name.split(".")[0] == "bot" else outside).add(alias.name)
        return {_nearest(n, known) for n in inside}, outside
    base = node.module or ""
    if node.level:
        package = importer.name if importer.is_package else importer.name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    if base.split(".")[0] != "bot":
        for alias in node.names:
            outside.add(f"{base}.{alias.name}")
        outside.add(base)
        return inside, outside
    for alias in node.names:
        candidate = f"{base}.{alias.name}"
        inside.add(candidate if candidate in known else _nearest(base, known))
    return inside, outside


def _nearest(name: str, known: set[str]) -> str:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def read_modules(root: Path) -> dict[str, Module]:
    files = sorted((root / "bot").rglob("*.py"))
    modules = {}
    for path in files:
        name, is_package = module_name(root, path)
        modules[name] = Module(name, path, is_package)
    known = set(modules)
    for module in modules.values():
        tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
        top_level = {id(node) for node in tree.body}
        top_level |= {id(n) for node in tree.body if isinstance(node, ast.If) for n in node.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                inside, outside = resolve(module, node, known)
                inside.discard(module.name)
                target = module.top_level_imports if id(node) in top_level else module.nested_imports
                target.update(inside)
                module.external.update(outside)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if SQL_START.match(node.value):
                    module.sql_lines += node.value.strip().count("\n") + 1
                module.design_citations += node.value.count("design.md")
    return modules


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in graph:
                    continue
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def package_of(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2])


def package_graph(modules: dict[str, Module], nested: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in modules.values():
        source = package_of(module.name)
        targets = module.top_level_imports | (module.nested_imports if nested else set())
        graph.setdefault(source, set()).update(package_of(t) for t in targets if package_of(t) != source)
    return graph


def module_graph(modules: dict[str, Module], nested: bool) -> dict[str, set[str]]:
    """Edges between modules; a package's __init__ importing its own submodules is not a cycle
    worth counting when the submodule imports the package only for a name the __init__ re-exports,
    so both directions are kept as they are written: the count is of what the code says."""
    return {m.name: set(m.top_level_imports | (m.nested_imports if nested else set())) for m in modules.values()}


def counts(root: Path) -> tuple[dict[str, int], dict[str, list[list[str]]]]:
    modules = read_modules(root)
    packages = [m for m in modules.values() if m.is_package]
    folders = {m.path.parent for m in modules.values()}
    loose = [m for m in modules.values() if m.name.count(".") == 1 and not m.is_package
             and m.name not in ("bot.__main__",)]
    in_store = lambda m: m.name == "bot.store" or m.name.startswith("bot.store.")  # noqa: E731
    in_server = lambda m: m.name == "bot.server" or m.name.startswith("bot.server.")  # noqa: E731
    cycle_lists = {
        "module cycles (module-level imports)": cycles(module_graph(modules, nested=False)),
        "module cycles (with function-level imports)": cycles(module_graph(modules, nested=True)),
        "package cycles (module-level imports)": cycles(package_graph(modules, nested=False)),
        "package cycles (with function-level imports)": cycles(package_graph(modules, nested=True)),
    }
    figures = {
        "modules": len(modules),
        "packages": len(packages),
        "folders without __init__.py": len(folders - {p.path.parent for p in packages}),
        "loose top-level modules": len(loose),
        **{k: len(v) for k, v in cycle_lists.items()},
        "SQL lines inside bot/store": sum(m.sql_lines for m in modules.values() if in_store(m)),
        "SQL lines outside bot/store": sum(m.sql_lines for m in modules.values() if not in_store(m)),
        "modules importing a database driver outside bot/store": sum(
            1 for m in modules.values() if not in_store(m)
            and any(e.split(".")[0] in DRIVERS for e in m.external)),
        "modules importing aiohttp.web outside bot/server": sum(
            1 for m in modules.values() if not in_server(m)
            and any(e == "aiohttp.web" or e.startswith("aiohttp.web.") for e in m.external)),
        "modules over 400 lines": sum(
            1 for m in modules.values() if len(m.path.read_text(encoding="utf-8").splitlines()) > 400),
        "design.md citations": sum(m.design_citations for m in modules.values()),
    }
    return figures, cycle_lists


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--cycles", action="store_true", help="list the modules of each cycle")
    args = parser.parse_args(argv)
    figures, cycle_lists = counts(Path(args.root))
    width = max(map(len, figures))
    for key, value in figures.items():
        print(f"{key:<{width}}  {value:>6}")
    if args.cycles:
        for kind, found in cycle_lists.items():
            for members in found:
                print(f"{kind}: {' ↔ '.join(members)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
