"""Signed webhook deliveries, built from GitHub's example payloads and the double's state.

`payload()` takes the example of an event and action (tests/data/webhooks, cut from
`@octokit/webhooks-examples`), keeps every field a real delivery carries, and rewrites the
identities (installation, repository, pull request, shas, URLs) to the double's objects, so the
app can then read the same repository through the double's REST API. `deliver()` signs and sends
it the way GitHub does.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import uuid
from typing import TYPE_CHECKING, Any

import aiohttp

from .model import IssueComment, ReviewComment
from .render import _rewrite, example, node_id

if TYPE_CHECKING:
    from .model import CheckRun, Installation, PullRequest, Repo, Review, User


def signature_256(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookSender:
    """Mixed into GitHubDouble: it needs `render`, `url` and `next_id`."""

    def payload(self, event: str, action: str | None = None, *, installation: Installation,
                repo: Repo | None = None, pull: PullRequest | None = None, sender: User | None = None,
                before: str | None = None, label: str | None = None, changes: dict | None = None,
                check_run: CheckRun | None = None, branch: str | None = None,
                comment: IssueComment | ReviewComment | None = None, review: Review | None = None) -> dict:
        """GitHub's example for `event.action`, retargeted at the double's installation/repo/pull.

        `repo` defaults to the pull request's; `before` is the previous head of a `synchronize`;
        `label` the label of `labeled`/`unlabeled`; `changes` the `edited` changes; `check_run`
        a run of the double for `check_run` events (else the example's run, on the pull's head);
        `branch` the pushed branch of a `push` (default: the repository's default branch), whose
        head is `after` and whose previous head is `before`.
        `comment` the pull's comment of `issue_comment` / `pull_request_review_comment` (its author
        is the sender); `review` the pull's review of `pull_request_review`.
        """
        repo = repo or (pull.repo if pull is not None else None)
        data = copy.deepcopy(example(f"{event}.{action}" if action else event))
        old_repo = (data.get("repository") or {}).get("full_name")
        data = _rewrite(data, self.render.replacements(old_repo, repo.full_name if repo else None))
        if "installation" in data:
            data["installation"] = self._installation(data["installation"], installation)
        if repo is not None and "repository" in data:
            self._patch_repository(data["repository"], repo)
        if "sender" in data:
            data["sender"] = self.render.user(sender or (pull.user if pull else installation.account))
        if event == "installation":
            data["repositories"] = [self._repo_brief(r) for r in self._installed(installation)]
        if event == "installation_repositories":
            data["repositories_added"] = [self._repo_brief(r) for r in self._installed(installation)]
            data["repositories_removed"] = []
        if pull is not None and event == "pull_request":
            data["number"] = pull.number
            data["pull_request"] = self.render.pull(pull)
            if action == "synchronize":
                data["before"], data["after"] = before or pull.merge_base, pull.head_sha
            if action in ("labeled", "unlabeled"):
                data["label"] = self.render.label(pull.repo, label or (pull.labels[-1] if pull.labels else "label"))
            if action == "edited" and changes is not None:
                data["changes"] = changes
        if pull is not None and event in ("issue_comment", "pull_request_review_comment", "pull_request_review"):
            self._patch_conversation(data, event, pull, comment, review, explicit_sender=sender is not None)
        if event == "check_run":
            self._patch_check_run(data["check_run"], installation, repo, pull, check_run)
        if event == "check_suite":
            self._patch_suite(data["check_suite"], installation, pull, before)
        if event == "push" and repo is not None:
            self._patch_push(data, repo, branch or repo.default_branch, before)
        return data

    async def deliver(self, url: str, event: str, payload: dict, *, secret: str,
                      delivery_id: str | None = None) -> tuple[int, str]:
        """POST one delivery as GitHub does (headers, HMAC signatures); returns (status, body)."""
        body = json.dumps(payload).encode()
        inst = self.installations.get((payload.get("installation") or {}).get("id"))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "GitHub-Hookshot/double",
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery_id or str(uuid.uuid4()),
            "X-GitHub-Hook-ID": "1",
            "X-GitHub-Hook-Installation-Target-Type": "integration",
            "X-GitHub-Hook-Installation-Target-ID": str(inst.app.id if inst else ""),
            "X-Hub-Signature": "sha1=" + hmac.new(secret.encode(), body, hashlib.sha1).hexdigest(),
            "X-Hub-Signature-256": signature_256(body, secret),
        }
        async with aiohttp.ClientSession() as session:
            async with session.post(url, data=body, headers=headers) as response:
                return response.status, await response.text()

    # --- helpers -----------------------------------------------------------------------------

    def _patch_push(self, data: dict, repo: Repo, branch: str, before: str | None) -> None:
        """A push of `branch` to its current head, as GitHub sends one (not a deletion)."""
        after = repo.branches[branch]
        data.update(ref=f"refs/heads/{branch}", before=before or "0" * 40, after=after, created=before is None,
                    deleted=False, forced=False, base_ref=None,
                    compare=f"https://github.com/{repo.full_name}/compare/{(before or '0' * 12)[:12]}...{after[:12]}")

    def _installed(self, installation: Installation) -> list[Repo]:
        return [self.repos[name] for name in sorted(installation.repositories) if name in self.repos]

    def _installation(self, template: dict, inst: Installation) -> dict:
        out = dict(template, id=inst.id, node_id=node_id("Installation", inst.id))
        if "account" in template:  # the full object of installation events
            out.update(account=self.render.user(inst.account), app_id=inst.app.id, target_id=inst.account.id,
                       target_type=inst.account.type, permissions=dict(inst.app.permissions),
                       events=list(inst.app.events), access_tokens_url=f"{self.render.api}/app/installations/{inst.id}/access_tokens",
                       html_url=f"https://github.com/settings/installations/{inst.id}")
        return out

    def _patch_repository(self, data: dict, repo: Repo) -> None:
        data.update(id=repo.id, node_id=node_id("Repository", repo.id), name=repo.name, full_name=repo.full_name,
                    private=repo.private, owner=self.render.user(repo.owner), default_branch=repo.default_branch)
        if "master_branch" in data:
            data["master_branch"] = repo.default_branch

    def _repo_brief(self, repo: Repo) -> dict:
        return {"id": repo.id, "node_id": node_id("Repository", repo.id), "name": repo.name,
                "full_name": repo.full_name, "private": repo.private}

    def _app(self, template: dict, inst: Installation) -> dict:
        rendered = self.render.app(inst.app)
        return {**template, **{k: rendered[k] for k in ("id", "slug", "node_id", "owner", "name", "html_url") if k in rendered}}

    def _patch_check_run(self, data: dict, inst: Installation, repo: Repo | None, pull: PullRequest | None,
                         run: CheckRun | None) -> None:
        head = run.head_sha if run else (pull.head_sha if pull else data["head_sha"])
        pulls: list[Any] = [self.render.pull_minimal(pull)] if pull is not None and pull.head_repo is None else []
        data.update(head_sha=head, pull_requests=pulls, app=self._app(data["app"], inst))
        if run is not None:
            data.update(id=run.id, name=run.name, status=run.status, conclusion=run.conclusion,
                        external_id=run.external_id)
            if repo is not None:
                data["url"] = f"{self.render.repo_url(repo)}/check-runs/{run.id}"
        else:
            data.update(id=self.next_id(), name="Reviewer")
        suite = data["check_suite"]
        suite.update(head_sha=head, pull_requests=pulls, app=self._app(suite["app"], inst))
        if pull is not None:
            suite["head_branch"] = pull.head_ref

    def _patch_conversation(self, data: dict, event: str, pull: PullRequest,
                            comment: IssueComment | ReviewComment | None, review: Review | None, *,
                            explicit_sender: bool) -> None:
        """Without `comment` or `review`, the example's own stays (retargeted at the double's repository)."""
        if event == "issue_comment":
            data["issue"] = self.render.issue(pull)
        else:
            data["pull_request"] = self.render.pull(pull)
        if event == "issue_comment" and isinstance(comment, IssueComment):
            data["comment"] = self.render.issue_comment(pull, comment)
        if event == "pull_request_review_comment" and isinstance(comment, ReviewComment):
            data["comment"] = self.render.review_comment(pull, comment)
        if event == "pull_request_review" and review is not None:
            data["review"] = self.render.review(pull, review)
        author = comment.user if comment is not None else review.user if review is not None else None
        if author is not None and "sender" in data and not explicit_sender:
            data["sender"] = self.render.user(author)

    def _patch_suite(self, data: dict, inst: Installation, pull: PullRequest | None, before: str | None) -> None:
        if pull is None:
            return
        data.update(head_sha=pull.head_sha, head_branch=pull.head_ref, after=pull.head_sha, before=before or pull.merge_base,
                    pull_requests=[self.render.pull_minimal(pull)] if pull.head_repo is None else [],
                    app=self._app(data["app"], inst))
        if isinstance(data.get("head_commit"), dict):
            data["head_commit"]["id"] = pull.head_sha
            data["head_commit"]["tree_id"] = pull.repo.commits[pull.head_sha].tree_sha
