"""Per language: the parser finds the known definitions, and `reviewer context` retrieves the
definition a changed line calls and the callers of a function whose body changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.commands.cli import main
from bot.index.parse import parse_symbols
from tests.plan.test_plan_cli import Repo
from tests.support.index_fixtures import FIXTURES, LanguageFixture

IDS = [f.language for f in FIXTURES]


@pytest.mark.parametrize("fx", FIXTURES, ids=IDS)
def test_parser_finds_definitions_and_references(fx: LanguageFixture) -> None:
    lib = parse_symbols(fx.lib, fx.lib_text)
    assert lib.language is not None
    by_name = {d.name: d for d in lib.definitions}
    assert (by_name[fx.function].start, by_name[fx.function].end) == fx.lines
    assert by_name[fx.function].kind in ("function", "method")
    assert fx.function in by_name[fx.function].signature
    assert fx.klass in by_name
    app = parse_symbols(fx.app, fx.app_text)
    caller = next(d for d in app.definitions if d.name == fx.caller)
    assert (caller.start, caller.end) == fx.caller_lines
    call_lines = app.references[fx.function]
    assert any(fx.caller_lines[0] < n <= fx.caller_lines[1] for n in call_lines)


def _repo(tmp_path: Path, fx: LanguageFixture) -> Repo:
    repo = Repo(tmp_path / fx.language)
    repo.commit("init", {fx.lib: fx.lib_text, fx.app: fx.app_text, "README.md": "# Shop\n"})
    return repo


def _context(capsys, repo: Repo, head: str) -> dict:
    assert main(["context", "--repo", str(repo.path), "--base", "main", "--head", head, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("fx", FIXTURES, ids=IDS)
def test_context_gives_the_definition_a_changed_line_calls(capsys, tmp_path: Path, fx: LanguageFixture) -> None:
    repo = _repo(tmp_path, fx)
    repo.git("checkout", "-q", "-b", "calls")
    repo.commit("rename an argument", {fx.app: fx.app_changed()})
    result = _context(capsys, repo, "calls")
    definitions = [c for c in result["context"] if c["kind"] == "definition"]
    assert definitions[0]["path"] == fx.lib, result
    first = definitions[0]
    assert (first["startLine"], first["endLine"]) == fx.lines
    assert first["symbol"].split(".")[-1] == fx.function
    assert first["reason"].startswith(f"{fx.function} is used on {fx.app}:")


@pytest.mark.parametrize("fx", FIXTURES, ids=IDS)
def test_context_gives_the_callers_of_a_changed_function(capsys, tmp_path: Path, fx: LanguageFixture) -> None:
    repo = _repo(tmp_path, fx)
    repo.git("checkout", "-q", "-b", "body")
    repo.commit("comment the body", {fx.lib: fx.lib_changed()})
    result = _context(capsys, repo, "body")
    callers = [c for c in result["context"] if c["kind"] == "caller"]
    assert [(c["path"], c["symbol"], c["startLine"], c["endLine"]) for c in callers] == [
        (fx.app, fx.caller, *fx.caller_lines)]
    assert f"{fx.function}, whose definition changed at {fx.lib}:" in callers[0]["reason"]
