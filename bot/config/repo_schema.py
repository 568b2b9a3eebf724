"""The shape of `.reviewer.yaml` (seed.md 2.1, docs/configuration.md), written once for validation and schema.

`REPO_PROPERTIES` is also every field the admin file's `defaults` and `accounts` entries take
(`bot.config.admin_schema`), so the three layers cannot drift apart.
"""

from __future__ import annotations

from bot.config.checks import CEL_COMPILES, GLOB_SYNTAX, RELATIVE_PATH
from bot.shapes import Arr, Bool, Obj, Str

MODEL = Str(
    name="model", pattern=r"^[^/]+/.+$", pattern_hint="`<provider>/<model>`, such as `openai/gpt-4o`",
    description="A `<provider>/<model>` reference; the provider must be declared by the instance or the account.",
)

PATH = Str(
    name="path", min_length=1, checks=(RELATIVE_PATH,),
    description="A file path relative to the repository root, read at the merge base; "
                "never absolute, never leading above the root.",
)

GLOB = Str(
    name="glob", min_length=1, checks=(GLOB_SYNTAX,),
    description="A doublestar glob over repository paths: `**` any number of whole segments, "
                "`*`, `?`, `[...]` within a segment, `{a,b}` alternatives; dotfiles match.",
)

CEL = Str(
    name="celExpression", checks=(CEL_COMPILES,),
    description="A CEL expression over `pr`, such as `!pr.draft && pr.baseRef == \"main\"`.",
)

RULE_ID = Str(
    min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9-]{0,63}$",
    pattern_hint="lowercase letters, digits and `-`, starting with a letter or digit",
    description="Names the rule to the findings that cite it; must not reuse an administrator's rule id.",
)

RULE = Obj(
    name="rule",
    description="A check the review makes.",
    properties={
        "id": RULE_ID,
        "rule": Str(min_length=1, max_length=2000, description="What to check and why."),
        "file": PATH,
        "paths": Arr(items=GLOB, description="The rule applies only when a changed path matches one of them."),
        "whenExpr": CEL,
    },
    required=("id",),
    exactly_one_of=(("rule", "file"),),
)

CONTEXT = Obj(
    name="contextEntry",
    description="A file that explains the code, given to the reviewer.",
    properties={
        "path": PATH,
        "description": Str(min_length=1, description="What the file explains."),
        "paths": Arr(items=GLOB, description="The file is named only when a changed path matches one of them."),
    },
    required=("path", "description"),
)

MODELS = Obj(properties={"review": MODEL, "fallback": MODEL},
             description="The models that review, each `<provider>/<model>`.")

COMMENTS = Obj(
    properties={
        "inline": Bool(description="false posts the summary alone."),
        "summaryTemplate": PATH,
        "inlineTemplate": PATH,
    },
    description="How review comments are posted.",
)

REPO_PROPERTIES = {
    "enabled": Bool(description="false stops reviews, follow-ups and indexing; true cannot turn on "
                                "a repository the administrator disabled."),
    "models": MODELS,
    "feedback": Str(enum=("detailed", "standard", "minimal"),
                    description="detailed: every actionable finding inline; standard: the same, nits in "
                                "the summary; minimal: only bugs, risks and breaking changes."),
    "comments": COMMENTS,
    "requireSuggestedFix": Bool(description="true requires a suggested fix on every finding; false cannot "
                                            "lift the administrator's requirement."),
    "approve": Bool(description="true approves a pull request with nothing blocking or important, and "
                                "dismisses that approval when a later review finds such issues."),
    "filterExpr": CEL,
    "ignore": Arr(items=GLOB, description="Globs of paths to ignore, added to the administrator's."),
    "rules": Arr(items=RULE, description="Checks the review makes, added after the administrator's."),
    "context": Arr(items=CONTEXT, description="Files that explain the code, added after the administrator's."),
    "agentFiles": Bool(description="false leaves AGENTS.md / CLAUDE.md out of the instructions."),
}

REPO_CONFIG = Obj(
    properties=REPO_PROPERTIES,
    description="Reviewer repository configuration (.reviewer.yaml), layered on the administrator's.",
)
