"""What the double remembers: apps, installations, repositories, pull requests and what the app wrote.

Tests build state through these objects (`Repo.commit`, `Repo.open_pull`, ...) and read back what
the app did (`Repo.check_runs`, `PullRequest.reviews`, `PullRequest.comments`). Responses are
rendered from this state by `render.py`.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from .git import Commit, FileDiff, ancestors, commit_sha, diff_trees, merge_base


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class User:
    login: str
    id: int
    type: str = "User"  # User | Organization | Bot


def person(login: str, kind: str = "User") -> User:
    """The user called `login`: the same login always has the same id."""
    return User(login, 100_000 + zlib.crc32(login.encode()) % 10**8, kind)


@dataclass
class App:
    id: int
    slug: str
    name: str
    owner: User
    public_key_pem: str = field(repr=False)
    webhook_secret: str
    bot: User  # `<slug>[bot]`, the author of everything the app writes
    permissions: dict[str, str] = field(default_factory=lambda: {
        "checks": "write", "contents": "read", "metadata": "read", "pull_requests": "write", "issues": "write"})
    events: list[str] = field(default_factory=lambda: ["pull_request", "check_run", "check_suite", "issue_comment",
                                                       "pull_request_review_comment", "pull_request_review"])


@dataclass
class Installation:
    id: int
    app: App
    account: User
    repositories: set[str]  # full names the installation may reach


@dataclass
class CheckRun:
    id: int
    app: App
    head_sha: str
    name: str
    status: str
    conclusion: str | None
    started_at: str
    completed_at: str | None
    external_id: str
    details_url: str | None
    output: dict  # title, summary, text: replaced by each request that sends them
    annotations: list[dict] = field(default_factory=list)  # appended by every request, as on GitHub
    requests: int = 1  # create + updates


@dataclass
class ReviewComment:
    id: int
    review_id: int
    path: str
    line: int | None
    side: str
    start_line: int | None
    start_side: str | None
    body: str
    commit_id: str
    user: User
    created_at: str
    diff_hunk: str
    in_reply_to_id: int | None = None  # a reply: the thread's first comment
    reactions: list[Reaction] = field(default_factory=list)

    def react(self, user: User, content: str = "-1") -> Reaction:
        """Someone reacts to the comment (GitHub sends no webhook for it)."""
        reaction = Reaction(self.id * 1000 + len(self.reactions) + 1, user, content, now_iso())
        self.reactions.append(reaction)
        return reaction


@dataclass
class Reaction:
    id: int
    user: User
    content: str
    created_at: str


@dataclass
class Review:
    id: int
    user: User
    body: str
    state: str  # APPROVED | CHANGES_REQUESTED | COMMENTED | DISMISSED | PENDING
    commit_id: str
    submitted_at: str | None
    comments: list[ReviewComment] = field(default_factory=list)
    dismissal_message: str | None = None


@dataclass
class IssueComment:
    id: int
    body: str
    user: User
    created_at: str
    updated_at: str


@dataclass
class Issue:
    """An issue (not a pull request): what a pull request's closing keywords name."""

    number: int
    id: int
    repo: Repo
    title: str
    body: str | None
    user: User
    created_at: str
    state: str = "open"
    comments: list[IssueComment] = field(default_factory=list)

    def comment(self, body: str, user: User | str = "octocat") -> IssueComment:
        author = user if isinstance(user, User) else person(user)
        stamp = now_iso()
        comment = IssueComment(next(self.repo.ids), body, author, stamp, stamp)
        self.comments.append(comment)
        return comment


