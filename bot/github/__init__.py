"""The app's GitHub edge: app authentication, the HTTP client, and the calls the pipeline makes.

    gh_app = GitHubApp(session, app_id=..., private_key=..., base_url=settings.api_url)
    gh = gh_app.installation(installation_id)
    comparison = await merge_base_and_files(gh, owner, repo, base_sha, head_sha, pull_number=n)
    run_id = await start_check_run(gh, owner, repo, head_sha)
    await complete_check_run(gh, owner, repo, run_id, "success", CheckOutput(title, summary))
"""

from .check_runs import (
                     CHECK_NAME,
                     Annotation,
                     CheckOutput,
                     complete_check_run,
                     completion_requests,
                     list_check_runs,
                     start_check_run,
)
from .client import DEFAULT_API_URL, GitHubApp, GitHubClient, RetryPolicy
from .errors import GitHubError, GitHubUnavailable
from .limits import fit
from .repos import (
                     ChangedFile,
                     Comparison,
                     FileTooLarge,
                     Increment,
                     RepoTree,
                     changes_between,
                     merge_base_and_files,
                     pull_files,
                     pull_request,
                     read_file,
                     repository,
                     tree,
)
from .reviews import ReviewComment, create_review, dismiss_review, list_reviews, upsert_comment

__all__ = [
    "CHECK_NAME", "DEFAULT_API_URL", "Annotation", "ChangedFile", "CheckOutput", "Comparison", "FileTooLarge",
    "GitHubApp", "GitHubClient", "GitHubError", "GitHubUnavailable", "Increment", "RepoTree", "RetryPolicy", "ReviewComment",
    "changes_between", "complete_check_run", "completion_requests", "create_review", "dismiss_review", "fit", "list_check_runs", "list_reviews",
    "merge_base_and_files", "pull_files", "pull_request", "read_file", "repository", "start_check_run", "tree",
    "upsert_comment",
]
