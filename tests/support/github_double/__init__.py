"""A GitHub double for the app's tests: GitHub's REST API over real HTTP on 127.0.0.1.

    double = GitHubDouble(); await double.start()
    app = double.add_app(public_key_pem)                 # verifies the app's RS256 JWTs
    repo = double.add_repo("octo-org/hello")
    base = repo.commit({".reviewer.yaml": "...", "README.md": "hi\n"})
    repo.commit({"src/a.py": "print(1)\n"}, branch="feature", parent=base)
    pr = repo.open_pull(head="feature", title="Add a")
    inst = double.install(app, repo)
    ... the app calls double.url ...
    repo.check_runs, pr.reviews, pr.comments, double.calls, double.violations

`GitHubDouble(api_prefix="/api/v3")` serves the API as GitHub Enterprise Server does; the manifest
flow (manifest_flow.py: GitHub's web form that registers an app, and the code's conversion) is on
the double's origin.

See server.py for faults (`fail`, `secondary_rate_limit`, `primary_rate_limit`, `unauthorized`,
`delay`) and webhooks.py for signed deliveries (`payload`, `deliver`).
"""

from .faults import Fault
from .git import Commit, FileDiff
from .model import App, CheckRun, Installation, Issue, IssueComment, PullRequest, Repo, Review, ReviewComment, User
from .server import Call, GitHubDouble
from .webhooks import signature_256

__all__ = [
    "App", "Call", "CheckRun", "Commit", "Fault", "FileDiff", "GitHubDouble", "Installation", "Issue", "IssueComment",
    "PullRequest", "Repo", "Review", "ReviewComment", "User", "signature_256",
]
