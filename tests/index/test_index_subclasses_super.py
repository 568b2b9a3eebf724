"""A method called through `super` (Python's `super().setup()`, JavaScript's `super.setup()`) is
the first superclass's up the chain that defines it (bot/index/resolve_script.py), not any class's
method of that name."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, context_of, definitions

BASE = "class Base:\n    def setup(self):\n        return 1\n"
MIDDLE = "from .base import Base\n\n\nclass Middle(Base):\n    pass\n"
OTHER = "class Other:\n    def setup(self):\n        return 2\n"
CHILD = "from .middle import Middle\n\n\nclass Child(Middle):\n    def setup(self):\n        return 0\n"


def test_python_super_reaches_the_first_superclass_that_defines_the_method(capsys, tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/middle.py": MIDDLE, "pkg/other.py": OTHER,
            "pkg/child.py": CHILD}
    head = {"pkg/child.py": CHILD.replace("return 0", "return super().setup() + 1")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("pkg/base.py", 2)]


JS_BASE = "export class Base {\n  setup() {\n    return 1\n  }\n}\n"
JS_OTHER = "export class Other {\n  setup() {\n    return 2\n  }\n}\n"
JS_CHILD = "import { Base } from './base.js'\n\nexport class Child extends Base {\n  setup() {\n    return 0\n  }\n}\n"


def test_js_super_reaches_the_superclass_method(capsys, tmp_path: Path) -> None:
    base = {"lib/base.js": JS_BASE, "lib/other.js": JS_OTHER, "lib/child.js": JS_CHILD}
    head = {"lib/child.js": JS_CHILD.replace("return 0", "return super.setup() + 1")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("lib/base.js", 2)]


KINDS = ("class Kind:\n    def complete(self):\n        return []\n\n\n"
         "class Choice(Kind):\n    def complete(self):\n        return ['a']\n")
USER = ("from .kinds import Kind\n\n\nclass Param:\n    def __init__(self, kind: Kind):\n        self.kind = kind\n\n"
        "    def complete(self):\n        return self.kind.complete()\n")


def test_python_a_call_through_a_base_class_may_run_a_subclass_override(capsys, tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "", "pkg/kinds.py": KINDS, "pkg/param.py": USER}
    head = {"pkg/kinds.py": KINDS.replace("return ['a']", "return ['a', 'b']")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("pkg/param.py", "complete")]
