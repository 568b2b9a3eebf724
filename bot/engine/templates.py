"""Comment templates: the variables they see, the built-in ones, and sandboxed rendering.

Repository templates (`comments.summaryTemplate`, `comments.inlineTemplate`) are untrusted code.
They render in Jinja2's SandboxedEnvironment with StrictUndefined (a misspelt variable is an error,
not a silent blank), in a separate, resource-limited process (`bot.engine.template_worker`): an
in-process sandbox stops attribute tricks but not a loop or a string that doubles itself until the
host falls over. Output is bounded. Whatever fails falls back to the built-in template, with a note.
The variables are documented in docs/reviews.md; keep the two in step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template
from jinja2.sandbox import SandboxedEnvironment

from bot.reviews.markdown import fence, suggestion

SUMMARY_LIMIT = 60_000  # characters; GitHub takes at most 65,536 in a comment body
INLINE_LIMIT = 48_000  # room for a suggestion of findings.MAX_FIX_CHARS and the text around it
MAX_TEMPLATE_BYTES = 64 * 1024
CUT_NOTE = "\n\n…(cut: the comment reached its size limit)"

BUILTIN_SUMMARY = """\
## Reviewer
{% if status != "completed" -%}
**Review {{ status }}:** {{ failure }}.

Nothing was approved.
{%- else -%}
{% if standing.total -%}
**{{ standing.total }} finding(s)** at `{{ headSha[:7] }}`: {{ standing.blocking }} blocking, \
{{ standing.important }} important, {{ standing.minor }} minor, {{ standing.nit }} nit \
({{ standing.sources | join(", ") }}){% if standing.outsideDiff %}; {{ standing.outsideDiff }} outside the diff, \
which decide nothing{% endif %}. This review posts {{ findings | length }}\
{% if inlineFindings %} ({{ inlineFindings | length }} inline){% endif %}.
{%- else -%}
No findings.
{%- endif %}
{% if noModel -%}
No model reviewed `{{ headSha[:7] }}` ({{ noModel }}): these are the analyzers' findings.
{%- else -%}
Reviewed `{{ headSha[:7] }}`\
{% if reviewKind == "incremental" %} incrementally: the changes since the last review \
(`{{ reviewedSince[:7] }}..{{ headSha[:7] }}`){% else %} (full review){% endif %}\
{% if model %} with `{{ model }}`{% if fallbackUsed %} (the fallback model){% endif %}\
{% else %}: none touch a file under review, so no model was asked{% endif %}, feedback `{{ feedback }}`.
{%- endif %}
{%- if summaryFindings %}

### Findings{% if inlineFindings %} not posted inline{% endif %}
{% for f in summaryFindings %}
- **{{ f.severity }}** · {{ f.category }} · `{{ f.path }}` \
line{% if f.endLine != f.startLine %}s{% endif %} {{ f.startLine }}\
{% if f.endLine != f.startLine %}–{{ f.endLine }}{% endif %}: {{ f.message | indent(2) }}
{%- for r in f.rules %}
  Rule `{{ r.id }}`: {{ r.text }}
{%- endfor %}
{%- if f.suggestedFix %}

  Suggested fix:
{{ f.suggestedFix | fenced | indent(2, first=True) }}
{%- endif %}
{%- endfor %}
{%- endif %}
{%- if heldBack %}

Not posted as given: {{ heldBack | join("; ") }}.
{%- endif %}
{%- endif %}
{%- if notes %}

<details><summary>Notes</summary>

{% for n in notes %}- {{ n }}
{% endfor %}
</details>
{%- endif %}
"""

BUILTIN_INLINE = """\
**{{ finding.severity }}** · {{ finding.category }}: {{ finding.message }}
{%- for r in finding.rules %}

Rule `{{ r.id }}`: {{ r.text }}
{%- endfor %}
{%- if suggestion %}

