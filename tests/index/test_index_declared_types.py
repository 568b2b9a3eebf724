"""A member call's receiver, typed by what the code around it declares (bot/index/uses.py
types_at): a TypeScript class's field (`private worker: Helper`), a constructor's parameter
property (`constructor(private worker: Helper)`), a function's own locals (`const h: Helper = …`,
`const h = new Helper()`, Python's `worker = Helper()`). The method is then the declared class's,
not a same-named one's elsewhere."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, context_of, definitions

HELPER = "export class Helper {\n  run(n: number) {\n    return n\n  }\n}\n"
OTHER = "export class Other {\n  run(n: number) {\n    return -n\n  }\n}\n"


def _defs(capsys, tmp_path: Path, app: str, changed: str) -> list[tuple[str, int]]:
    base = {"src/helper.ts": HELPER, "src/other.ts": OTHER, "src/app.ts": app}
    return definitions(context_of(capsys, tmp_path, base, {"src/app.ts": app.replace("return 0", changed)}))


def test_ts_a_field_declared_of_a_class(capsys, tmp_path: Path) -> None:
    app = ("import { Helper } from './helper'\n\nexport class App {\n  private worker: Helper\n"
           "  constructor() {\n    this.worker = make()\n  }\n  go() {\n    return 0\n  }\n}\n")
    assert _defs(capsys, tmp_path, app, "return this.worker.run(1)") == [("src/helper.ts", 2)]


def test_ts_a_constructor_parameter_property(capsys, tmp_path: Path) -> None:
    app = ("import { Helper } from './helper'\n\nexport class App {\n  constructor(private readonly worker: Helper) {}\n"
           "  go() {\n    return 0\n  }\n}\n")
    assert _defs(capsys, tmp_path, app, "return this.worker.run(1)") == [("src/helper.ts", 2)]


def test_ts_a_local_declared_or_constructed(capsys, tmp_path: Path) -> None:
    app = "import { Helper } from './helper'\n\nexport function go() {\n  return 0\n}\n"
    changed = "const h: Helper = make()\n  const g = new Helper()\n  return h.run(1) + g.run(2)"
    assert _defs(capsys, tmp_path, app, changed) == [("src/helper.ts", 2)]


def test_ts_a_caller_through_a_local_of_another_class_is_not_one(capsys, tmp_path: Path) -> None:
    app = ("import { Helper } from './helper'\nimport { Other } from './other'\n\n"
           "export function mine() {\n  const h = new Helper()\n  return h.run(1)\n}\n\n"
           "export function theirs() {\n  const o = new Other()\n  return o.run(1)\n}\n")
    base = {"src/helper.ts": HELPER, "src/other.ts": OTHER, "src/app.ts": app}
    head = {"src/helper.ts": HELPER.replace("return n", "return n + 1")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("src/app.ts", "mine")]


def test_python_a_local_made_by_calling_a_class(capsys, tmp_path: Path) -> None:
    app = "from .helper import Helper\n\n\ndef go():\n    return 0\n"
    base = {"pkg/__init__.py": "", "pkg/helper.py": "class Helper:\n    def run(self, n):\n        return n\n",
            "pkg/other.py": "class Other:\n    def run(self, n):\n        return -n\n", "pkg/app.py": app}
    head = {"pkg/app.py": app.replace("return 0", "worker = Helper()\n    return worker.run(1)")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("pkg/helper.py", 2)]


PY_HELPER = "class Helper:\n    def run(self, n):\n        return n\n"
PY_OTHER = "class Other:\n    def run(self, n):\n        return -n\n"


def _py_defs(capsys, tmp_path: Path, app: str) -> list[tuple[str, int]]:
    base = {"pkg/__init__.py": "", "pkg/helper.py": PY_HELPER, "pkg/other.py": PY_OTHER, "pkg/app.py": app}
    head = {"pkg/app.py": app.replace("return 0", "return self.worker.run(1)")}
    return definitions(context_of(capsys, tmp_path, base, head))


def test_python_an_attribute_set_to_an_instance_in_init(capsys, tmp_path: Path) -> None:
    app = ("from .helper import Helper\n\n\nclass App:\n    def __init__(self):\n        self.worker = Helper()\n\n"
           "    def go(self):\n        return 0\n")
    assert _py_defs(capsys, tmp_path, app) == [("pkg/helper.py", 2)]


def test_python_an_attribute_annotated_in_the_class_or_given_as_an_annotated_parameter(capsys, tmp_path: Path) -> None:
    annotated = "from .helper import Helper\n\n\nclass App:\n    worker: Helper\n\n    def go(self):\n        return 0\n"
    assert _py_defs(capsys, tmp_path, annotated) == [("pkg/helper.py", 2)]


def test_python_an_attribute_given_as_an_optional_parameter(capsys, tmp_path: Path) -> None:
    app = ("from typing import Optional\n\nfrom .helper import Helper\n\n\nclass App:\n"
           "    def __init__(self, worker: Optional[Helper] = None):\n        self.worker = worker\n\n"
           "    def go(self):\n        return 0\n")
    assert _py_defs(capsys, tmp_path, app) == [("pkg/helper.py", 2)]


def test_ts_a_field_initialised_with_an_instance(capsys, tmp_path: Path) -> None:
    app = ("import { Helper } from './helper'\n\nexport class App {\n  worker = new Helper()\n  go() {\n    return 0\n  }\n}\n")
    assert _defs(capsys, tmp_path, app, "return this.worker.run(1)") == [("src/helper.ts", 2)]
