"""The built-in analyzers, which never run repository code: secret scanning of the added lines
(in this process), and ruff, ShellCheck and actionlint on the changed files at the head (each in
a bounded child on a temporary copy). Each one's output is a SARIF log read by the same reader as
an upload (bot/analyzers/sarif.py), so its results take the same path to comments.

The caller (the pipeline) reads from GitHub what `wanted_files` and `config_paths` name, at the
head, and passes them in; nothing here reaches the network. A tool that is not installed, runs
past its time, or fails says so in its run's notes, and the others still run.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.analyzers.builtin.sandbox import Bounds, StageError, child_environment, run_bounded, stage
from bot.analyzers.builtin.secrets import scan_secrets
from bot.analyzers.builtin.tools import CONFIG_FILES, TOOLS, Unavailable, binary
from bot.analyzers.model import AnalyzerResult
from bot.analyzers.sarif import read_sarif
from bot.analyzers.settings import AnalyzerSettings
from bot.reviews.diff import FilePatch

__all__ = ["CONFIG_FILES", "BuiltinRun", "ToolRun", "config_paths", "run_builtins", "secret_scan", "wanted_files"]
MAX_FILES_PER_TOOL = 1000
MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class ToolRun:
    tool: str
    seconds: float
    results: tuple[AnalyzerResult, ...] = ()
    notes: tuple[str, ...] = ()  # not installed, timed out, failed, results refused: said in the summary
    files: int = 0


@dataclass(frozen=True)
class BuiltinRun:
    runs: tuple[ToolRun, ...] = field(default_factory=tuple)

    @property
    def results(self) -> tuple[AnalyzerResult, ...]:
        return tuple(r for run in self.runs for r in run.results)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(n for run in self.runs for n in run.notes)


def _changed(patches: Mapping[str, FilePatch]) -> list[str]:
    return [path for path, patch in patches.items() if patch.status != "removed"]


def wanted_files(settings: AnalyzerSettings, patches: Mapping[str, FilePatch]) -> list[str]:
    """The changed files whose head content the tools that run need (secret scanning needs none:
    it reads the diff). Shell scripts without a suffix are found by their first line, so every
    changed file is wanted when ShellCheck runs."""
    tools = [TOOLS[name] for name in settings.builtins if name in TOOLS]
    if any(t.name == "shellcheck" for t in tools):
        return _changed(patches)
    return [path for path in _changed(patches) if any(t.wants(path, b"") for t in tools)]


def config_paths(settings: AnalyzerSettings, patches: Mapping[str, FilePatch]) -> list[str]:
    """The tool configuration files to read at the head: at the root, and for ruff in each
    directory holding a changed Python file and its parents."""
    names = {"ruff": ("ruff.toml", ".ruff.toml", "pyproject.toml"), "shellcheck": (".shellcheckrc",),
             "actionlint": (".github/actionlint.yaml", ".github/actionlint.yml")}
    paths: list[str] = []
    for tool in settings.builtins:
        paths += names.get(tool, ())
    if settings.ruff:
        for path in _changed(patches):
            if path.endswith((".py", ".pyi")):
                parts = path.split("/")[:-1]
                for depth in range(1, len(parts) + 1):
                    paths += ["/".join(parts[:depth]) + "/" + name for name in names["ruff"]]
    return list(dict.fromkeys(p for p in paths if p.rsplit("/", 1)[-1] in CONFIG_FILES or p in CONFIG_FILES))


async def run_builtins(settings: AnalyzerSettings, patches: Mapping[str, FilePatch], files: Mapping[str, bytes],
                       configs: Mapping[str, bytes]) -> BuiltinRun:
    """Every built-in analyzer the settings turn on, one after the other (each bounded alone)."""
    runs: list[ToolRun] = []
    if settings.secrets:
        runs.append(await secret_scan(patches))
    bounds = Bounds(settings.timeout, settings.memory_mib * 1024 * 1024)
    for name in settings.builtins:
        if name in TOOLS:
            runs.append(await _run_tool(name, patches, files, configs, bounds))
    return BuiltinRun(tuple(runs))


async def secret_scan(patches: Mapping[str, FilePatch]) -> ToolRun:
    """detect-secrets over the lines the patches add (in this process, on a worker thread)."""
    started = time.monotonic()
    read = read_sarif(await asyncio.to_thread(scan_secrets, patches))
    return ToolRun("detect-secrets", time.monotonic() - started, read.results, tuple(p.message for p in read.problems),
                   len(patches))


async def _run_tool(name: str, patches: Mapping[str, FilePatch], files: Mapping[str, bytes],
                    configs: Mapping[str, bytes], bounds: Bounds) -> ToolRun:
    tool = TOOLS[name]
    started = time.monotonic()
    chosen = {path: files[path] for path in _changed(patches)
              if path in files and len(files[path]) <= MAX_FILE_BYTES and tool.wants(path, files[path])}
    notes: list[str] = []
    if len(chosen) > MAX_FILES_PER_TOOL:
        notes.append(f"{name}: {len(chosen)} files; the first {MAX_FILES_PER_TOOL} were checked")
        chosen = dict(list(chosen.items())[:MAX_FILES_PER_TOOL])
    if not chosen:
        return ToolRun(name, 0.0, (), tuple(notes))
    try:
        executable = binary(name)
    except Unavailable as exc:
        return ToolRun(name, 0.0, (), (*notes, f"{name}: {exc}; it did not run"))
    try:
        kept, config_notes = tool.configs(configs)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:  # a configuration of a shape not foreseen
        return ToolRun(name, time.monotonic() - started, (), (*notes, f"{name}: the repository's configuration "
                                                                      f"could not be read ({type(exc).__name__}); "
                                                                      "it did not run"))
    notes += config_notes
    with tempfile.TemporaryDirectory(prefix="reviewer-analyzer-") as temporary:
        root = Path(temporary).resolve() / "repo"
        home = root.parent / "home"
        root.mkdir()
        home.mkdir()
        try:
            stage(root, {**kept, **chosen})
        except StageError as exc:
            return ToolRun(name, time.monotonic() - started, (), (*notes, f"{name}: {exc}; it did not run"))
        try:
            done = await run_bounded(tool.argv(executable, sorted(chosen), kept), root, bounds,
                                     child_environment(home))
        except OSError as exc:
            return ToolRun(name, time.monotonic() - started, (), (*notes, f"{name} could not start ({exc.strerror})"))
        seconds = time.monotonic() - started
        if done.timed_out:
            return ToolRun(name, seconds, (), (*notes, f"{name} ran past {bounds.timeout:g} s and was stopped"),
                           len(chosen))
        try:
            document = tool.sarif(done.stdout)
        except (ValueError, KeyError, TypeError, AttributeError):
            return ToolRun(name, seconds, (), (*notes, _failure(name, done.returncode, done.stderr)), len(chosen))
        read = read_sarif(document, checkout_uri=root.as_uri())
    notes += [f"{name}: {p.message}" for p in read.problems[:3]]
    return ToolRun(name, seconds, read.results, tuple(notes), len(chosen))


def _failure(name: str, returncode: int | None, stderr: bytes) -> str:
    """The tool's own first error line (it names the file and the problem), cut short."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    said = json.dumps(lines[0][:200]) if lines else "no message"
    return f"{name} failed (exit {returncode}): {said}"
