"""GitHub's JSON shapes for the double's state.

Users, repositories and pull requests are rendered from GitHub's own example payloads (the cut in
`tests/data/webhooks/`) with names, ids and URLs rewritten, so they carry every field a real answer
carries; the double checks each answer against the response schemas of the REST description.
"""

from __future__ import annotations

import base64
import copy
import json
import zlib
from functools import cache
from pathlib import Path
from typing import Any

from .git import Commit, FileDiff, blob_sha
from .model import App, CheckRun, Installation, Issue, IssueComment, PullRequest, Repo, Review, ReviewComment, User

WEBHOOKS = Path(__file__).resolve().parent.parent.parent / "data" / "webhooks"
HTML = "https://github.com"


@cache
def example(name: str) -> dict:
    """One of GitHub's example deliveries, e.g. `pull_request.opened`."""
    return json.loads((WEBHOOKS / f"{name}.json").read_text())


def node_id(kind: str, ident: int) -> str:
    return base64.b64encode(f"0{kind}{ident}".encode()).decode()


def _rewrite(value: Any, replacements: list[tuple[str, str]]) -> Any:
    if isinstance(value, dict):
        return {k: _rewrite(v, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, replacements) for v in value]
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
    return value


class Renderer:
    def __init__(self, api_url: str, html_url: str = HTML) -> None:
        self.api = api_url.rstrip("/")
        self.html = html_url.rstrip("/")  # github.com, or a GitHub Enterprise Server's own origin

    def _retarget(self, template: dict, old: str, new: str) -> dict:
        return _rewrite(copy.deepcopy(template), self.replacements(old, new))

    def replacements(self, old: str | None = None, new: str | None = None) -> list[tuple[str, str]]:
        """GitHub.com's API URL -> the double's, and one name for another (in URLs and `git@host:name`)."""
        names = [(f"/{old}", f"/{new}"), (f":{old}", f":{new}")] if old and new else []
        return [("https://api.github.com", self.api), ("http://github.com", self.html), *names]

    def user(self, user: User) -> dict:
        template = example("pull_request.opened")["pull_request"]["user"]
        out = self._retarget(template, template["login"], user.login)
        out.update(login=user.login, id=user.id, node_id=node_id("User", user.id), type=user.type,
                   avatar_url=f"https://avatars.githubusercontent.com/u/{user.id}?v=4")
        return out

    def repo(self, repo: Repo) -> dict:
        template = example("pull_request.opened")["pull_request"]["base"]["repo"]
        out = self._retarget(template, template["full_name"], repo.full_name)
        out.update(id=repo.id, node_id=node_id("Repository", repo.id), name=repo.name, full_name=repo.full_name,
                   private=repo.private, visibility="private" if repo.private else "public",
                   owner=self.user(repo.owner), default_branch=repo.default_branch, fork=False, size=1)
        out.pop("custom_properties", None)  # webhook-only field
        return out

    def full_repo(self, repo: Repo) -> dict:
        """`GET /repos/{owner}/{repo}`: the repository of a payload, plus the counts only that answer has."""
        return {**self.repo(repo), "has_discussions": False, "network_count": 0, "subscribers_count": 0}

    def repo_url(self, repo: Repo) -> str:
        return f"{self.api}/repos/{repo.full_name}"

    def pull(self, pr: PullRequest) -> dict:
        template = example("pull_request.opened")["pull_request"]
        old = template["base"]["repo"]["full_name"]
        out = self._retarget(template, f"{old}/pull/{template['number']}", f"{old}/pull/{pr.number}")
        out = _rewrite(out, [(f"/pulls/{template['number']}", f"/pulls/{pr.number}"),
                             (f"/issues/{template['number']}", f"/issues/{pr.number}"),
                             (f"/{old}/", f"/{pr.repo.full_name}/"), (template["head"]["sha"], pr.head_sha)])
        files = pr.files()
        head_repo = pr.head_repo or pr.repo
        out.update(
            id=pr.id, node_id=node_id("PullRequest", pr.id), number=pr.number, state=pr.state, title=pr.title,
            body=pr.body, user=self.user(pr.user), created_at=pr.created_at, updated_at=pr.created_at,
            draft=pr.draft, merged=pr.merged, assignee=None, assignees=[], requested_reviewers=[],
            labels=[self.label(pr.repo, name) for name in pr.labels], locked=False,
            comments=len(pr.comments), review_comments=len(pr.review_comments), commits=pr.commit_count(),
            additions=sum(f.additions for f in files), deletions=sum(f.deletions for f in files),
            changed_files=len(files), author_association="CONTRIBUTOR", mergeable=True, mergeable_state="clean",
            head=self._branch(head_repo, pr.head_ref, pr.head_sha), base=self._branch(pr.repo, pr.base_ref, pr.base_sha),
        )
        return out

    def _branch(self, repo: Repo, ref: str, sha: str) -> dict:
        return {"label": f"{repo.owner.login}:{ref}", "ref": ref, "sha": sha,
                "user": self.user(repo.owner), "repo": self.repo(repo)}

    def pull_minimal(self, pr: PullRequest) -> dict:
        head_repo = pr.head_repo or pr.repo
        return {"url": f"{self.repo_url(pr.repo)}/pulls/{pr.number}", "id": pr.id, "number": pr.number,
                "head": {"ref": pr.head_ref, "sha": pr.head_sha,
                         "repo": {"id": head_repo.id, "url": self.repo_url(head_repo), "name": head_repo.name}},
                "base": {"ref": pr.base_ref, "sha": pr.base_sha,
                         "repo": {"id": pr.repo.id, "url": self.repo_url(pr.repo), "name": pr.repo.name}}}

    def label(self, repo: Repo, name: str) -> dict:
        ident = zlib.crc32(f"{repo.id}:{name}".encode())
        return {"id": ident, "node_id": node_id("Label", ident), "url": f"{self.repo_url(repo)}/labels/{name}",
                "name": name, "color": "d73a4a", "default": False, "description": None}

    def git_user(self, commit: Commit) -> dict:
        return {"name": commit.author, "email": f"{commit.author}@users.noreply.github.com", "date": commit.date}

    def commit(self, repo: Repo, commit: Commit) -> dict:
        base = self.repo_url(repo)
        return {
            "url": f"{base}/commits/{commit.sha}", "sha": commit.sha, "node_id": node_id("Commit", zlib.crc32(commit.sha.encode())),
            "html_url": f"{self.html}/{repo.full_name}/commit/{commit.sha}", "comments_url": f"{base}/commits/{commit.sha}/comments",
            "commit": {"url": f"{base}/git/commits/{commit.sha}", "author": self.git_user(commit),
                       "committer": self.git_user(commit), "message": commit.message, "comment_count": 0,
                       "tree": {"sha": commit.tree_sha, "url": f"{base}/git/trees/{commit.tree_sha}"},
                       "verification": {"verified": False, "reason": "unsigned", "payload": None, "signature": None,
                                        "verified_at": None}},
            "author": None, "committer": None,
            "parents": [{"sha": p, "url": f"{base}/commits/{p}", "html_url": f"{self.html}/{repo.full_name}/commit/{p}"}
                        for p in commit.parents],
        }

    def diff_entry(self, repo: Repo, diff: FileDiff, head_sha: str) -> dict:
        base = self.repo_url(repo)
        out = {"sha": diff.sha, "filename": diff.path, "status": diff.status, "additions": diff.additions,
               "deletions": diff.deletions, "changes": diff.additions + diff.deletions,
               "blob_url": f"{self.html}/{repo.full_name}/blob/{head_sha}/{diff.path}",
               "raw_url": f"{self.html}/{repo.full_name}/raw/{head_sha}/{diff.path}",
               "contents_url": f"{base}/contents/{diff.path}?ref={head_sha}"}
        if diff.patch:
            out["patch"] = diff.patch
        if diff.previous_path:
            out["previous_filename"] = diff.previous_path
        return out

    def content_file(self, repo: Repo, path: str, text: str, ref: str, *, inline_limit: int) -> dict:
        data = text.encode()
        sha = blob_sha(text)
        encoded = base64.b64encode(data).decode()
        content = "\n".join(encoded[i:i + 60] for i in range(0, len(encoded), 60)) + ("\n" if encoded else "")
        too_large = len(data) > inline_limit  # GitHub inlines at most 1 MB; beyond it says "none"
        return {**self.content_entry(repo, path, "file", sha, len(data), ref),
                "content": "" if too_large else content, "encoding": "none" if too_large else "base64"}

    def content_entry(self, repo: Repo, path: str, kind: str, sha: str, size: int, ref: str) -> dict:
        base = self.repo_url(repo)
        git = f"{base}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}"
        html = f"{self.html}/{repo.full_name}/{'blob' if kind == 'file' else 'tree'}/{ref}/{path}"
        return {"type": kind, "name": path.rsplit("/", 1)[-1], "path": path, "sha": sha, "size": size,
                "url": f"{base}/contents/{path}?ref={ref}", "git_url": git, "html_url": html,
                "download_url": f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{path}" if kind == "file" else None,
                "_links": {"self": f"{base}/contents/{path}?ref={ref}", "git": git, "html": html}}

    def app(self, app: App) -> dict:
        return {"id": app.id, "slug": app.slug, "client_id": f"Iv1.{app.id:016x}", "node_id": node_id("App", app.id),
                "owner": self.user(app.owner), "name": app.name, "description": "", "external_url": "https://example.com",
                "html_url": f"{self.html}/apps/{app.slug}", "created_at": "2024-01-01T00:00:00Z",
                "updated_at": "2024-01-01T00:00:00Z", "permissions": dict(app.permissions), "events": list(app.events),
                "installations_count": 1}

    def installation(self, inst: Installation) -> dict:
        return {"id": inst.id, "account": self.user(inst.account), "app_id": inst.app.id, "app_slug": inst.app.slug,
                "client_id": f"Iv1.{inst.app.id:016x}", "repository_selection": "selected",
                "target_id": inst.account.id, "target_type": inst.account.type,
                "permissions": dict(inst.app.permissions), "events": list(inst.app.events),
                "access_tokens_url": f"{self.api}/app/installations/{inst.id}/access_tokens",
                "repositories_url": f"{self.api}/installation/repositories",
                "html_url": f"{self.html}/settings/installations/{inst.id}",
                "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
                "single_file_name": None, "suspended_by": None, "suspended_at": None}

    def check_run(self, repo: Repo, run: CheckRun, pulls: list[PullRequest]) -> dict:
        base = self.repo_url(repo)
        return {"id": run.id, "node_id": node_id("CheckRun", run.id), "head_sha": run.head_sha, "name": run.name,
                "external_id": run.external_id, "url": f"{base}/check-runs/{run.id}",
                "html_url": f"{self.html}/{repo.full_name}/runs/{run.id}", "details_url": run.details_url,
                "status": run.status, "conclusion": run.conclusion, "started_at": run.started_at,
                "completed_at": run.completed_at,
                "output": {"title": run.output.get("title"), "summary": run.output.get("summary"),
                           "text": run.output.get("text"), "annotations_count": len(run.annotations),
                           "annotations_url": f"{base}/check-runs/{run.id}/annotations"},
                "check_suite": {"id": run.id + 1}, "app": self.app(run.app),
                "pull_requests": [self.pull_minimal(pr) for pr in pulls]}

    def review(self, pr: PullRequest, review: Review) -> dict:
        base = self.repo_url(pr.repo)
        html = f"{self.html}/{pr.repo.full_name}/pull/{pr.number}#pullrequestreview-{review.id}"
        out = {"id": review.id, "node_id": node_id("PullRequestReview", review.id), "user": self.user(review.user),
               "body": review.body, "state": review.state, "html_url": html,
               "pull_request_url": f"{base}/pulls/{pr.number}", "author_association": "NONE",
               "_links": {"html": {"href": html}, "pull_request": {"href": f"{base}/pulls/{pr.number}"}},
               "commit_id": review.commit_id}
        if review.submitted_at:
            out["submitted_at"] = review.submitted_at
        return out

    def review_comment(self, pr: PullRequest, c: ReviewComment) -> dict:
        base = self.repo_url(pr.repo)
        html = f"{self.html}/{pr.repo.full_name}/pull/{pr.number}#discussion_r{c.id}"
        return {"url": f"{base}/pulls/comments/{c.id}", "id": c.id, "node_id": node_id("PullRequestReviewComment", c.id),
                "pull_request_review_id": c.review_id, "diff_hunk": c.diff_hunk, "path": c.path, "commit_id": c.commit_id,
                "original_commit_id": c.commit_id, "user": self.user(c.user), "body": c.body, "created_at": c.created_at,
                "updated_at": c.created_at, "html_url": html, "pull_request_url": f"{base}/pulls/{pr.number}",
                "author_association": "NONE", "line": c.line, "original_line": c.line, "side": c.side,
                "start_line": c.start_line, "original_start_line": c.start_line, "start_side": c.start_side,
                "_links": {"self": {"href": f"{base}/pulls/comments/{c.id}"}, "html": {"href": html},
                           "pull_request": {"href": f"{base}/pulls/{pr.number}"}},
                **({"in_reply_to_id": c.in_reply_to_id} if c.in_reply_to_id else {})}

    def issue(self, pr: PullRequest) -> dict:
        """The pull request as an issue (what `issue_comment` deliveries carry), `pull_request` set."""
        base = self.repo_url(pr.repo)
        html = f"{self.html}/{pr.repo.full_name}/pull/{pr.number}"
        out = self._issue_fields(pr.repo, pr.number, pr.id, html, pr.title, pr.body, pr.user, pr.labels, pr.state,
                                 len(pr.comments), pr.created_at)
        return {**out, "draft": pr.draft,
                "pull_request": {"url": f"{base}/pulls/{pr.number}", "html_url": html, "diff_url": f"{html}.diff",
                                 "patch_url": f"{html}.patch", "merged_at": None}}

    def plain_issue(self, issue: Issue) -> dict:
        """An issue that is no pull request (`GET /repos/{owner}/{repo}/issues/{issue_number}`)."""
        html = f"{self.html}/{issue.repo.full_name}/issues/{issue.number}"
        out = self._issue_fields(issue.repo, issue.number, issue.id, html, issue.title, issue.body, issue.user, [],
                                 issue.state, len(issue.comments), issue.created_at)
        out.pop("draft", None)  # only pull requests have it
        closed = issue.state == "closed"
        return {**out, "closed_at": issue.created_at if closed else None,
                "state_reason": "completed" if closed else None}

    def _issue_fields(self, repo: Repo, number: int, ident: int, html: str, title: str, body: str | None, user: User,
                      labels: list[str], state: str, comments: int, created_at: str) -> dict:
        template = example("issue_comment.created")["issue"]
        base = self.repo_url(repo)
        return {**template, "url": f"{base}/issues/{number}", "repository_url": base,
                "labels_url": f"{base}/issues/{number}/labels{{/name}}",
                "comments_url": f"{base}/issues/{number}/comments",
                "events_url": f"{base}/issues/{number}/events", "html_url": html,
                "id": ident, "node_id": node_id("Issue" if "/issues/" in html else "PullRequest", ident),
                "number": number, "title": title, "user": self.user(user),
                "labels": [self.label(repo, name) for name in labels], "state": state, "assignee": None,
                "assignees": [], "milestone": None, "comments": comments, "created_at": created_at,
                "updated_at": created_at, "body": body}

    def collaborator_permission(self, user: User, permission: str) -> dict:
        """GitHub folds maintain into write and triage into read in `permission`; `role_name` is exact."""
        folded = {"maintain": "write", "triage": "read"}.get(permission, permission)
        return {"permission": folded, "role_name": permission,
                "user": {**self.user(user), "role_name": permission}}

    def issue_comment(self, on: PullRequest | Issue, c: IssueComment) -> dict:
        base = self.repo_url(on.repo)
        kind = "issues" if isinstance(on, Issue) else "pull"
        return {"id": c.id, "node_id": node_id("IssueComment", c.id), "url": f"{base}/issues/comments/{c.id}",
                "html_url": f"{self.html}/{on.repo.full_name}/{kind}/{on.number}#issuecomment-{c.id}", "body": c.body,
                "user": self.user(c.user), "created_at": c.created_at, "updated_at": c.updated_at,
                "issue_url": f"{base}/issues/{on.number}", "author_association": "NONE"}
