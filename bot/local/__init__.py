"""A git repository's change reviewed as a pull request, without a server (docs/ci.md).

`reviewer review` (a laptop, a pre-push hook, a CI step) and `reviewer eval` (each case of a
corpus) both take a base and a head in a local git repository and put the change through the
steps a pull request goes through on the server — the configuration read at the merge base and
planned, the repository index built at the merge base, the lookups, the built-in analyzers, the
model review — with git in place of GitHub's API. `reviewer review --post` then posts the result
as the App would, with the app's own posting code (bot/pipeline/post.py), reading what it posted
before back from the pull request.
"""
