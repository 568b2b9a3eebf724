"""Fuzzing `reviewer validate` with random and mutated files of every kind: its output contract.

Whatever the bytes, `reviewer validate --format json` exits 0 or 1, prints exactly one JSON object
of the documented shape on stdout, names every error's place inside the file, and writes no
traceback. Most cases run the CLI in this process through its entry point (bot.commands.cli.main), for
speed; hostile ones also run as real processes under a memory limit and a deadline.
"""

from __future__ import annotations

import io
import json
import re
import resource
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from bot.commands.cli import main
from tests.support.fuzz_support import (
    CONFIG,
    KINDS,
    SEED_VALUES,
    SEEDS,
    hang_guard,
    json_values,
    mutated_bytes,
    restructured,
    with_explicit_tag,
    with_hostile_value,
)

pytestmark = pytest.mark.fuzz

CODE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
ERROR_KEYS = {"line", "column", "pointer", "code", "message"}


def validate(path: Path, *options: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), hang_guard():
        code = main(["validate", "--format", "json", *options, str(path)])
    return code, out.getvalue(), err.getvalue()


def check_contract(code: int, out: str, err: str, text: bytes, kind: str | None) -> None:
    assert "Traceback" not in err, err
    assert code in (0, 1), (code, err)
    report = json.loads(out)  # exactly one JSON value, nothing else on stdout ...
    assert isinstance(report, dict) and set(report) == {"valid", "files"}  # ... and it is the object
    [file] = report["files"]
    assert set(file) == {"path", "kind", "valid", "errors"}
    assert file["kind"] in KINDS and (kind is None or file["kind"] == kind)
    assert report["valid"] is file["valid"] is (not file["errors"]) is (code == 0)
    lines = max(1, text.count(b"\n") + 1)
    for error in file["errors"]:
        assert ERROR_KEYS <= set(error) <= ERROR_KEYS | {"document"}, error
        assert CODE.match(error["code"]) and error["message"], error
        assert error["pointer"] == "" or error["pointer"].startswith("/"), error
        assert 1 <= error["line"] <= lines and error["column"] >= 1, (error, lines)


def _yaml_text(value: object, style: str) -> bytes:
    if style == "json":
        return json.dumps(value, indent=1).encode()
    out = io.BytesIO()
    YAML(typ="safe", pure=True).dump(value, out)
    return out.getvalue()


@pytest.mark.parametrize("kind", KINDS)
def test_mutated_bytes_keep_the_contract(kind, tmp_path):
    path = tmp_path / "file.yaml"

    @given(text=mutated_bytes(SEEDS[kind]), named=st.booleans())
    def case(text: bytes, named: bool) -> None:
        path.write_bytes(text)
        check_contract(*validate(path, *(["--kind", kind] if named else [])), text, kind if named else None)

    case()


@pytest.mark.parametrize("kind", KINDS)
def test_text_and_github_formats_give_one_line_per_error(kind, tmp_path):
    path = tmp_path / "file.yaml"

    @given(text=mutated_bytes(SEEDS[kind]))
    def case(text: bytes) -> None:
        path.write_bytes(text)
        code, out, err = validate(path, "--kind", kind)
        check_contract(code, out, err, text, kind)
        errors = json.loads(out)["files"][0]["errors"]
        plain = _run_format(path, kind, "text")
        assert plain == [f"{path}:{e['line']}:{e['column']}: {e['code']}: {e['message']}" for e in errors]
        github = _run_format(path, kind, "github")
        assert len(github) == len(errors) and all(line.startswith(f"::error file={path},line=") for line in github)

    case()


def _run_format(path: Path, kind: str, form: str) -> list[str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), hang_guard():
        main(["validate", "--format", form, "--kind", kind, str(path)])
    assert "Traceback" not in err.getvalue()
    return out.getvalue().splitlines()


@pytest.mark.parametrize("kind", KINDS)
def test_restructured_documents_keep_the_contract(kind, tmp_path):
    path = tmp_path / "file.yaml"

    @given(value=restructured(SEED_VALUES[kind]), style=st.sampled_from(["json", "block"]))
    def case(value: object, style: str) -> None:
        text = _yaml_text(value, style)
        path.write_bytes(text)
        check_contract(*validate(path, "--kind", kind), text, kind)

    case()


@pytest.mark.parametrize("kind", KINDS)
def test_documents_with_a_hostile_value_keep_the_contract(kind, tmp_path):
    path = tmp_path / "file.yaml"

    @given(text=with_hostile_value(SEED_VALUES[kind]))
    def case(text: bytes) -> None:
        path.write_bytes(text)
        check_contract(*validate(path, "--kind", kind), text, kind)

    case()


@pytest.mark.parametrize("kind", KINDS)
def test_documents_with_an_explicit_tag_keep_the_contract(kind, tmp_path):
    # `feedback: !!float xyz` was a ValueError traceback and no JSON at all.
    path = tmp_path / "file.yaml"

    @given(text=with_explicit_tag(SEED_VALUES[kind]))
    def case(text: bytes) -> None:
        path.write_bytes(text)
        check_contract(*validate(path, "--kind", kind), text, kind)

    case()


def test_random_documents_keep_the_contract_with_an_admin_file(tmp_path):
    path = tmp_path / ".reviewer.yaml"

    @given(value=json_values, style=st.sampled_from(["json", "block"]))
    def case(value: object, style: str) -> None:
        text = _yaml_text(value, style)
        path.write_bytes(text)
        check_contract(*validate(path, "--admin-config", str(CONFIG / "admin.yaml")), text, "repo-config")

    case()


HOSTILE = {
    "flow-nesting": b"rules: " + b"[" * 120_000 + b"]" * 120_000,
    "block-nesting": b"rules:\n  " + b"- " * 120_000 + b"x\n",
    "explicit-keys": b"? " * 120_000 + b"x\n",
    "alias-bomb": b"a: &a [x,x,x,x,x,x,x,x,x,x]\n" + b"".join(
        f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n".encode() for p, n in zip("abcdefgh", "bcdefghi", strict=True)),
    "long-integers": b"rules:\n" + b"".join(b"  - timeout: " + b"9" * 20_000 + b"\n" for _ in range(10)),
    "many-keys": b"".join(b"k%d: %d\n" % (i, i) for i in range(20_000)),
    "long-line": b"rules:\n  - id: a\n    rule: " + b"x" * 250_000 + b"\n",
    "cel": b"filterExpr: '" + b"(" * 5_000 + b"pr.draft" + b")" * 5_000 + b"'\n",
}


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB of address space


@pytest.mark.parametrize(("kind", "name"), [*(("repo-config", name) for name in sorted(HOSTILE)),
                                            *(("oidc-connector", name) for name in ("alias-bomb", "flow-nesting"))])
def test_hostile_files_in_a_real_process_within_memory_and_time(tmp_path, kind, name):
    path = tmp_path / "hostile.yaml"
    path.write_bytes(HOSTILE[name])
    result = subprocess.run([sys.executable, "-m", "bot", "validate", "--kind", kind, "--format", "json", str(path)],
                            capture_output=True, text=True, timeout=120, preexec_fn=_limited)
    check_contract(result.returncode, result.stdout, result.stderr, HOSTILE[name], kind)
