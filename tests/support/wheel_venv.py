"""A clean virtual environment holding the wheel the container image installs, for the tests that
run it as the image would (tests/deploy/test_deploy_wheel.py).

The wheel is built from the files the Dockerfile copies (the build context .dockerignore lets
through), with the command the image's first stage runs. Installing its dependencies from pip's
cache takes a minute of CPU, and they change far less often than the code: so they are installed
once into an environment of their own under ~/.cache/reviewer-tests/ (XDG_CACHE_HOME), named by a
hash of the wheel's declared requirements and the Python, by installing the wheel there and
removing it again. Each run then makes a new venv that holds the wheel built now, installed by
pip, and sees that environment's packages through a .pth file: it imports what the wheel holds
and what the wheel declares, and nothing else (no checkout, no PYTHONPATH, no test packages).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CONTEXT = ("pyproject.toml", "README.md", "bot")  # .dockerignore's allowlist
KEEP = 3  # dependency environments kept: the latest, and a few for other branches


def run(*args: str | Path, cwd: Path, timeout: float = 600) -> str:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                            env=clean_env())
    assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def clean_env(venv: Path | None = None, **values: str) -> dict[str, str]:
    """This process's environment without what would point a child at the checkout or the tests'
    settings, with `venv`'s commands first on PATH."""
    drop = ("GITHUB_", "REVIEWER_", "PORT", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    if venv is not None:
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **values}


def build_wheel(work: Path) -> Path:
    """Reviewer's wheel, built from a copy of the image's build context."""
    context = work / "context"
    context.mkdir()
    for name in CONTEXT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, context / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, context / name)
    # the Dockerfile's first stage builds every wheel; Reviewer's is the one that is ours
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "--wheel-dir",
        work / "wheels", ".", cwd=context)
    [wheel] = (work / "wheels").glob("reviewer-*.whl")
    return wheel


def requirements_of(wheel: Path) -> list[str]:
    """The wheel's `Requires-Dist` lines, as its METADATA declares them."""
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(name).decode()
    return sorted(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:"))


def _deps_key(wheel: Path) -> str:
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    digest = hashlib.sha256(f"{sys.version}\n{base}\n".encode())
    for requirement in requirements_of(wheel):
        digest.update(f"{requirement}\n".encode())
    return digest.hexdigest()[:20]


def _cache_root() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "reviewer-tests"
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One run at a time builds or prunes (other checkouts' runs share the cache)."""
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _site_packages(venv: Path) -> Path:
    version = sysconfig.get_python_version()
    return venv / "lib" / f"python{version}" / "site-packages"


def _make_deps(deps: Path, wheel: Path, work: Path) -> None:
    """The wheel's dependencies alone in a new venv: the wheel installed with them (pip resolves
    exactly what it declares), then removed."""
    run(sys.executable, "-m", "venv", deps, cwd=work)
    pip = (deps / "bin" / "python", "-m", "pip", "--disable-pip-version-check")
    run(*pip, "install", "--quiet", wheel, cwd=work)
    run(*pip, "uninstall", "--yes", "--quiet", "reviewer", cwd=work)


def dependencies(wheel: Path, work: Path) -> Path:
    """The cached environment of the wheel's dependencies, made now if there is none (the module's
    docstring)."""
    root = _cache_root()
    deps = root / f"wheel-deps-{_deps_key(wheel)}"
    made = deps / "made"  # written last: an environment without it is a build that did not finish
    with _locked(root):
        if not made.exists():
            shutil.rmtree(deps, ignore_errors=True)
            try:
                _make_deps(deps, wheel, work)
            except BaseException:
                shutil.rmtree(deps, ignore_errors=True)
                raise
        made.write_text("")  # its time says when it was last used
        kept = sorted(root.glob("wheel-deps-*"), key=lambda p: (p / "made").stat().st_mtime
                      if (p / "made").exists() else 0.0, reverse=True)
        for old in kept[KEEP:]:
            shutil.rmtree(old, ignore_errors=True)
        for old in root.glob("wheel-venv-*"):  # the earlier layout: a whole environment per change
            shutil.rmtree(old, ignore_errors=True)
    return deps


def image_venv(work: Path) -> Path:
    """A new venv at `work/venv` holding the wheel built now, installed by pip (compiled, its
    `reviewer` command made), and seeing its dependencies' environment (`dependencies`)."""
    wheel = build_wheel(work)
    deps = dependencies(wheel, work)
    venv = work / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=work)
    # `import site` lines run: the dependencies' own .pth files are read as a site directory's
    (_site_packages(venv) / "_reviewer_deps.pth").write_text(
        f"import site; site.addsitedir({str(_site_packages(deps))!r})\n")
    run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
        wheel, cwd=work)
    return venv
