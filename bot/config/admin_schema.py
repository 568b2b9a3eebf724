"""The shape of the administrator's file (docs/configuration.md): providers, instance defaults, accounts and
access.

`defaults` and each account take every repository field, with the repository's own shapes; an
account adds its `providers` and `disabledRepositories`. `access` (instance level only) maps the
roles that sign-in grants to permissions, optionally narrowed to accounts.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.config.budgets import BUDGETS
from bot.config.checks import GLOB_SYNTAX
from bot.config.repo_schema import MODEL, REPO_PROPERTIES
from bot.secrets.references import is_reference, parse_reference
from bot.shapes import AnyOf, Arr, Bool, Check, Int, Num, Obj, Str

API_KEY_PATTERN = r"^(secret://[^/\s]+/[^/\s]+|env://[A-Za-z_][A-Za-z0-9_]*)$"
_API_KEY = re.compile(API_KEY_PATTERN.replace("$", r"\Z"))


def _api_key_problem(value: str) -> tuple[str, str] | None:
    """A reference, never a key: the message does not repeat the value, which may be a secret."""
    if not _API_KEY.match(value):
        return ("secret-reference",
                "must be a reference, `secret://NAME/KEY` (a file of the secrets directory) or `env://VAR` "
                "(an environment variable), never the key itself; the value is not shown")
    if is_reference(value) and isinstance(problem := parse_reference(value), str):
        return "secret-reference", problem  # the secret store's own rule for NAME and KEY
    return None


API_KEY_REFERENCE = Check("secret-reference", _api_key_problem, schema={"pattern": API_KEY_PATTERN})

PRICE = Obj(
    name="price",
    description="What the provider charges per million tokens, in one currency of your choice: `reviewer eval` "
                "reports a review's cost with it.",
    properties={
        "input": Num(minimum=0, description="Per million prompt (input) tokens."),
        "output": Num(minimum=0, description="Per million answer (output) tokens."),
    },
    required=("input", "output"),
)

TOOLS = AnyOf(
    options=(
        Bool(),
        Obj(name="provider-tools",
            properties={
                "enabled": Bool(description="Offer the lookups (default true)."),
                "maxRounds": Int(minimum=1, maximum=10, description="Rounds of lookups one model request may "
                                 "take before it must answer (default 4)."),
                "maxBytes": Int(minimum=1000, maximum=400_000, description="Bytes of lookup answers one model "
                                "request may get, within the model's contextTokens (default 24000)."),
            }),
    ),
    description="Lookups the provider's models may ask for before they answer (definition, callers, search, "
                "read over the repository index and the pull request's head): `false` never offers them, `true` "
                "or a mapping offers them within its bounds. A provider that refuses tools is asked without them.",
)

VERIFY = Bool(description="true re-checks each of the model's findings at or above `minor` in a call of its own "
                          "(the finding, its code and the lookups) before it is posted; a finding the verifier "
                          "refutes, citing the lines it read, is not posted (default false).")

PROVIDER = Obj(
    name="provider",
    description="A model provider; `type: openai` is the OpenAI-compatible chat-completions protocol.",
    properties={
        "type": Str(enum=("openai",), description="The protocol; `openai` is OpenAI-compatible chat completions."),
        "baseUrl": Str(pattern=r"^https?://[^\s/]+", pattern_hint="an http:// or https:// URL",
                       description="The API base, such as https://api.openai.com/v1."),
        "apiKey": Str(checks=(API_KEY_REFERENCE,),
                      description="`secret://NAME/KEY` or `env://VAR`; never the key itself."),
        "timeout": Num(exclusive_minimum=0, description="Seconds to wait for one model call (default 120)."),
        "price": PRICE,
        "tools": TOOLS,
        "verify": replace(VERIFY, description="Verify the findings of this provider's models: over `defaults.verify`. "
                          + VERIFY.description),
        "models": Obj(
            values=Obj(
                name="model-limits",
                properties={"contextTokens": Int(
                    minimum=8000, description="The model's context window in tokens; a larger pull request is "
                    "split into requests that fit it (default 32000)."),
                    "price": PRICE},
            ),
            description="Model name → what the provider's model can take.",
        ),
    },
    required=("type", "baseUrl"),
)

PROVIDERS = Obj(
    values=PROVIDER,
    keys=Str(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
             pattern_hint="letters, digits, `.`, `_` and `-`; no `/`, which separates provider and model"),
    description="Provider name → provider. A model reference `<provider>/<model>` names one of them.",
)

REPO_NAME_GLOB = Str(
    min_length=1, checks=(GLOB_SYNTAX,),
    description="A glob over a repository's name within the account, such as `legacy-*`.",
)

# The findings' severities, highest first (bot/reviews/findings.py; a test keeps the two equal: the
# configuration sits below the review engine and does not import it).
SEVERITIES = ("blocking", "important", "minor", "nit")

REVIEW_LIMITS = {
    "maxInlineComments": Int(minimum=0, description="At most this many inline comments a review, the model's and the "
                                                    "analyzers' together; the rest go to the summary, lowest "
                                                    "severity first, and the summary says so (default 10; 0: the "
                                                    "summary alone)."),
    "inlineSeverityFloor": Str(enum=SEVERITIES, description="Findings below this severity are listed in the summary "
                                                            "only, never inline (default nit: every severity)."),
    "walkthrough": Bool(description="false leaves out the summary's opening lines, one per changed file, saying what "
                                    "changed (default true)."),
}

REVIEWS = Obj(
    name="reviews",
    description="Noise caps and the walkthrough of every review (instance level; an account's `reviews` and its "
                "`repositories` entries replace them key by key).",
    properties=REVIEW_LIMITS,
)

ACCOUNT_REVIEWS = Obj(
    name="accountReviews",
    description="The account's noise caps and walkthrough, over the instance's; `repositories` sets them for some "
                "of its repositories.",
    properties={
        **REVIEW_LIMITS,
        "repositories": Obj(
            values=Obj(name="repositoryReviews", properties=REVIEW_LIMITS,
                       description="Noise caps and walkthrough of the repositories the glob matches."),
            keys=Str(min_length=1, checks=(GLOB_SYNTAX,)),
            description="A glob over the account's repository names (`legacy-*`) → their settings; the first glob "
                        "in the file that matches a repository applies, over the account's.",
        ),
    },
)

ANALYZERS = Obj(
    name="analyzers",
    description="The analyzers beside the model: which built-in ones run (they never run repository code), how "
                "their and uploaded SARIF results are filtered to the diff, and their bounds. An account's settings "
                "replace the instance's, key by key.",
    properties={
        "secrets": Bool(description="Scan the added lines for secrets (detect-secrets); a secret found is a "
                                    "blocking finding that never quotes it (default true)."),
        "ruff": Bool(description="Run ruff on the changed Python files, with the repository's ruff settings "
                                 "(default false)."),
        "shellcheck": Bool(description="Run ShellCheck on the changed shell scripts (default false)."),
        "actionlint": Bool(description="Run actionlint on the changed GitHub workflow files (default false)."),
        "filter": Str(enum=("added", "diff_context", "file", "nofilter"),
                      description="Which results are posted, as reviewdog's modes: `added` lines the pull request "
                                  "adds (default), `diff_context` lines in the diff's hunks, `file` anywhere in a "
                                  "changed file, `nofilter` everything; only results on added lines go inline."),
        "maxInlinePerTool": Int(minimum=0, maximum=1000, description="At most this many inline comments per tool, "
                                "the most severe first; the rest go to the summary (default 25)."),
        "timeout": Int(minimum=1, maximum=600, description="Seconds one built-in tool may run (default 60)."),
        "memoryMiB": Int(minimum=64, maximum=16384, description="Memory one built-in tool may use, in MiB "
                                                                "(default 1024)."),
        "severity": Obj(
            values=Str(enum=SEVERITIES, description="The severity the matching rules' findings get."),
            keys=Str(min_length=3, max_length=300, pattern=r"^[^/\s]+/\S+$",
                     pattern_hint="`<tool>/<rule glob>`, such as `ruff/I*` or `codeql/py/sql-injection`"),
            description="`<tool>/<rule glob>` → severity, mapping an analyzer's rules up or down (the tool by "
                        "name in any case, the rule id by an fnmatch glob; the first matching key wins). Linters' "
                        "results are `minor` at most unless their `security-severity` says more; this overrides both.",
        ),
    },
)

ACCOUNT = Obj(
    name="account",
    description="Settings of one account (owner login): every repository field, plus its providers "
                "and the repositories it turns off.",
    properties={
        **REPO_PROPERTIES,
        "providers": PROVIDERS,
        "analyzers": ANALYZERS,
        "disabledRepositories": Arr(items=REPO_NAME_GLOB,
                                    description="Repositories of the account that are never reviewed."),
        "reviews": ACCOUNT_REVIEWS,
        "budgets": BUDGETS,
    },
)

LOGIN = Str(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
            pattern_hint="a GitHub user or organisation login")

PERMISSIONS = ("connectors:read", "connectors:write", "config:read", "config:write",
               "deliveries:read", "deliveries:write", "analyses:write", "learnings:read", "learnings:write",
               "audit:read")
PERMISSION = Str(enum=PERMISSIONS + ("*",),
                 description="A permission: connectors:read|write, config:read|write, deliveries:read|write, "
                             "analyses:write (upload analyzer results), learnings:read|write, audit:read, "
                             "or `*` for every one.")

ROLE = Obj(
    name="role",
    description="What a role may do, and over which GitHub accounts.",
    properties={
        "allow": Arr(items=PERMISSION, description="The permissions the role grants."),
        "accounts": Arr(items=Str(min_length=1, checks=(GLOB_SYNTAX,)),
                        description="Globs over GitHub account logins (`acme*`) narrowing what the role sees of "
                                    "deliveries and configurations; absent, every account."),
    },
    required=("allow",),
)

ACCESS = Obj(
    description="Roles (from the connectors' claims_to_roles) → permissions; without this section, `admin` "
                "has `*` and `viewer` every `:read` permission.",
    properties={
        "roles": Obj(values=ROLE, keys=Str(min_length=1, max_length=128, pattern=r"^[^\s]+$",
                                           pattern_hint="a role name without whitespace"),
                     description="Role name → what it allows. A role no entry defines grants nothing."),
        "mfa": Obj(properties={"required": Arr(items=PERMISSION, description="Permissions that need an MFA "
                                                                            "check in the last 5 minutes.")},
                   description="Permissions that need a recent MFA check."),
    },
)

INDEX = Obj(
    name="index",
    description="Limits of each repository's index (the definitions, callers and search that reviews draw on).",
    properties={
        "maxFileBytes": Int(minimum=1, description="Files larger than this are not indexed (default 1000000)."),
        "maxRepositoryBytes": Int(minimum=1, description="Files past this many bytes in all, in path order, are "
                                                         "not indexed (default 200000000)."),
        "maxFiles": Int(minimum=1, description="Files past this count, in path order, are not indexed "
                                               "(default 50000)."),
    },
)

EVAL = Obj(
    name="eval",
    description="Settings of `reviewer eval`, which measures reviews against a corpus of known defects.",
    properties={
        "judge": replace(MODEL, name=None, description=(
            "A `<provider>/<model>` of the instance's providers that confirms that a finding matched to a known "
            "defect (same path, overlapping lines) is about that defect (default: none: the place alone matches).")),
    },
)

ADMIN_CONFIG = Obj(
    description="Reviewer administrator configuration: the instance's providers and defaults, and "
                "per-account settings, layered under each repository's .reviewer.yaml; and who may use the "
                "APIs (`access`).",
    properties={
        "providers": PROVIDERS,
        "defaults": Obj(name="settings", properties={**REPO_PROPERTIES, "verify": VERIFY},
                        description="Instance settings: every repository field, and `verify` for every provider "
                                    "that does not set its own."),
        "accounts": Obj(values=ACCOUNT, keys=LOGIN, description="Owner login → account settings."),
        "access": ACCESS,
        "index": INDEX,
        "eval": EVAL,
        "reviews": REVIEWS,
        "analyzers": ANALYZERS,
        "budgets": BUDGETS,
    },
)
