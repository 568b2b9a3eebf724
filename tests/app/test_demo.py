"""`make run` is the README's first command: it must keep working."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the demo as a process of its own, serving the app: `make test-fast` leaves it out

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_demo_serves_the_app_and_prints_the_check_run_it_posted():
    result = subprocess.run([sys.executable, "-m", "tests.support.demo"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the app answered 202" in result.stdout
    assert "Check run “Reviewer”" in result.stdout and "completed, conclusion success" in result.stdout
    assert "`money-as-integers` (repository)" in result.stdout
    assert "Review by reviewer[bot]: APPROVED" in result.stdout
    assert "demo-key" not in result.stdout + result.stderr