@dataclass
class PullRequest:
    number: int
    id: int
    repo: Repo
    title: str
    body: str | None
    user: User
    base_ref: str
    head_ref: str
    draft: bool
    labels: list[str]
    created_at: str
    state: str = "open"
    merged: bool = False
    head_repo: Repo | None = None  # a fork, else the same repository
    reviews: list[Review] = field(default_factory=list)
    comments: list[IssueComment] = field(default_factory=list)
    resolved_threads: dict[int, str] = field(default_factory=dict)  # a thread's first comment id -> who resolved it
    linked_issues: list[Issue] = field(default_factory=list)  # linked in its Development sidebar (GraphQL's
    # closingIssuesReferences); the double does not read the body's keywords, which the app reads itself

    @property
    def head_sha(self) -> str:
        if self.head_repo is not None:  # GitHub keeps a fork's head commits reachable in the base repository
            self.repo.commits.update(self.head_repo.commits)
        return (self.head_repo or self.repo).branches[self.head_ref]

    @property
    def base_sha(self) -> str:
        return self.repo.branches[self.base_ref]

    @property
    def merge_base(self) -> str:
        found = self.repo.merge_base(self.base_sha, self.head_sha)
        if found is None:
            raise ValueError(f"pull request #{self.number}: base and head share no history")
        return found

    def files(self) -> list[FileDiff]:
        return self.repo.diff(self.merge_base, self.head_sha)

    def commit_count(self) -> int:
        return len(self.repo.commits_between(self.merge_base, self.head_sha))

    def comment(self, body: str, user: User | str = "octocat") -> IssueComment:
        """An issue comment written by someone else than the app (a person, another bot)."""
        author = user if isinstance(user, User) else person(user)
        stamp = now_iso()
        comment = IssueComment(next(self.repo.ids), body, author, stamp, stamp)
        self.comments.append(comment)
        return comment

    @property
    def review_comments(self) -> list[ReviewComment]:
        return sorted((c for review in self.reviews for c in review.comments), key=lambda c: c.id)

    def reply(self, to: ReviewComment, body: str, user: User | str = "octocat") -> ReviewComment:
        """A reply by someone else than the app in the thread of `to` (GitHub files it under a
        review of its own)."""
        author = user if isinstance(user, User) else person(user)
        review = Review(next(self.repo.ids), author, "", "COMMENTED", self.head_sha, now_iso())
        root = to.in_reply_to_id or to.id
        comment = ReviewComment(next(self.repo.ids), review.id, to.path, to.line, to.side, None, None, body,
                                self.head_sha, author, now_iso(), to.diff_hunk, in_reply_to_id=root)
        review.comments.append(comment)
        self.reviews.append(review)
        return comment

    def thread(self, root: ReviewComment) -> list[ReviewComment]:
        """The thread that `root` starts, oldest first."""
        return [c for c in self.review_comments if c.id == root.id or c.in_reply_to_id == root.id]

    def thread_resolved(self, root: ReviewComment) -> bool:
        """Whether the thread `root` starts is resolved (GraphQL's `isResolved`)."""
        return root.id in self.resolved_threads


