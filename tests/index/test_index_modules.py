"""Names resolved through the module system, per language: what an import binds a name to (a
file's anonymous default export, a re-exported or renamed name, a package's `__init__` import, a
Go package by its import path), for the definitions the added lines use and the callers of what
changed. Each case has a rival of the same name the words alone would also take, or a binding
the words alone cannot see."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, definitions
from tests.support.index_support import context_of as _context


def _callers(context: list[dict]) -> list[tuple[str, str]]:
    return sorted(callers(context))


def _definitions(context: list[dict]) -> list[tuple[str, int]]:
    return sorted(definitions(context))


# --- JavaScript: anonymous exports, module paths, destructured requires --------------------------

ANONYMOUS = {
    "lib/merge.js": "'use strict';\n\nmodule.exports = (a, b) => {\n  return Object.assign({}, a, b);\n};\n",
    "lib/route/index.js": "module.exports = function (path) {\n  return { path: path };\n};\n",
    "lib/layer.js": "module.exports = class {\n  constructor(name) {\n    this.name = name;\n  }\n};\n",
    "lib/app.js": "const deepMerge = require('./merge');\nconst makeRoute = require('./route');\n"
                  "const Layer = require('./layer.js');\n\nfunction settings(a, b) {\n  return deepMerge(a, b);\n}\n\n"
                  "function route(p) {\n  return makeRoute(p);\n}\n\nfunction layer(n) {\n  return new Layer(n);\n}\n\n"
                  "module.exports = { settings, route, layer };\n",
}


def test_js_an_added_call_of_an_anonymous_export_gets_its_module(capsys, tmp_path: Path) -> None:
    head = {"lib/use.js": "const combine = require('./merge');\nconst route = require('./route');\n"
                          "const Layer = require('./layer.js');\n\n"
                          "exports.both = function both(a, b) {\n  return [combine(a, b), route('/'), new Layer()];\n};\n"}
    assert _definitions(_context(capsys, tmp_path, ANONYMOUS, head)) == [("lib/layer.js", 1), ("lib/merge.js", 3),
                                                                           ("lib/route/index.js", 1)]


def test_js_the_callers_of_an_anonymous_export_are_found_through_its_requires(capsys, tmp_path: Path) -> None:
    head = {"lib/merge.js": ANONYMOUS["lib/merge.js"].replace("{}, a, b", "Object.create(null), a, b")}
    assert _callers(_context(capsys, tmp_path, ANONYMOUS, head)) == [("lib/app.js", "settings")]


def test_js_a_directory_required_is_its_index_file(capsys, tmp_path: Path) -> None:
    head = {"lib/route/index.js": ANONYMOUS["lib/route/index.js"].replace("path: path", "path: path || '/'")}
    assert _callers(_context(capsys, tmp_path, ANONYMOUS, head)) == [("lib/app.js", "route")]


def test_js_a_member_of_a_required_directory_is_what_its_index_file_exports(capsys, tmp_path: Path) -> None:
    base = {"lib/utils/index.js": "exports.flatten = require('./array').flatten;\n",
            "lib/utils/array.js": "exports.flatten = function (a) {\n  return [].concat(a);\n};\n",
            "lib/flatten.js": "exports.flatten = function (a) {\n  return a.flat();\n};\n"}
    head = {"lib/router.js": "exports.all = function all(a) {\n  return require('./utils').flatten(a);\n};\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("lib/utils/array.js", 1)]


def test_js_an_anonymous_export_a_variable_also_names_is_found_through_its_requires(capsys, tmp_path: Path) -> None:
    base = {"lib/router/index.js": "var proto = module.exports = function (options) {\n  var opts = options || {};\n"
                                   "  return opts;\n};\n\nproto.use = function use(fn) {\n  return fn;\n};\n",
            "lib/application.js": "var Router = require('./router');\n\nexports.lazyrouter = function lazyrouter() {\n"
                                  "  return new Router({ strict: true });\n};\n"}
    head = {"lib/router/index.js": base["lib/router/index.js"].replace("options || {}", "options || { strict: false }")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("lib/application.js", "lazyrouter")]


def test_js_the_root_package_required_from_below_is_its_index_file_not_a_namesake(capsys, tmp_path: Path) -> None:
    base = {"index.js": "export function createCommand(name) {\n  return { name };\n}\n",
            "esm.mjs": "import commander from './index.js';\n\nexport const commanderApi = commander;\n",
            "lib/legacy.js": "export const commander = {};\n"}
    head = {"lib/run.js": "const commander = require('../');\n\nexports.run = function run() {\n"
                          "  return commander.createCommand('x') || commander;\n};\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("index.js", 1)]


DESTRUCTURED = {
    "lib/encode.js": "exports.escape = function (s) {\n  return encodeURIComponent(s);\n};\n",
    "lib/html.js": "exports.escape = function (s) {\n  return s.replace(/</g, '&lt;');\n};\n",
    "lib/url.js": "const { escape: esc } = require('./encode');\n\nfunction link(s) {\n  return esc(s);\n}\n\n"
                  "module.exports = link;\n",
}


def test_js_a_destructured_require_binds_its_module_name(capsys, tmp_path: Path) -> None:
    head = {"lib/query.js": "const { escape } = require('./encode');\n\nexports.query = function query(k) {\n"
                            "  return escape(k);\n};\n"}
    assert _definitions(_context(capsys, tmp_path, DESTRUCTURED, head)) == [("lib/encode.js", 1)]


def test_js_a_renamed_destructured_require_makes_a_caller(capsys, tmp_path: Path) -> None:
    head = {"lib/encode.js": DESTRUCTURED["lib/encode.js"].replace("(s);", "(String(s));")}
    assert _callers(_context(capsys, tmp_path, DESTRUCTURED, head)) == [("lib/url.js", "link")]


# --- TypeScript: default and namespace imports, re-exports, index files ---------------------------

TYPESCRIPT = {
    "src/format.ts": "export default function format(n: number): string {\n  return n.toFixed(2)\n}\n",
    "src/units/size.ts": "export function parse(s: string): number {\n  return Number(s)\n}\n",
    "src/units/time.ts": "export function parse(s: string): number {\n  return Date.parse(s)\n}\n",
    "src/units/index.ts": "export { parse as parseSize } from './size'\nexport * from './time'\n",
    "src/price.ts": "import fmt from './format'\n\nexport function price(n: number) {\n  return fmt(n) + ' EUR'\n}\n",
}


def test_ts_a_default_import_under_another_name_gets_the_default_export(capsys, tmp_path: Path) -> None:
    head = {"src/total.ts": "import show from './format'\n\nexport function total(a: number, b: number) {\n"
                            "  return show(a + b)\n}\n"}
    assert _definitions(_context(capsys, tmp_path, TYPESCRIPT, head)) == [("src/format.ts", 1)]


def test_ts_the_callers_of_a_default_export_use_the_name_its_importers_give(capsys, tmp_path: Path) -> None:
    head = {"src/format.ts": TYPESCRIPT["src/format.ts"].replace("toFixed(2)", "toFixed(3)")}
    assert _callers(_context(capsys, tmp_path, TYPESCRIPT, head)) == [("src/price.ts", "price")]


def test_ts_a_default_export_re_exported_under_a_name_is_that_default(capsys, tmp_path: Path) -> None:
    base = {**TYPESCRIPT, "src/index.ts": "export { default as formatNumber } from './format'\n"}
    head = {"src/show.ts": "import { formatNumber } from '.'\n\nexport function show(n: number) {\n"
                           "  return formatNumber(n)\n}\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("src/format.ts", 1)]


def test_ts_the_callers_of_an_anonymous_export_default_are_its_importers(capsys, tmp_path: Path) -> None:
    base = {"src/clamp.ts": "export default (n: number): number => {\n  return Math.max(0, n)\n}\n",
            "src/view.tsx": "import clampTo from './clamp'\n\nexport function View(n: number) {\n  return clampTo(n)\n}\n"}
    head = {"src/clamp.ts": base["src/clamp.ts"].replace("0, n", "1, n")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/view.tsx", "View")]


def test_ts_a_namespace_import_of_an_index_file_follows_its_re_exports(capsys, tmp_path: Path) -> None:
    head = {"src/read.ts": "import * as units from './units'\n\nexport function read(s: string) {\n"
                           "  return units.parseSize(s)\n}\n"}
    assert _definitions(_context(capsys, tmp_path, TYPESCRIPT, head)) == [("src/units/size.ts", 1)]


def test_ts_a_renamed_re_export_is_the_name_it_renames(capsys, tmp_path: Path) -> None:
    head = {"src/read.ts": "import { parseSize } from './units'\n\nexport function read(s: string) {\n"
                           "  return parseSize(s)\n}\n"}
    assert _definitions(_context(capsys, tmp_path, TYPESCRIPT, head)) == [("src/units/size.ts", 1)]


def test_ts_a_star_re_export_gives_its_module_names_not_a_renamed_namesake(capsys, tmp_path: Path) -> None:
    head = {"src/read.ts": "import { parse } from './units'\n\nexport function read(s: string) {\n"
                           "  return parse(s)\n}\n"}
    assert _definitions(_context(capsys, tmp_path, TYPESCRIPT, head)) == [("src/units/time.ts", 1)]


def test_ts_callers_use_the_name_a_module_re_exports_a_definition_under(capsys, tmp_path: Path) -> None:
    base = {**TYPESCRIPT, "src/read.ts": "import { parseSize } from './units'\n\nexport function read(s: string) {\n"
                                         "  return parseSize(s)\n}\n"}
    head = {"src/units/size.ts": TYPESCRIPT["src/units/size.ts"].replace("Number(s)", "Number(s.trim())")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/read.ts", "read")]


WORKSPACE = {
    "package.json": '{"name": "acme", "private": true, "workspaces": ["packages/*"]}\n',
    "tsconfig.json": '{\n  // shared\n  "compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["packages/app/src/*"],},},\n}\n',
    "packages/core/package.json": '{"name": "@acme/core", "main": "dist/index.js"}\n',
    "packages/core/src/index.ts": "export { format } from './format'\n",
    "packages/core/src/format.ts": "export function format(n: number): string {\n  return String(n)\n}\n",
    "packages/legacy/src/format.ts": "export function format(n: number): string {\n  return '' + n\n}\n",
    "packages/app/src/util/math.ts": "export function clamp(n: number): number {\n  return Math.max(0, n)\n}\n",
    "packages/app/src/price.ts": "import { format } from '@acme/core'\nimport { clamp } from '@/util/math'\n\n"
                                 "export function price(n: number) {\n  return format(clamp(n))\n}\n",
}


def test_ts_a_workspace_package_is_found_by_its_package_json_name(capsys, tmp_path: Path) -> None:
    head = {"packages/app/src/total.ts": "import { format } from '@acme/core'\n\nexport function total(n: number) {\n"
                                         "  return format(n)\n}\n"}
    assert _definitions(_context(capsys, tmp_path, WORKSPACE, head)) == [("packages/core/src/format.ts", 1)]


def test_ts_a_tsconfig_path_alias_leads_to_its_file(capsys, tmp_path: Path) -> None:
    head = {"packages/app/src/util/math.ts": WORKSPACE["packages/app/src/util/math.ts"].replace("0, n", "1, n")}
    assert _callers(_context(capsys, tmp_path, WORKSPACE, head)) == [("packages/app/src/price.ts", "price")]


HELP = {
    "lib/help.js": "export class Help {\n  format(s) {\n    return s;\n  }\n}\n",
    "lib/legacy/help.js": "export class Help {\n  format(s) {\n    return '';\n  }\n}\n",
    "typings/index.d.ts": "export class Help {\n  format(s: string): string;\n}\n",
    "lib/command.js": "import { Help, other } from './help.js';\n\nexport function help() {\n  return new Help();\n}\n",
}


def test_js_a_name_an_added_import_brings_in_gets_its_definition(capsys, tmp_path: Path) -> None:
    head = {"lib/command.js": HELP["lib/command.js"].replace("Help, other", "Help")}
    assert _definitions(_context(capsys, tmp_path, HELP, head)) == [("lib/help.js", 1)]


def test_python_an_added_import_of_an_outside_name_under_an_own_name_gets_nothing(capsys, tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "from .__version__ import __version__\n", "pkg/__version__.py": "__version__ = '1'\n"}
    head = {"pkg/__init__.py": base["pkg/__init__.py"] + "from chardet import __version__ as chardet_version\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == []


def test_js_a_declaration_file_gives_way_to_the_code_it_declares(capsys, tmp_path: Path) -> None:
    head = {"lib/run.js": "export function run(help) {\n  return help.format('x');\n}\n"}
    assert _definitions(_context(capsys, tmp_path, {**HELP, "lib/legacy/help.js": "\n"}, head)) == [("lib/help.js", 2)]


# --- Python: relative imports, `__init__` re-exports ----------------------------------------------

PYTHON = {
    "pkg/__init__.py": "from .core.impl import fetch\n",
    "pkg/core/__init__.py": "",
    "pkg/core/impl.py": "def fetch(url):\n    return url\n",
    "pkg/core/helpers.py": "def clean(s):\n    return s.strip()\n",
    "pkg/legacy/impl.py": "def fetch(url):\n    return None\n",
    "pkg/legacy/helpers.py": "def clean(s):\n    return s\n",
    "app/main.py": "import pkg\n\n\ndef run(url):\n    return pkg.fetch(url)\n",
}


def test_python_a_name_a_package_imports_in_init_is_its_attribute(capsys, tmp_path: Path) -> None:
    head = {"app/cli.py": "import pkg\n\n\ndef get(url):\n    return pkg.fetch(url)\n"}
    assert _definitions(_context(capsys, tmp_path, PYTHON, head)) == [("pkg/core/impl.py", 1)]


def test_python_callers_through_a_package_init_re_export(capsys, tmp_path: Path) -> None:
    head = {"pkg/core/impl.py": "def fetch(url):\n    return url.strip()\n"}
    assert _callers(_context(capsys, tmp_path, PYTHON, head)) == [("app/main.py", "run")]


def test_python_callers_under_an_alias_of_the_import(capsys, tmp_path: Path) -> None:
    base = {**PYTHON, "app/grab.py": "from pkg.core.impl import fetch as grab\n\n\ndef load(u):\n    return grab(u)\n"}
    head = {"pkg/core/impl.py": "def fetch(url):\n    return url.strip()\n"}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("app/grab.py", "load"), ("app/main.py", "run")]


def test_python_a_name_neither_imported_nor_defined_is_a_builtin_not_a_namesake(capsys, tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "", "pkg/compat.py": "str = str\nbytes = bytes\nbasestring = (str, bytes)\n"}
    head = {"pkg/types.py": "from .compat import basestring\n\n\ndef is_text(obj):\n"
                            "    return isinstance(obj, (str, bytes)) or isinstance(obj, basestring)\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("pkg/compat.py", 3)]


def test_python_a_parent_relative_import_is_its_module_not_a_namesake(capsys, tmp_path: Path) -> None:
    head = {"pkg/core/text.py": "from ..core.helpers import clean\n\n\ndef words(s):\n    return clean(s).split()\n"}
    assert _definitions(_context(capsys, tmp_path, PYTHON, head)) == [("pkg/core/helpers.py", 1)]


def test_python_a_module_imported_from_its_package_and_its_alias(capsys, tmp_path: Path) -> None:
    head = {"pkg/core/text.py": "from . import helpers\nimport pkg.core.impl as impl\n\n\ndef words(s):\n"
                                "    return helpers.clean(impl.fetch(s))\n"}
    assert _definitions(_context(capsys, tmp_path, PYTHON, head)) == [("pkg/core/helpers.py", 1),
                                                                        ("pkg/core/impl.py", 1)]


def test_python_a_member_of_a_stdlib_module_or_an_imported_value_is_no_module_function(capsys,
                                                                                      tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "", "pkg/api.py": "def get(url):\n    return url\n", "pkg/consts.py": "PORTS = {}\n",
            "pkg/utils.py": "import os\n\nfrom .consts import PORTS\n\n\ndef proxy(k):\n    return os.environ.get(k)\n"
                            "\n\ndef port(s):\n    return PORTS.get(s)\n",
            "app.py": "import pkg.api as api\n\n\ndef run():\n    return api.get('x')\n"}
    head = {"pkg/api.py": "def get(url):\n    return url.strip()\n"}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("app.py", "run")]


# --- Go: import paths through go.mod, package names, aliases ---------------------------------------

GO = {
    "go.mod": "module example.com/shop/v2\n\ngo 1.21\n",
    "router.go": "package shop\n\nfunc NewRouter() int {\n\treturn 1\n}\n",
    "store/db.go": "package inventory\n\nfunc Get(id int) int {\n\treturn id\n}\n",
    "legacy/store/db.go": "package store\n\nfunc Get(id int) int {\n\treturn 0\n}\n",
    "api/handler.go": "package api\n\nimport (\n\tshop \"example.com/shop/v2\"\n\t\"example.com/shop/v2/store\"\n)\n\n"
                      "func Handle() int {\n\treturn inventory.Get(shop.NewRouter())\n}\n",
    "middleware/log.go": "package middleware\n\nimport \"example.com/shop/v2\"\n\n"
                         "func Log() int {\n\treturn shop.NewRouter()\n}\n",
}


def test_go_a_package_named_apart_from_its_directory_is_found_by_its_import_path(capsys, tmp_path: Path) -> None:
    head = {"store/db.go": "package inventory\n\nfunc Get(id int) int {\n\treturn id + 1\n}\n"}
    assert _callers(_context(capsys, tmp_path, GO, head)) == [("api/handler.go", "Handle")]


def test_go_the_module_root_package_is_used_by_its_own_name(capsys, tmp_path: Path) -> None:
    head = {"router.go": "package shop\n\nfunc NewRouter() int {\n\treturn 2\n}\n"}
    assert _callers(_context(capsys, tmp_path, GO, head)) == [("api/handler.go", "Handle"),
                                                              ("middleware/log.go", "Log")]


def test_go_an_aliased_import_is_its_directory_not_a_namesake(capsys, tmp_path: Path) -> None:
    head = {"api/list.go": "package api\n\nimport inv \"example.com/shop/v2/legacy/store\"\n\n"
                           "func List() int {\n\treturn inv.Get(1)\n}\n"}
    assert _definitions(_context(capsys, tmp_path, GO, head)) == [("legacy/store/db.go", 3)]


def test_go_a_changed_interface_method_is_that_method_not_the_whole_interface(capsys, tmp_path: Path) -> None:
    base = {"router.go": "package shop\n\ntype Router interface {\n\tGet(p string)\n\tPost(p string)\n}\n",
            "use.go": "package shop\n\nfunc Mount(r Router) {\n\tr.Get(\"/\")\n}\n\nfunc Other(r Router) {\n"
                      "\tr.Post(\"/\")\n}\n"}
    head = {"router.go": base["router.go"].replace("Post(p string)", "Post(p string, q int)")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("use.go", "Other")]


def test_go_a_bare_name_is_its_own_directory_s_not_a_same_named_package_s(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/tool\n", "cmd/util/h.go": "package util\n\nfunc Helper() int {\n\treturn 1\n}\n",
            "pkg/util/h.go": "package util\n\nfunc Helper() int {\n\treturn 2\n}\n"}
    head = {"cmd/util/x.go": "package util\n\nfunc Run() int {\n\treturn Helper()\n}\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("cmd/util/h.go", 3)]
