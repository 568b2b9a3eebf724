""""Simulate": plan a pull request by number exactly as a delivery would, posting nothing.

The pipeline's own reading and planning steps run (`gather`, then `plan_for`), so the plan shown
is the one a delivery would make now; nothing is written to GitHub (no check run, no review).
"""

from __future__ import annotations

from typing import Any

from bot.config.admin import AdminConfig
from bot.github import GitHubApp
from bot.github.repos import pull_request


async def simulate_plan(app: GitHubApp, installation_id: int, admin: AdminConfig | None, owner: str, repo: str,
                        number: int) -> dict[str, Any]:
    """The plan of pull request `number` (raises GitHubError: a 404 when it does not exist)."""
    # Imported here: the pipeline imports the server's types, and the server imports the console.
    from bot.pipeline.configure import plan_for
    from bot.pipeline.gather import gather
    from bot.pipeline.targets import Target

    gh = app.installation(installation_id)
    pull = await pull_request(gh, owner, repo, number)
    target = Target(owner, repo, number, pull["head"]["sha"], "manual", pull)
    plan, _ = plan_for(admin, await gather(gh, target), target)
    return plan.to_json()
