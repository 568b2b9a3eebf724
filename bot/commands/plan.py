"""`reviewer plan --repo DIR [--base REF] [--head REF] [--admin-config FILE] [--full-name OWNER/NAME]
[--pr FILE] [--format text|json]`: exit 0 when a plan was printed (whatever its decision), 2 on a
usage or git error (the message on stderr)."""

from __future__ import annotations

import argparse
import sys

from bot.documents.diagnostics import dumps
from bot.plan.git import GitError
from bot.plan.offline import UsageError, plan_from_git
from bot.plan.text import render_text


def run(args: argparse.Namespace) -> int:
    try:
        result = plan_from_git(args.repo, base=args.base, head=args.head, admin_path=args.admin_config,
                               full_name=args.full_name, pr_path=args.pr)
    except (GitError, UsageError) as error:
        print(f"reviewer plan: {error}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(dumps(result.plan.to_json()))
    else:
        header = (f"Plan for {result.head} ({result.head_sha[:7]}) onto {result.base}, merge base "
                  f"{result.merge_base[:7]}" + (f", repository {result.full_name}" if result.full_name else ""))
        sys.stdout.write(render_text(result.plan, result.config, header))
    return 0
