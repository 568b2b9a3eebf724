#!/usr/bin/env bash
# The commits `reviewer review --post` reads (action.yml): the pull request's base and head, with
# the history back to their merge base. actions/checkout fetches one commit by default (the merge
# commit of a pull_request event); with `fetch-depth: 0` there is nothing to do here.
set -euo pipefail
: "${BASE_SHA:?the pull_request event's base sha}" "${HEAD_SHA:?the pull_request event's head sha}"
has() { git cat-file -e "$1^{commit}" 2>/dev/null; }
if [ "$(git rev-parse --is-shallow-repository)" = "true" ]; then
    git fetch --quiet --no-tags --unshallow origin "$BASE_SHA" "$HEAD_SHA"
elif ! has "$BASE_SHA" || ! has "$HEAD_SHA"; then
    git fetch --quiet --no-tags origin "$BASE_SHA" "$HEAD_SHA"
fi
git merge-base "$BASE_SHA" "$HEAD_SHA" >/dev/null
