"""Check runs, with the limits GitHub enforces on them.

Annotations accumulate across requests (each create/update appends), which is how an app posts
more than 50. Limits a schema cannot state are checked here too, and refused with 422 like GitHub.
"""

from __future__ import annotations

from .api import ApiError, Context, Reply, handles, not_found
from .model import CheckRun, PullRequest, Repo, now_iso

MAX_ANNOTATIONS = 50
MAX_OUTPUT = 65_535
MAX_ANNOTATION_TEXT = 64 * 1024
MAX_ANNOTATION_TITLE = 255


def _invalid(detail: str) -> ApiError:
    return ApiError(422, f"Invalid request.\n\n{detail}")


def check_output_limits(output: dict | None) -> None:
    """GitHub's limits on a check run's output, including those the schema leaves out."""
    if not output:
        return
    for key in ("summary", "text"):
        value = output.get(key)
        if isinstance(value, str) and len(value) > MAX_OUTPUT:
            raise _invalid(f"output.{key} is too long ({len(value)} characters; the maximum is {MAX_OUTPUT}).")
    annotations = output.get("annotations") or []
    if len(annotations) > MAX_ANNOTATIONS:
        raise _invalid(f"Only {MAX_ANNOTATIONS} annotations are allowed per request; {len(annotations)} were sent.")
    for i, a in enumerate(annotations):
        where = f"output.annotations[{i}]"
        if a["end_line"] < a["start_line"]:
            raise _invalid(f"{where}: end_line must not be before start_line.")
        if ("start_column" in a or "end_column" in a) and a["start_line"] != a["end_line"]:
            raise _invalid(f"{where}: start_column and end_column may only be used when start_line and end_line are the same.")
        if len(a["message"].encode()) > MAX_ANNOTATION_TEXT or len(a.get("raw_details", "").encode()) > MAX_ANNOTATION_TEXT:
            raise _invalid(f"{where}: message and raw_details may be at most 64 KB.")
        if len(a.get("title", "")) > MAX_ANNOTATION_TITLE:
            raise _invalid(f"{where}: title may be at most {MAX_ANNOTATION_TITLE} characters.")


def _within_limits(ctx: Context, output: dict | None) -> None:
    """Breaking a check-run limit is the app's mistake, so it is a violation as well as a 422."""
    try:
        check_output_limits(output)
    except ApiError as exc:
        ctx.double.violations.append(f"check run output: {exc.message.splitlines()[-1]}")
        raise


def _apply(run: CheckRun, body: dict) -> None:
    """Apply a create/update body; refused as a whole (nothing changed) when it is inconsistent."""
    # GitHub: giving a conclusion completes the run; completing it needs a conclusion.
    status = "completed" if "conclusion" in body else body.get("status", run.status)
    conclusion = body.get("conclusion", run.conclusion)
    if status == "completed" and conclusion is None:
        raise _invalid('"conclusion" wasn\'t supplied.')
    for key in ("name", "details_url", "external_id", "started_at"):
        if key in body:
            setattr(run, key, body[key])
    run.status, run.conclusion = status, conclusion
    if status == "completed":
        run.completed_at = body.get("completed_at") or run.completed_at or now_iso()
    output = body.get("output")
    if output:
        run.output.update({k: output[k] for k in ("title", "summary", "text") if k in output})
        run.annotations.extend(output.get("annotations") or [])


def pulls_for(repo: Repo, head_sha: str) -> list[PullRequest]:
    """Open pull requests of this repository whose head is `head_sha`; a fork's are not listed."""
    return [pr for pr in repo.pulls.values() if pr.state == "open" and pr.head_repo is None and pr.head_sha == head_sha]


def _render(ctx: Context, run: CheckRun) -> dict:
    return ctx.render.check_run(ctx.repo, run, pulls_for(ctx.repo, run.head_sha))


@handles("checks/create")
async def create(ctx: Context) -> Reply:
    body = ctx.body
    _within_limits(ctx, body.get("output"))
    sha = body["head_sha"]
    if sha not in ctx.repo.commits:
        raise _invalid(f"No commit found for SHA: {sha}")
    run = CheckRun(id=ctx.double.next_id(), app=ctx.app, head_sha=sha, name=body["name"], status="queued",
                   conclusion=None, started_at=now_iso(), completed_at=None, external_id="", details_url=None,
                   output={"title": None, "summary": None, "text": None})
    _apply(run, body)
    ctx.repo.check_runs[run.id] = run
    return Reply(_render(ctx, run), status=201)


@handles("checks/update")
async def update(ctx: Context) -> Reply:
    run = ctx.repo.check_runs.get(ctx.params["check_run_id"])
    if run is None:
        raise not_found()
    if run.app is not ctx.app:
        raise ApiError(403, "Invalid app_id: only the app that created a check run can update it")
    _within_limits(ctx, ctx.body.get("output"))
    _apply(run, ctx.body)
    run.requests += 1
    return Reply(_render(ctx, run))


@handles("checks/list-for-ref")
async def list_for_ref(ctx: Context) -> Reply:
    sha = ctx.repo.resolve(ctx.params["ref"])
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ctx.params['ref']}")
    runs = [r for r in ctx.repo.check_runs.values() if r.head_sha == sha]
    if "check_name" in ctx.params:
        runs = [r for r in runs if r.name == ctx.params["check_name"]]
    if "status" in ctx.params:
        runs = [r for r in runs if r.status == ctx.params["status"]]
    if "app_id" in ctx.params:
        runs = [r for r in runs if r.app.id == ctx.params["app_id"]]
    if ctx.params.get("filter", "latest") == "latest":
        latest: dict[tuple[int, str], CheckRun] = {}
        for run in runs:
            latest[(run.app.id, run.name)] = run  # ids grow, so the last one is the newest
        runs = list(latest.values())
    runs.sort(key=lambda r: -r.id)
    page = ctx.paginate(runs)
    return Reply({"total_count": len(runs), "check_runs": [_render(ctx, r) for r in page.data]}, headers=page.headers)
