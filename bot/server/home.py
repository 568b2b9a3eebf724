"""`GET /`: what this server is, its version, where to go, whether the GitHub App is configured.

Anyone may read it (it is where a browser lands on the server's address, and where GitHub's
manifest flow sent people back before `reviewer setup` existed), so it shows no secret and no
path on the server: whether the app is configured and from which kind of place, not the value.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from aiohttp import web

from bot.github import credentials
from bot.server.pages import link, page, text
from bot.server.settings import Settings


def version() -> str:
    try:
        return metadata.version("reviewer")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def documentation_url() -> str | None:
    """The package's `Documentation` project URL, when its metadata declares one."""
    try:
        urls = metadata.metadata("reviewer").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "documentation" and url.strip().startswith("https://"):
            return url.strip()
    return None


def app_source(settings: Settings) -> str | None:
    """Where the GitHub App's id came from, in words that name no path; None when unconfigured."""
    if settings.app_id is None or settings.private_key is None:
        return None
    source = settings.sources.get("GITHUB_APP_ID", "")
    if source == "env":
        return "the environment"
    if Path(source).parent.name == credentials.SECRET_NAME:
        return "the secret store (written by reviewer setup)"
    return "the settings file (--config)"


def setup_home(app: web.Application, settings: Settings) -> None:
    async def home(request: web.Request) -> web.Response:
        source = app_source(settings)
        configured = (f"<p>The GitHub App is configured (from {text(source)}).</p>" if source else
                      "<p>The GitHub App is <b>not configured</b>: run <code>reviewer setup</code>, or set "
                      "<code>GITHUB_APP_ID</code> and <code>GITHUB_PRIVATE_KEY</code>.</p>")
        base = settings.public_url or f"{request.scheme}://{request.host}"
        docs = documentation_url()
        body = (f"<p>Reviewer {text(version())} — a GitHub App that reviews pull requests as each repository's "
                "<code>.reviewer.yaml</code> says.</p>"
                + configured
                + "<ul>"
                f"<li>{link('/console/', 'The admin console')} (sign in)</li>"
                f"<li>GitHub delivers webhooks to <code>{text(base)}/webhook</code></li>"
                "<li>Probes: <code>/livez</code>, <code>/readyz</code>, <code>/healthz</code>; "
                "Prometheus: <code>/metrics</code></li>"
                + (f"<li>{link(docs, 'Documentation')}</li>" if docs else
                   "<li>Documentation: <code>README.md</code> and <code>docs/</code> of this release's source, "
                   "<code>docs/deploy.md</code> for deploying</li>")
                + "</ul>")
        return page("Reviewer", body)

    app.router.add_get("/", home)
