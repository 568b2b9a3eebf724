"""The store is the floor (bot/store/__init__.py): every SQL statement and database driver of the
server is in bot/store, and bot/store imports nothing above it. Read from the source with `ast`, so
that a module moved or added later is held to the same rule."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

BOT = Path(__file__).resolve().parent.parent.parent / "bot"
DRIVERS = {"sqlite3", "psycopg", "psycopg_pool"}
# Leaf modules of shapes (the index's, moved below the store from bot/index/model.py): each imports
# nothing of bot, not even the store (checked below), so the layers above may use them freely.
LEAVES = {"bot.store.index.model"}
# The store's imports from above it that remain, named one by one (#21's remaining work): the
# learnings store builds bot.learnings' shapes (Learning, Followed, the tally's Record) from its
# rows. Exactly these: a new one fails the check, and so does one removed without its line here.
KNOWN_ABOVE: dict[str, list[str]] = {}  # none left: the learnings store keeps rows (bot/learnings/book.py)
# A statement, not a word: "DELETE" alone is also an HTTP method.
SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+\w+\s+SET|CREATE\s+(TABLE|INDEX|"
                 r"UNIQUE\s+INDEX|EXTENSION)|ALTER\s+TABLE|DROP\s+(TABLE|INDEX))\b", re.IGNORECASE | re.DOTALL)


@functools.cache  # parsed once for the file's checks, which only read the trees
def modules() -> tuple[tuple[str, ast.Module], ...]:
    return tuple((path.relative_to(BOT.parent).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
            for path in sorted(BOT.rglob("*.py")))


def imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def in_store(path: str) -> bool:
    return path.startswith("bot/store/")


def test_no_module_outside_the_store_imports_a_database_driver() -> None:
    found = {path: sorted(n for n in imported(tree) if n.split(".")[0] in DRIVERS)
             for path, tree in modules() if not in_store(path)}
    assert {path: names for path, names in found.items() if names} == {}


def test_no_sql_statement_outside_the_store() -> None:
    found = {}
    for path, tree in modules():
        if in_store(path):
            continue
        skip = docstrings(tree)
        hits = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Constant)
                and isinstance(node.value, str) and id(node) not in skip and SQL.search(node.value)]
        if hits:
            found[path] = hits
    assert found == {}


def test_the_store_imports_nothing_above_it() -> None:
    found = {path: sorted(n for n in imported(tree) if n.split(".")[0] == "bot" and n != "bot"
                          and not n.startswith("bot.store") and n not in LEAVES)
             for path, tree in modules() if in_store(path)}
    assert {path: names for path, names in found.items() if names} == KNOWN_ABOVE


def test_the_leaves_the_store_imports_import_nothing_of_bot() -> None:
    trees = dict(modules())
    for leaf in LEAVES:
        names = imported(trees[leaf.replace(".", "/") + ".py"])
        assert not {n for n in names if n == "bot" or n.startswith("bot.")}, leaf


def test_the_sql_pattern_finds_a_statement_and_leaves_an_http_method_alone() -> None:
    # the check above can fail: it sees a statement in a literal, and not a verb in a URL table
    assert SQL.search("SELECT body FROM auth_sessions WHERE id = ?")
    assert SQL.search("delete from review_pauses where pull = %s")
    assert not SQL.search("DELETE")
    assert not SQL.search("GET/PATCH/DELETE /v1/learnings/{id}")
