"""A worker process (`reviewer worker`: bot/server/launch.py runs bot/server/core.py's `core_app`)
imports nothing of the web roles: not the console, not sign-in, not the resource API, not the
webhook's routes. It runs jobs; what it loads it keeps for its life, and what it never loads it can
never serve by mistake. And a process imports no app before its settings are checked, nor
pysaml2's client before a SAML connector is used: a refusal, and every start-up, stays quick."""

from __future__ import annotations

import subprocess
import sys

import grimp

from tests.support.process_support import env

WEB_ONLY = ("bot.server.console", "bot.server.signin", "bot.server.resources", "bot.server.app",
            "bot.server.api.admin", "bot.server.api.uploads", "bot.server.home")
APPS = ("bot.server.app", "bot.server.core", "bot.server.process", "bot.pipeline", "saml2")
SAML_CLIENT = ("saml2.client", "saml2.config", "saml2.sigver", "xmlschema")  # the SAML schemas load with these


def test_the_worker_entry_point_reaches_no_web_module() -> None:
    """What a worker imports: the process (bot/server/process.py) and the core's app."""
    graph = grimp.build_graph("bot")  # imports in functions and under TYPE_CHECKING count too
    reached = {m for entry in ("bot.server.process", "bot.server.core") for m in graph.find_upstream_modules(entry)}
    web = sorted(m for m in reached if m.startswith(WEB_ONLY))
    assert web == []
    assert "bot.server.jobs.pg_queue" in reached and "bot.pipeline" in reached  # it does reach what runs jobs


def loaded_by(role: str) -> list[str]:
    """The modules of bot.server, pysaml2 and xmlschema a fresh interpreter holds once it imported
    the role's app as `reviewer serve` or `worker` does (bot/server/launch.py `app_factory`)."""
    code = ("import sys; from bot.server.launch import app_factory; "
            f"app_factory({role!r}); "
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith(('bot.server.', 'saml2', 'xmlschema')))))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()


def test_reviewer_worker_loads_no_web_module() -> None:
    """The same, as the process sees it."""
    loaded = loaded_by("worker")
    assert "bot.server.core" in loaded
    assert [m for m in loaded if m.startswith(WEB_ONLY)] == []


def test_reviewer_serve_loads_the_console_and_not_the_saml_client() -> None:
    """And the web process does load the console (the check above can tell the two apart), while
    pysaml2's client and the SAML schemas wait for the first SAML sign-in (bot/auth/saml/protocol.py)."""
    loaded = loaded_by("all")
    assert "bot.server.console" in loaded and "bot.server.signin.routes" in loaded
    assert [m for m in loaded if m.startswith(SAML_CLIENT)] == []


def test_a_start_up_refused_for_its_settings_imports_no_app(tmp_path) -> None:
    code = ("import sys; from bot.commands.cli import main; status = main(sys.argv[1:]); "
            f"print(status, *sorted(m for m in sys.modules if m in {APPS!r} or m.startswith({tuple(a + '.' for a in APPS)!r})))")
    for args in (["serve"], ["serve", "--no-workers"], ["worker"]):
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tmp_path,
                              env=env(), timeout=60)
        assert done.stdout.split() == ["2"], (args, done.stdout)  # refused, with no app imported
        assert "GITHUB_WEBHOOK_SECRET is not set" in done.stderr
