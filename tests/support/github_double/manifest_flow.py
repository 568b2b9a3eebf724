"""GitHub's App manifest flow (docs: "Registering a GitHub App from a manifest"), both halves.

1. The web half, outside the REST API: a browser POSTs a form with `manifest` (JSON) to
   `/settings/apps/new?state=…` (or `/organizations/{org}/settings/apps/new?state=…`) on GitHub's
   web host; GitHub registers the app once the person confirms, and sends the browser to the
   manifest's `redirect_url` with `?code=…&state=…`. The double confirms at once.
2. The REST half, `POST /app-manifests/{code}/conversions` (operation `apps/create-from-manifest`,
   no authentication): the code, once, within an hour, for the app's id, private key (`pem`),
   webhook secret, client id and client secret. A code used or unknown answers 404.

The app registered is an ordinary app of the double: its JWTs verify, and it can be installed.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .api import ApiError, Context, Reply, handles
from .model import App, User, person

CODE_LIFETIME = 3600  # GitHub: all three steps of the flow within one hour
ACCESS = {"read", "write"}


@dataclass
class Registration:
    """One app registered through the flow, and what its conversion hands over."""

    app: App
    pem: str = field(repr=False)
    client_secret: str = field(repr=False)
    manifest: dict
    created: float
    converted: bool = False


def manifest_problems(manifest: object) -> list[str]:
    """What GitHub's form refuses in a manifest (the fields its docs list)."""
    if not isinstance(manifest, dict):
        return ["the manifest is not a JSON object"]
    problems = []
    if not isinstance(manifest.get("url"), str) or not manifest["url"].startswith(("http://", "https://")):
        problems.append("url is required: the app's homepage, a full URL")
    hook = manifest.get("hook_attributes")
    if hook is not None and (not isinstance(hook, dict) or not str(hook.get("url", "")).startswith(("http://", "https://"))):
        problems.append("hook_attributes.url must be a full URL")
    for key in ("redirect_url", "setup_url"):
        if key in manifest and not str(manifest[key]).startswith(("http://", "https://")):
            problems.append(f"{key} must be a full URL")
    callbacks = manifest.get("callback_urls", [])
    if not isinstance(callbacks, list) or len(callbacks) > 10:
        problems.append("callback_urls is a list of at most 10 URLs")
    permissions = manifest.get("default_permissions", {})
    if not isinstance(permissions, dict) or not all(v in ACCESS for v in permissions.values()):
        problems.append("default_permissions maps a permission to read or write")
    events = manifest.get("default_events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        problems.append("default_events is a list of event names")
    return problems


class ManifestFlow:
    """The double's registrations by code; `posted` keeps every form received, for tests."""

    def __init__(self, double) -> None:
        self.double = double
        self.by_code: dict[str, Registration] = {}
        self.posted: list[dict] = []  # {"path", "state", "manifest"}
        self.signed_in = person("octocat")  # who fills GitHub's form in the browser

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/settings/apps/new", self.new_app)
        app.router.add_post("/organizations/{org}/settings/apps/new", self.new_app)

    async def new_app(self, request: web.Request) -> web.Response:
        form = await request.post()
        state = request.query.get("state")
        try:
            manifest = json.loads(str(form.get("manifest", "")))
        except ValueError:
            manifest = None
        self.posted.append({"path": request.path, "state": state, "manifest": manifest})
        problems = manifest_problems(manifest)
        if problems:
            return web.Response(status=422, text="Invalid GitHub App manifest: " + "; ".join(problems))
        org = request.match_info.get("org")
        owner = person(org, "Organization") if org else self.signed_in
        code = self.register(manifest, owner)
        target = manifest.get("redirect_url") or f"{self.double.origin}/settings/apps/{self.by_code[code].app.slug}"
        query = urlencode({"code": code, **({"state": state} if state is not None else {})})
        raise web.HTTPFound(f"{target}{'&' if urlsplit(target).query else '?'}{query}")

    def register(self, manifest: dict, owner: User) -> str:
        """Register the app the manifest describes, owned by `owner`; the code of its conversion."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()).decode()
        public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        name = str(manifest.get("name") or "My GitHub App")
        slug = "-".join(name.lower().split())
        app = self.double.add_app(public, slug=slug, webhook_secret=secrets.token_hex(20), owner=owner.login)
        app.name = name
        app.owner = owner
        app.permissions = {**dict(manifest.get("default_permissions") or {}), "metadata": "read"}
        app.events = list(manifest.get("default_events") or [])
        code = secrets.token_hex(10)
        self.by_code[code] = Registration(app, pem, secrets.token_hex(20), manifest, time.time())
        return code


@handles("apps/create-from-manifest")
async def create_from_manifest(ctx: Context) -> Reply:
    flow: ManifestFlow = ctx.double.manifest_flow
    registration = flow.by_code.get(ctx.params["code"])
    if registration is None or registration.converted or time.time() - registration.created > CODE_LIFETIME:
        raise ApiError(404, "Not Found")
    registration.converted = True
    app = registration.app
    data = {**ctx.render.app(app), "client_id": f"Iv1.{app.id:016x}", "client_secret": registration.client_secret,
            "webhook_secret": app.webhook_secret, "pem": registration.pem}
    return Reply(data, status=201)
