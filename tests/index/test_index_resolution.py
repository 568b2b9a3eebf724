"""Names resolved, not only matched: per class of miss, a small repository where `reviewer context`
must find what a reviewer opens and leave out what only shares a name.

1. a changed constant or module value brings its uses; 2. every calling function, one piece each,
several uses merged; 3. more than a handful of callers, primary sources before tests, a re-export
no caller; 4. CommonJS definitions and receivers; 5. Java overloads, static imports, fields;
6. Rust's same-named types through `use` paths, impl methods; 7. TypeScript exported consts and
re-exports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.index_support import callers as _callers
from tests.support.index_support import context_of as _context
from tests.support.index_support import definitions as _definitions

CONSTANTS = {
    "python": ({"pkg/compat.py": "import sys\nWIN = sys.platform.startswith('win')\n",
                "pkg/pager.py": "from .compat import WIN\n\n\ndef pager():\n    if WIN:\n        return 'more'\n"
                                "    return 'less'\n"},
               {"pkg/compat.py": "import sys\nWIN = sys.platform.startswith(('win', 'cygwin'))\n"},
               [("pkg/pager.py", "pager")]),
    "go": ({"limits.go": "package shop\n\nconst MaxDepth = 3\n",
            "walk.go": "package shop\n\nfunc Walk(depth int) bool {\n\treturn depth < MaxDepth\n}\n"},
           {"limits.go": "package shop\n\nconst MaxDepth = 4\n"},
           [("walk.go", "Walk")]),
    "typescript": ({"src/env.ts": "export const NOTHING = Symbol.for('nothing')\n",
                    "src/finalize.ts": "import {NOTHING} from './env'\n\nexport function result(r: any) {\n"
                                       "  return r === NOTHING ? undefined : r\n}\n"},
                   {"src/env.ts": "export const NOTHING = Symbol.for('immer-nothing')\n"},
                   [("src/finalize.ts", "result")]),
    "java": ({"src/CodeWriter.java": "final class CodeWriter {\n  private int indentLevel;\n\n"
                                     "  void indent() {\n    this.indentLevel++;\n  }\n}\n",
              "src/LineWrapper.java": "final class LineWrapper {\n  private int indentLevel = -1;\n\n"
                                      "  void wrap(int level) {\n    this.indentLevel = level;\n  }\n}\n"},
             {"src/CodeWriter.java": "final class CodeWriter {\n  private int indentLevel = 0;\n\n"
                                     "  void indent() {\n    this.indentLevel++;\n  }\n}\n"},
             [("src/CodeWriter.java", "indent")]),
    "rust": ({"src/raw.rs": "pub const TOKEN: &str = \"raw\";\n", "src/number.rs": "pub const TOKEN: &str = \"num\";\n",
              "src/ser.rs": "fn raw_key(k: &str) -> bool {\n    k == crate::raw::TOKEN\n}\n\n"
                            "fn number_key(k: &str) -> bool {\n    k == crate::number::TOKEN\n}\n"},
             {"src/raw.rs": "pub const TOKEN: &str = \"$raw\";\n"},
             [("src/ser.rs", "raw_key")]),
}


@pytest.mark.parametrize("language", sorted(CONSTANTS))
def test_a_changed_constant_brings_the_functions_that_use_it(capsys, tmp_path: Path, language: str) -> None:
    base, head, expected = CONSTANTS[language]
    assert _callers(_context(capsys, tmp_path, base, head)) == expected


def test_every_calling_function_comes_once_its_uses_merged(capsys, tmp_path: Path) -> None:
    calls = "".join(f"    total += compute({n})\n" + "    total += 1\n" * 4 for n in range(6))
    app = (f"from lib import compute\n\n\ndef long_caller():\n    total = 0\n{calls}    return total\n\n\n"
           "def second():\n    return compute(2)\n\n\ndef third():\n    return [compute(n) for n in range(3)]\n")
    context = _context(capsys, tmp_path, {"lib.py": "def compute(x):\n    return x\n", "app.py": app},
                       {"lib.py": "def compute(x):\n    return x * 2\n"})
    assert sorted(_callers(context)) == [("app.py", "long_caller"), ("app.py", "second"), ("app.py", "third")]


def test_all_callers_the_budget_holds_primary_first_and_a_reexport_is_no_caller(capsys, tmp_path: Path) -> None:
    base = {"pkg/util.py": "def helper():\n    return 1\n", "pkg/__init__.py": "from .util import helper as helper\n",
            "tests/test_util.py": "from pkg.util import helper\n\n\ndef test_helper():\n    assert helper() == 1\n"}
    for n in range(12):
        base[f"pkg/mod{n:02}.py"] = f"from .util import helper\n\n\ndef use{n}():\n    return helper() + {n}\n"
    context = _context(capsys, tmp_path, base, {"pkg/util.py": "def helper():\n    return 2\n"})
    callers = _callers(context)
    assert sorted(callers[:12]) == [(f"pkg/mod{n:02}.py", f"use{n}") for n in range(12)]
    assert callers[12:] == [("tests/test_util.py", "test_helper")]


COMMONJS = {
    "lib/utils.js": "exports.compileTrust = function(val) {\n  return val;\n};\n",
    "lib/application.js": "var compileTrust = require('./utils').compileTrust;\nvar app = exports = module.exports = {};\n\n"
                          "app.set = function set(setting, val) {\n  this.trust = compileTrust(val);\n  return this;\n};\n\n"
                          "app.enable = function enable(setting) {\n  return this.set(setting, true);\n};\n",
    "lib/response.js": "var res = module.exports = {};\n\nres.set = function set(field, val) {\n  return this;\n};\n\n"
                       "res.type = function type(t) {\n  return this.set('Content-Type', t);\n};\n",
}


def test_commonjs_exports_are_found_through_their_require_alias(capsys, tmp_path: Path) -> None:
    head = {"lib/utils.js": "exports.compileTrust = function(val) {\n  return val || false;\n};\n"}
    assert _callers(_context(capsys, tmp_path, COMMONJS, head)) == [("lib/application.js", "set")]


def test_commonjs_methods_are_called_through_this_in_their_own_object(capsys, tmp_path: Path) -> None:
    head = {"lib/application.js": COMMONJS["lib/application.js"].replace("return this;", "return this; // chain")}
    assert _callers(_context(capsys, tmp_path, COMMONJS, head)) == [("lib/application.js", "enable")]


def test_an_added_line_gets_the_commonjs_definition_it_calls(capsys, tmp_path: Path) -> None:
    head = {"lib/request.js": "var compileTrust = require('./utils').compileTrust;\n\n"
                              "exports.trusted = function trusted(v) {\n  return compileTrust(v);\n};\n"}
    assert _definitions(_context(capsys, tmp_path, COMMONJS, head)) == [("lib/utils.js", 1)]


JAVA = {
    "src/TypeName.java": "class TypeName {\n  static TypeName get(java.lang.reflect.Type type) {\n    return null;\n  }\n}\n",
    "src/ClassName.java": "class ClassName extends TypeName {\n  static ClassName get(Class<?> clazz) {\n    return null;\n"
                          "  }\n\n  static ClassName get(String packageName, String simpleName, String... more) {\n"
                          "    return null;\n  }\n}\n",
    "src/com/example/Util.java": "package com.example;\n\nfinal class Util {\n  static void checkArgument(boolean condition) {\n"
                                 "  }\n}\n",
    "src/FieldSpec.java": "import static com.example.Util.checkArgument;\n\nclass FieldSpec {\n  void check() {\n"
                          "    checkArgument(true);\n  }\n}\n",
    "src/Preconditions.java": "class Preconditions {\n  static void checkArgument(boolean c) {\n  }\n\n"
                              "  static void checkAll() {\n    checkArgument(false);\n  }\n}\n",
}


def test_java_a_qualified_call_gets_the_overload_of_its_class_that_fits(capsys, tmp_path: Path) -> None:
    head = {"src/JavaFile.java": "class JavaFile {\n  Object name() {\n    return ClassName.get(\"a\", \"B\");\n  }\n}\n"}
    assert _definitions(_context(capsys, tmp_path, JAVA, head))[0] == ("src/ClassName.java", 6)


def test_java_a_static_import_makes_a_bare_call_a_caller(capsys, tmp_path: Path) -> None:
    head = {"src/com/example/Util.java": "package com.example;\n\nfinal class Util {\n"
                                         "  static void checkArgument(boolean condition) {\n    assert condition;\n  }\n}\n"}
    assert _callers(_context(capsys, tmp_path, JAVA, head)) == [("src/FieldSpec.java", "check")]


RUST = {
    "src/error.rs": "pub struct Error {\n    code: u8,\n}\n\nimpl Error {\n    pub(crate) fn syntax(code: u8) -> Self {\n"
                    "        Error { code }\n    }\n}\n",
    "src/io.rs": "pub struct Error;\n\nimpl Error {\n    pub fn syntax(code: u8) -> Self {\n        Error\n    }\n}\n",
    "src/de.rs": "use crate::error::Error;\n\nfn parse() -> Error {\n    Error::syntax(1)\n}\n",
    "src/ser.rs": "use crate::io::Error;\n\nfn write() -> Error {\n    Error::syntax(3)\n}\n",
}


def test_rust_a_use_path_says_which_same_named_type_is_meant(capsys, tmp_path: Path) -> None:
    head = {"src/de.rs": RUST["src/de.rs"] + "\nfn fail() -> Error {\n    Error::syntax(2)\n}\n"}
    assert sorted(_definitions(_context(capsys, tmp_path, RUST, head))) == [("src/error.rs", 1), ("src/error.rs", 6)]


def test_rust_an_impl_methods_callers_are_found_through_its_type(capsys, tmp_path: Path) -> None:
    head = {"src/error.rs": RUST["src/error.rs"].replace("Error { code }", "Error { code: code + 0 }")}
    assert _callers(_context(capsys, tmp_path, RUST, head)) == [("src/de.rs", "parse")]


TYPESCRIPT = {
    "src/utils/common.ts": "export let latest = (state: any): any => state.copy || state.base\n",
    "src/internal.ts": "export * from './utils/common'\n",
    "src/immer.ts": "export {latest} from './internal'\n",
    "src/other/latest.ts": "export const latest = (x: any) => x\n",
    "src/core/proxy.ts": "import {latest} from '../internal'\n\nexport function peek(draft: any) {\n"
                         "  return latest(draft)\n}\n",
}


def test_typescript_an_exported_arrow_const_is_called_through_a_barrel_and_a_reexport_is_no_caller(
        capsys, tmp_path: Path) -> None:
    head = {"src/utils/common.ts": "export let latest = (state: any): any => state.copy ?? state.base\n"}
    assert _callers(_context(capsys, tmp_path, TYPESCRIPT, head)) == [("src/core/proxy.ts", "peek")]


def test_typescript_an_added_line_gets_the_exported_const_it_uses(capsys, tmp_path: Path) -> None:
    head = {"src/core/proxy.ts": TYPESCRIPT["src/core/proxy.ts"] + "\nexport const seen = (d: any) => !!latest(d)\n"}
    assert _definitions(_context(capsys, tmp_path, TYPESCRIPT, head)) == [("src/utils/common.ts", 1)]


def test_rust_a_macro_is_seen_in_every_module_of_its_crate(capsys, tmp_path: Path) -> None:
    base = {"src/lib.rs": "macro_rules! tri {\n    ($e:expr) => {\n        match $e {\n            Ok(v) => v,\n"
                          "            Err(e) => return Err(e),\n        }\n    };\n}\n\nmod de;\n",
            "src/de.rs": "fn parse(s: &str) -> Result<u8, ()> {\n    Ok(1)\n}\n"}
    head = {"src/de.rs": "fn parse(s: &str) -> Result<u8, ()> {\n    let n = tri!(Ok(1));\n    Ok(n)\n}\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("src/lib.rs", 1)]


def test_a_destructured_local_is_not_another_modules_definition(capsys, tmp_path: Path) -> None:
    base = {"src/immer.js": "export const produce = (base, recipe) => recipe(base)\n",
            "test/base.js": "import {createImmer} from '../src/immer'\n\nexport function run() {\n"
                            "  const {produce} = createImmer()\n  return 1\n}\n"}
    head = {"test/base.js": base["test/base.js"].replace("return 1", "return produce({}, d => d)")}
    assert _definitions(_context(capsys, tmp_path, base, head)) == []


def test_keys_of_type_literals_and_fields_of_other_objects_are_not_a_modules_names(capsys, tmp_path: Path) -> None:
    base = {"source/constants.ts": "export const retry = (limit?: number) => ({limit})\n",
            "source/merge.ts": "export function merged(body: {retry: unknown}): unknown {\n  return 1\n}\n"}
    head = {"source/merge.ts": "export function merged(body: {retry: unknown}): unknown {\n  return body.retry\n}\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == []


def test_a_method_of_an_object_in_a_callback_has_no_callers_in_other_files(capsys, tmp_path: Path) -> None:
    base = {"test/retry.js": "test('wraps errors', async () => {\n  await ky('https://example.com', {\n"
                             "    async fetch() {\n      throw new TypeError('Load failed')\n    },\n  })\n})\n",
            "test/fetch.js": "test('custom fetch', async () => {\n  const customFetch = async (input) => {\n"
                             "    return fetch(input)\n  }\n  await customFetch('x')\n})\n",
            "source/core.js": "export async function send(input) {\n  return fetch(input)\n}\n"}
    head = {"test/retry.js": base["test/retry.js"].replace("'Load failed'", "'Load failed (example.com)'")}
    assert _callers(_context(capsys, tmp_path, base, head)) == []


def test_a_blank_line_added_inside_a_function_changes_nothing_that_calls_it(capsys, tmp_path: Path) -> None:
    base = {"lib.py": "def compute(x):\n    y = x\n    return y\n",
            "app.py": "from lib import compute\n\n\ndef report():\n    return compute(1)\n"}
    head = {"lib.py": "def compute(x):\n    y = x\n\n    return y\n"}
    assert _callers(_context(capsys, tmp_path, base, head)) == []
