"""The parsers of the commands that run offline, on files and git checkouts: `reviewer validate`,
`plan`, `context`, `review`, `schema` and `crds`."""

from __future__ import annotations

from bot.commands.parsers import command

FORMATS = ("text", "json", "github")
SCHEMA_NAMES = ("repo-config", "admin-config", "oidc-connector", "saml-connector", "eval-corpus")
KINDS = SCHEMA_NAMES


def validate(sub) -> None:
    v = command(sub, "validate", "validate repository configs, admin configs and connector resources, offline")
    v.add_argument("paths", nargs="+", metavar="PATH",
                   help="files to check; a directory stands for the .reviewer.yaml (or .yml) it holds")
    v.add_argument("--admin-config", metavar="FILE",
                   help="an admin configuration to check repository files against (default: none)")
    v.add_argument("--full-name", metavar="OWNER/NAME",
                   help="the repository the files belong to, for account-level admin settings (default: none)")
    v.add_argument("--secrets-dir", metavar="DIR",
                   help="resolve connectors' secret:// references in this store (default: check their form only)")
    v.add_argument("--kind", choices=KINDS,
                   help="what every PATH is (default: from the file name, else from the content)")
    v.add_argument("--format", choices=FORMATS, default="text",
                   help="text lines `path:line:col: code: message`, a JSON report, or GitHub workflow "
                        "annotations (default: text)")


def plan(sub) -> None:
    p = command(sub, "plan", "print the review plan for a local git checkout, offline")
    p.add_argument("--repo", required=True, metavar="DIR", help="the git checkout (required)")
    p.add_argument("--base", metavar="REF", help="the base to compare with (default: origin/HEAD, else main)")
    p.add_argument("--head", default="HEAD", metavar="REF", help="the head to review (default: HEAD)")
    p.add_argument("--admin-config", metavar="FILE", help="the instance's admin configuration (default: none)")
    p.add_argument("--full-name", metavar="OWNER/NAME",
                   help="the repository's full name, for account-level admin settings "
                        "(default: from the origin remote)")
    p.add_argument("--pr", metavar="FILE", help="a GitHub pull request object (JSON) for `pr` in CEL "
                                                "expressions (default: one made from the commits)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text for people, or the plan as JSON (default: text)")


def context(sub) -> None:
    c = command(sub, "context", "print what the repository index adds to a review of base...head, offline")
    c.add_argument("--repo", required=True, metavar="DIR",
                   help="the git checkout; its index is kept under .git/reviewer/ and reused (required)")
    c.add_argument("--base", metavar="REF", help="the base to compare with (default: origin/HEAD, else main)")
    c.add_argument("--head", default="HEAD", metavar="REF", help="the head to review (default: HEAD)")
    c.add_argument("--format", choices=("text", "json"), default="text",
                   help="text for people, or the pieces as JSON (default: text)")


REVIEW_EPILOG = """the model's key reaches a provider as the admin file says (apiKey: env://VAR, or secret:// in
REVIEWER_SECRETS_DIR); the index is kept under XDG_CACHE_HOME (default ~/.cache), in reviewer/.
--post reads GITHUB_EVENT_PATH (a pull_request event), GITHUB_TOKEN, GITHUB_REPOSITORY and GITHUB_API_URL.
exit codes: 0 nothing at or above --fail-on; 1 a finding at or above it, an invalid configuration, or (unless
--fail-on never) no usable model answer; 2 usage error, not a git repository, or an unknown ref. See docs/ci.md."""
REVIEW_FORMATS = ("text", "json", "sarif", "github", "markdown")
FAIL_ON = ("blocking", "important", "minor", "nit", "never")


def review(sub) -> None:
    r = command(sub, "review", "review a local change (merge-base(base, head)..head) as a pull request would be",
                epilog=REVIEW_EPILOG)
    r.add_argument("--repo", default=".", metavar="DIR", help="the git repository (default: the current directory)")
    r.add_argument("--base", metavar="REF", help="the branch the change would merge into (default: origin/HEAD, "
                                                 "else main, else master)")
    r.add_argument("--head", default="HEAD", metavar="REF", help="the change's last commit (default: HEAD)")
    r.add_argument("--admin-config", metavar="FILE",
                   help="the admin file: model providers, defaults, analyzers (default: REVIEWER_ADMIN_CONFIG, "
                        "else none: only the analyzers run)")
    r.add_argument("--format", choices=REVIEW_FORMATS, default="text",
                   help="text for a terminal, JSON, SARIF 2.1.0, GitHub workflow commands, or Markdown "
                        "(default: text)")
    r.add_argument("--fail-on", choices=FAIL_ON, default="blocking",
                   help="exit 1 when a finding is of this severity or a higher one (default: blocking)")
    r.add_argument("--post", action="store_true",
                   help="in a GitHub Actions job of a pull_request event: review the event's base and head and post "
                        "the check run, review, summary and approval as the App does (default: print only)")


def schema(sub) -> None:
    sc = command(sub, "schema", "print a JSON Schema")
    sc.add_argument("name", metavar="NAME", help=f"the schema: one of {', '.join(SCHEMA_NAMES)}")


def crds(sub) -> None:
    command(sub, "crds", "print both connector CustomResourceDefinitions (apiextensions.k8s.io/v1) as YAML")
