"""Reading a repository: the repository itself, a collaborator's permission, compare (merge base and changed files), trees and file contents."""

from __future__ import annotations

from .api import ApiError, Context, Reply, handles, not_found
from .git import blob_sha, tree_sha
from .model import Repo, person

COMPARE_MAX_FILES = 300  # GitHub lists at most 300 files in a comparison
COMPARE_MAX_COMMITS = 250
CONTENT_INLINE_LIMIT = 1024 * 1024  # larger files come back with encoding "none"


def _resolve_side(ctx: Context, side: str) -> str:
    repo = ctx.repo
    if ":" in side:  # USERNAME:REF names a ref of a fork in the same network
        owner, side = side.split(":", 1)
        fork = ctx.double.repos.get(f"{owner}/{repo.name}")
        if fork is None:
            raise not_found()
        repo.commits.update(fork.commits)
        repo = fork
    sha = repo.resolve(side)
    if sha is None:
        raise not_found()
    return sha


@handles("repos/compare-commits-with-basehead")
async def compare(ctx: Context) -> Reply:
    repo = ctx.repo
    base_ref, sep, head_ref = ctx.params["basehead"].partition("...")
    if not sep:
        raise not_found()
    base, head = _resolve_side(ctx, base_ref), _resolve_side(ctx, head_ref)
    mb = repo.merge_base(base, head)
    if mb is None:
        raise ApiError(404, f"No common ancestor between {base_ref} and {head_ref}.")
    ahead = repo.commits_between(mb, head)
    behind = repo.commits_between(mb, base)
    status = ("identical" if base == head else "ahead" if mb == base else "behind" if mb == head else "diverged")
    paginated = "page" in ctx.params or "per_page" in ctx.params
    if paginated:
        per_page = max(1, min(int(ctx.params.get("per_page", 30)), 100))
        page = max(1, int(ctx.params.get("page", 1)))
        listed = ahead[(page - 1) * per_page: page * per_page]
    else:
        page, listed = 1, ahead[:COMPARE_MAX_COMMITS]
    base_url = f"{ctx.render.repo_url(repo)}/compare/{base_ref}...{head_ref}"
    html = f"https://github.com/{repo.full_name}/compare/{base_ref}...{head_ref}"
    out = {
        "url": base_url, "html_url": html, "permalink_url": html, "diff_url": html + ".diff", "patch_url": html + ".patch",
        "base_commit": ctx.render.commit(repo, repo.commits[base]),
        "merge_base_commit": ctx.render.commit(repo, repo.commits[mb]),
        "status": status, "ahead_by": len(ahead), "behind_by": len(behind), "total_commits": len(ahead),
        "commits": [ctx.render.commit(repo, c) for c in listed],
    }
    if page == 1:  # changed files are listed on the first page only
        out["files"] = [ctx.render.diff_entry(repo, d, head) for d in repo.diff(mb, head)[:COMPARE_MAX_FILES]]
    return Reply(out)


def _tree_entries(ctx: Context, repo: Repo, files: dict[str, str], recursive: bool) -> list[dict]:
    base = ctx.render.repo_url(repo)
    dirs: dict[str, dict[str, str]] = {}
    for path, text in files.items():
        parts = path.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            dirs.setdefault(prefix, {})[path[len(prefix) + 1:]] = text
    entries = []
    for path in sorted([*files, *dirs], key=lambda p: p.split("/")):
        if not recursive and "/" in path:
            continue
        if path in dirs:
            sha = tree_sha(dirs[path])
            entries.append({"path": path, "mode": "040000", "type": "tree", "sha": sha, "url": f"{base}/git/trees/{sha}"})
        else:
            sha = blob_sha(files[path])
            entries.append({"path": path, "mode": "100644", "type": "blob", "sha": sha,
                            "size": len(files[path].encode()), "url": f"{base}/git/blobs/{sha}"})
    return entries


@handles("git/get-tree")
async def get_tree(ctx: Context) -> Reply:
    sha = ctx.repo.resolve(ctx.params["tree_sha"])
    if sha is None:
        raise not_found()
    commit = ctx.repo.commits[sha]
    entries = _tree_entries(ctx, ctx.repo, commit.files, "recursive" in ctx.params)
    limit = ctx.double.tree_entry_limit
    return Reply({"sha": commit.tree_sha, "url": f"{ctx.render.repo_url(ctx.repo)}/git/trees/{commit.tree_sha}",
                  "tree": entries[:limit], "truncated": len(entries) > limit})


@handles("repos/get-content")
async def get_content(ctx: Context) -> Reply:
    repo = ctx.repo
    ref = ctx.params.get("ref") or repo.default_branch
    sha = repo.resolve(ref)
    if sha is None:
        raise ApiError(404, f"No commit found for the ref {ref}")
    files = repo.commits[sha].files
    path = ctx.params["path"].strip("/")
    if path in files:
        return Reply(ctx.render.content_file(repo, path, files[path], ref, inline_limit=CONTENT_INLINE_LIMIT))
    prefix = path + "/"
    children: dict[str, dict[str, str] | str] = {}
    for name, text in files.items():
        if name.startswith(prefix):
            rest = name[len(prefix):]
            child = rest.split("/", 1)[0]
            if "/" in rest:
                children.setdefault(child, {})[rest[len(child) + 1:]] = text  # type: ignore[index]
            else:
                children[child] = text
    if not children:
        raise not_found()
    listing = []
    for child, value in sorted(children.items()):
        if isinstance(value, dict):
            listing.append(ctx.render.content_entry(repo, prefix + child, "dir", tree_sha(value), 0, ref))
        else:
            listing.append(ctx.render.content_entry(repo, prefix + child, "file", blob_sha(value),
                                                    len(value.encode()), ref))
    return Reply(listing)


@handles("repos/get-collaborator-permission-level")
async def collaborator_permission(ctx: Context) -> Reply:
    """Anyone not listed in `Repo.permissions` reads a public repository and nothing of a private one."""
    login = ctx.params["username"]
    listed = {name.lower(): level for name, level in ctx.repo.permissions.items()}
    permission = listed.get(login.lower(), "none" if ctx.repo.private else "read")
    return Reply(ctx.render.collaborator_permission(person(login), permission))


@handles("repos/get")
async def get_repository(ctx: Context) -> Reply:
    return Reply(ctx.render.full_repo(ctx.repo))