{{ suggestion }}
{%- endif %}
"""


@dataclass(frozen=True, slots=True)
class RenderJob:
    source: str
    variables: dict[str, Any]  # JSON values only: the job may cross a process boundary
    limit: int


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str | None
    error: str | None = None  # set: the template failed; say why, with its line when known


def make_environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
    )
    env.filters["fenced"] = fence
    return env


_ENVIRONMENT = make_environment()


def _template_line(exc: BaseException) -> int | None:
    line = getattr(exc, "lineno", None)
    tb = exc.__traceback__
    while tb is not None:  # Jinja rewrites tracebacks so template frames carry template lines
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


@lru_cache(maxsize=32)
def _compiled(source: str) -> Template:
    """A template compiled once a process: compiling (Jinja to Python, then to bytecode) takes
    about 20 ms, far more than rendering, and the server renders the same built-in templates for
    every review. Compiled templates are immutable and safe to render from several threads; the
    template worker renders one review's jobs and exits, so it keeps one review's templates."""
    return _ENVIRONMENT.from_string(source)


def render_jobs(jobs: Iterable[RenderJob]) -> list[Rendered]:
    """Render in this process: for the built-in templates, and inside the template worker."""
    results = []
    for job in jobs:
        try:
            if len(job.source.encode("utf-8")) > MAX_TEMPLATE_BYTES:
                raise ValueError(f"the template is larger than {MAX_TEMPLATE_BYTES} bytes")
            results.append(Rendered(_bounded(_compiled(job.source).generate(job.variables), job.limit)))
        except Exception as exc:  # a template's error is the author's, reported, never raised
            line = _template_line(exc)
            where = f"line {line}: " if line else ""
            detail = f": {exc}" if str(exc) else ""
            results.append(Rendered(None, f"{where}{type(exc).__name__}{detail}"[:500]))
    return results


def _bounded(chunks: Iterable[str], limit: int) -> str:
    out: list[str] = []
    size = 0
    for chunk in chunks:
        if size + len(chunk) > limit:
            out.append(chunk[: limit - size])
            return "".join(out) + CUT_NOTE
        out.append(chunk)
        size += len(chunk)
    return "".join(out).strip("\n")


def finding_vars(placed: Any) -> dict[str, Any]:
    """A ledger's entry (or shaping's `Placed`) as templates see it (the findings format's names,
    camelCase), with its source: `model` or `analyzer:<tool>`."""
    f = placed.finding
    return {
        "source": getattr(placed, "source", "model"),
        "rule": getattr(placed, "rule", None),
        "path": f.path,
        "startLine": f.start_line,
        "endLine": f.end_line,
        "severity": f.severity,
        "category": f.category,
        "message": f.message,
        "suggestedFix": f.suggested_fix,
        "rules": [{"id": r.id, "text": r.text} for r in placed.rules],
        "inline": placed.inline,
    }


def inline_vars(placed: Any, common: dict[str, Any]) -> dict[str, Any]:
    fix = placed.finding.suggested_fix
    return {**common, "finding": finding_vars(placed), "suggestion": suggestion(fix) if fix else ""}


_HELD_BACK = (
    ("outsideDiff", "{} outside the diff (listed in this summary; they decide neither the check run nor the "
                    "approval)"),
    ("acrossHunks", "{} across more than one hunk of the diff (listed in this summary)"),
    ("nitsInSummary", "{} nit(s) kept to this summary"),
    ("withoutFix", "{} without a suggested fix, not posted (requireSuggestedFix)"),
    ("filteredByMinimal", "{} outside the categories of minimal feedback, not posted"),
    ("malformed", "{} malformed, dropped"),
    ("overLimit", "{} over the limit of findings per review, dropped"),
    ("unknownRuleIds", "{} unknown rule id(s) removed from findings"),
    ("alreadyPosted", "{} already posted on this pull request, not posted again"),
    ("refuted", "{} refuted by a second look at the code, not posted (the check run says why)"),
)


def held_back(counts: dict[str, int]) -> list[str]:
    """The counts in words, so a summary says why findings are not where one might look."""
    return [text.format(counts[key]) for key, text in _HELD_BACK if counts.get(key)]


def summary_vars(posted: Iterable[Any], common: dict[str, Any]) -> dict[str, Any]:
    findings = [finding_vars(p) for p in posted]
    severities = {s: sum(1 for f in findings if f["severity"] == s)
                  for s in ("blocking", "important", "minor", "nit")}
    return {
        **common,
        "findings": findings,
        "inlineFindings": [f for f in findings if f["inline"]],
        "summaryFindings": [f for f in findings if not f["inline"]],
        "severityCounts": severities,
        "heldBack": held_back(common.get("counts", {})),
    }

