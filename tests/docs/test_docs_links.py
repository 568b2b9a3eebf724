"""README.md and docs/*.md point only at what exists: every relative link's file, every anchor (in
the page itself or in the page linked) a heading there, as GitHub makes its ids, and every file of
the project the prose names — a test (`tests/…`), a module (`bot/…`), a script, a benchmark, a
manifest of deploy/kubernetes — and every page of docs/ named outside a link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^ {0,3}```.*?^ {0,3}```[^\n]*$", re.M | re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
# A file of the project named in prose: the trees whose names are never an example's.
NAMED = re.compile(r"(?<![\w/.-])((?:bot|tests|scripts|bench|\.ci|deploy/kubernetes)/[A-Za-z0-9_./-]*[A-Za-z0-9_])"
                   r"(?![\w*{<…])")
DOC_PAGE = re.compile(r"(?<![\w/.`-])(docs/[A-Za-z0-9_-]+\.(?:md|png))(?![\w`])")


def _prose(text: str) -> str:
    """The page without its fenced code blocks (examples of a repository's own files, shell)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's id for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its words
    text = re.sub(r"[^\w\- ]", "", text.lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(_prose(page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def _links(page: Path) -> list[str]:
    return LINK.findall(_prose(page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_leads_somewhere(page):
    broken = []
    for target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: — not ours to check
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no {linked.relative_to(ROOT) if linked.is_relative_to(ROOT) else linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: {linked.name} has no heading #{anchor}")
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_project_file_and_page_named_exists(page):
    prose = _prose(page.read_text(encoding="utf-8"))
    named = {m.group(1) for m in NAMED.finditer(prose)} | {m.group(1) for m in DOC_PAGE.finditer(prose)}
    missing = sorted(name for name in named if not (ROOT / name.rstrip("/")).exists())
    assert missing == []


def test_the_checks_catch_what_they_exist_for(tmp_path):
    """A broken link, a missing anchor and a test that is not there are each found."""
    assert slug("Checking a deployment: `reviewer doctor`") == "checking-a-deployment-reviewer-doctor"
    assert slug("Traces and metrics: the `OTEL_*` variables and `/metrics`") == \
        "traces-and-metrics-the-otel_-variables-and-metrics"
    assert slug("Overview — `/console/`") == "overview--console"
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n## Top\n\n```\n# not a heading\n[x](nowhere.md)\n```\n"
                    "[a](#top-1) [b](#missing) [c](gone.md) see tests/server/test_nothing_here.py\n")
    assert anchors(page) == {"top", "top-1"}
    assert _links(page) == ["#top-1", "#missing", "gone.md"]
    assert [m.group(1) for m in NAMED.finditer(_prose(page.read_text()))] == ["tests/server/test_nothing_here.py"]