@dataclass
class Repo:
    id: int
    owner: User
    name: str
    default_branch: str
    ids: Iterator[int] = field(repr=False)
    private: bool = False
    dismissals_restricted: bool = False  # a protected branch that refuses the app's dismissals
    has_issues: bool = True  # False: issues are turned off (GitHub answers 410 for them)
    permissions: dict[str, str] = field(default_factory=dict)  # login → admin|maintain|write|triage|read|none
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    pulls: dict[int, PullRequest] = field(default_factory=dict)
    issues: dict[int, Issue] = field(default_factory=dict)  # numbered with the pull requests, as on GitHub
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    _numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1), repr=False)
    _diffs: dict[tuple[str, str], list[FileDiff]] = field(default_factory=dict, repr=False)

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    def commit(self, files: dict[str, str | None], *, parent: str | None = "branch", branch: str | None = None,
               message: str = "change", author: str = "octocat", replace: bool = False) -> str:
        """Add a commit and return its sha.

        `files` maps path -> text (None deletes the path) and is laid over the parent's tree
        (`replace=True`: it is the whole tree). `parent` is a sha, None for a root commit, or by
        default the tip of `branch` (of the default branch when no branch is named). `branch`, when
        given, is moved to the new commit (created if new); with neither, the default branch moves.
        """
        target = branch or self.default_branch
        if parent == "branch":
            parent = self.branches.get(target)
        base = {} if (replace or parent is None) else dict(self.commits[parent].files)
        for path, text in files.items():
            if text is None:
                base.pop(path, None)
            else:
                base[path] = text
        parents = (parent,) if parent else ()
        date = now_iso()
        sha = commit_sha(base, parents, message + str(len(self.commits)), date)
        self.commits[sha] = Commit(sha, base, parents, message, author, date)
        self.branches[target] = sha
        return sha

    def merge(self, into: str, other: str, *, message: str = "merge") -> str:
        """A merge commit on branch `into` with the other branch's tree laid over (no conflicts)."""
        ours, theirs = self.branches[into], self.branches[other]
        files = {**self.commits[ours].files, **self.commits[theirs].files}
        date = now_iso()
        sha = commit_sha(files, (ours, theirs), message, date)
        self.commits[sha] = Commit(sha, files, (ours, theirs), message, "octocat", date)
        self.branches[into] = sha
        return sha

    def resolve(self, ref: str) -> str | None:
        """A branch name, a full or abbreviated (≥ 7) commit sha, or a tree sha -> commit sha."""
        ref = ref.removeprefix("refs/heads/").removeprefix("heads/")
        if ref in self.branches:
            return self.branches[ref]
        if ref in self.commits:
            return ref
        if len(ref) >= 7:
            matches = [sha for sha in self.commits if sha.startswith(ref)]
            if len(matches) == 1:
                return matches[0]
        for sha, commit in self.commits.items():
            if commit.tree_sha == ref:
                return sha
        return None

    def merge_base(self, base: str, head: str) -> str | None:
        return merge_base(self.commits, base, head)

    def diff(self, base: str, head: str) -> list[FileDiff]:
        if (base, head) not in self._diffs:  # commits never change, so their diff never does
            self._diffs[(base, head)] = diff_trees(self.commits[base].files, self.commits[head].files)
        return self._diffs[(base, head)]

    def commits_between(self, base: str, head: str) -> list[Commit]:
        """Commits reachable from head and not from base, oldest first (as compare lists them)."""
        excluded = ancestors(self.commits, base)
        found = [sha for sha in ancestors(self.commits, head) if sha not in excluded]
        return sorted((self.commits[sha] for sha in found), key=lambda c: (c.date, c.sha))

    def open_pull(self, *, head: str, base: str | None = None, title: str = "A change", body: str | None = "",
                  user: User | str = "octocat", draft: bool = False, labels: list[str] | None = None,
                  head_repo: Repo | None = None) -> PullRequest:
        """Open a pull request from branch `head` (of `head_repo` for a fork) into `base`."""
        author = user if isinstance(user, User) else person(user)
        pr = PullRequest(number=next(self._numbers), id=next(self.ids), repo=self, title=title, body=body,
                         user=author, base_ref=base or self.default_branch, head_ref=head, draft=draft,
                         labels=list(labels or []), created_at=now_iso(), head_repo=head_repo)
        pr.merge_base  # noqa: B018 - refuse a pull request without shared history now, not later
        self.pulls[pr.number] = pr
        return pr

    def pull(self, number: int) -> PullRequest | None:
        return self.pulls.get(number)

    def open_issue(self, *, title: str = "An issue", body: str | None = "", user: User | str = "octocat",
                   state: str = "open") -> Issue:
        """Open an issue; it takes the next number, shared with pull requests."""
        author = user if isinstance(user, User) else person(user)
        issue = Issue(number=next(self._numbers), id=next(self.ids), repo=self, title=title, body=body, user=author,
                      created_at=now_iso(), state=state)
        self.issues[issue.number] = issue
        return issue
