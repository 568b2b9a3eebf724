"""The routes that take the app's JWT: `/app`, installation access tokens, a repository's installation."""

from __future__ import annotations

from .api import Context, Reply, handles, not_found

# Operations outside `/app` that GitHub authenticates with the app's JWT, not an installation token.
JWT_OPERATIONS = frozenset({"apps/get-repo-installation"})


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


@handles("apps/get-repo-installation")
async def get_repo_installation(ctx: Context) -> Reply:
    """The app's installation that reaches the repository; 404 when none does (or no such repository)."""
    wanted = f"{ctx.params['owner']}/{ctx.params['repo']}".lower()  # GitHub ignores case in names
    for inst in ctx.double.installations.values():
        if inst.app is ctx.app and any(name.lower() == wanted for name in inst.repositories):
            return Reply(ctx.render.installation(inst))
    raise not_found()
