"""The deployment docs against what they describe: docs/deploy.md's list of permissions and events
for registering the app by hand is app.yml's, and its links lead to files that exist."""

from __future__ import annotations

import re
from pathlib import Path

from bot.github.manifest import load_manifest

ROOT = Path(__file__).resolve().parent.parent.parent


def _by_hand() -> str:
    page = " ".join((ROOT / "docs" / "deploy.md").read_text().split())
    start = page.index("By hand instead")
    return page[start:page.index("install the app.", start)]


def test_the_permissions_and_events_to_register_by_hand_are_app_yml_s():
    manifest = load_manifest()
    paragraph = _by_hand()
    permissions = dict(re.findall(r"`(\w+): (read|write)`", paragraph))
    assert permissions == manifest["default_permissions"]
    events = re.findall(r"`(\w+)`", paragraph[paragraph.index("the events"):paragraph.index("(`push` keeps")])
    assert events == manifest["default_events"]


def test_the_top_level_app_yml_is_the_packaged_manifest():
    top = ROOT / "app.yml"
    assert top.is_symlink() and top.resolve() == (ROOT / "bot" / "github" / "app.yml").resolve()


def test_deploy_md_links_lead_somewhere():
    text = (ROOT / "docs" / "deploy.md").read_text()
    for target in re.findall(r"\]\(((?:\.\./|[a-z])[^)#:]*)(?:#[^)]*)?\)", text):
        assert (ROOT / "docs" / target).resolve().exists(), target
    for anchor in re.findall(r"\]\(#([^)]+)\)", text):
        headings = [re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in re.findall(r"^#+ (.+)$", text, re.M)]
        assert anchor in headings, anchor
