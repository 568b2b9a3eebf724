"""`/app` and installation access tokens: the only routes that take the app's JWT."""

from __future__ import annotations

from .api import Context, Reply, handles, not_found


@handles("apps/get-authenticated")
async def get_app(ctx: Context) -> Reply:
    return Reply(ctx.render.app(ctx.app))


@handles("apps/create-installation-access-token")
async def create_token(ctx: Context) -> Reply:
    inst = ctx.double.installations.get(ctx.params["installation_id"])
    if inst is None or inst.app is not ctx.app:
        raise not_found()
    token, expires_at = ctx.double.issue_token(inst)
    return Reply({"token": token, "expires_at": expires_at, "permissions": dict(inst.app.permissions),
                  "repository_selection": "selected"}, status=201)
