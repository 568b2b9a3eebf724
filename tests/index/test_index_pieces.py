"""How the ranked candidates become pieces: a function that is both a definition the added lines
use and a caller of what the change altered is shown once, and still said to be a caller."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import context_of

BASE = {
    "recovery.py": "def handle(error):\n    return 500\n\n\n"
                   "def recover(out, handler=None):\n    if handler is not None:\n        return handler\n"
                   "    return handle\n",
    "cli.py": "def main():\n    return None\n",
}


def test_a_caller_that_is_also_a_used_definition_keeps_a_caller_piece_at_its_use(capsys, tmp_path: Path) -> None:
    head = {"recovery.py": BASE["recovery.py"].replace("return 500", "print(error)\n    return 500"),
            "cli.py": "from recovery import recover\n\n\ndef main():\n    return recover(None)\n"}
    context = context_of(capsys, tmp_path, BASE, head)
    pieces = {(c["kind"], c["path"], c["startLine"], c["endLine"]) for c in context if c["path"] == "recovery.py"}
    assert pieces == {("definition", "recovery.py", 6, 9), ("caller", "recovery.py", 9, 9)}


def test_what_only_tests_use_comes_after_the_callers_of_what_changed(capsys, tmp_path: Path) -> None:
    code = "def parse(text):\n    return text.split()\n"
    tests = ("from app import parse\n\n\ndef words(text):\n    return parse(text)\n\n\n"
             "def test_words():\n    assert words('a b') == ['a', 'b']\n")
    base = {"app.py": code, "tests/test_app.py": tests}
    head = {"tests/test_app.py": tests.replace("return parse(text)", "return list(parse(text))")}
    context = context_of(capsys, tmp_path, base, head)
    kinds = [(c["kind"], c["path"]) for c in context if c["kind"] != "related"]
    assert kinds == [("caller", "tests/test_app.py"), ("definition", "app.py")]


def test_a_function_used_everywhere_shows_every_caller_the_rest_as_call_sites(capsys, tmp_path: Path) -> None:
    """Past the first dozen, a changed function's callers come as their call sites (the use and a
    line either side): all fifty fit the budget, where whole windows would leave most out."""
    body = "".join(f"    step_{n} = {n}\n" for n in range(10))
    base = {"core.py": "def settle(amount):\n    return amount\n"}
    for n in range(50):
        base[f"shop/m{n:02}.py"] = (f"from core import settle\n\n\ndef pay_{n}(amount):\n{body}"
                                    f"    total = settle(amount)\n{body}    return total\n")
    head = {"core.py": base["core.py"].replace("return amount", "return round(amount, 2)")}
    context = context_of(capsys, tmp_path, base, head)
    callers = sorted((c["path"], c["startLine"], c["endLine"]) for c in context if c["kind"] == "caller")
    assert [path for path, _, _ in callers] == [f"shop/m{n:02}.py" for n in range(50)]
    call = 15  # `total = settle(amount)` in every module
    assert all(start <= call <= end for _, start, end in callers)
    spans = sorted(end - start + 1 for _, start, end in callers)
    assert spans == [3] * 38 + [13] * 12
