"""The context bench's ground truth (bench/truth/): where a definition ends (a brace in a
signature's type parameters is a type, not the block) and which files' words can mean a
JavaScript or TypeScript module's top-level name (its own, unless it is exported)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from truth.javascript import module_private  # noqa: E402
from truth.model import Tag  # noqa: E402
from truth.text import extent  # noqa: E402


def test_a_type_parameters_default_brace_does_not_end_a_typescript_function():
    lines = [
        "export function make<S, Ext extends {} = {}>(reducer: (s: S) => S, extra?: Ext): S {",
        "  const state = reducer(undefined as S)",
        "  return state",
        "}",
        "const after = 1",
    ]
    assert extent(lines, 1, "typescript", "function") == 4


def test_an_arrow_type_in_type_parameters_keeps_counting_angles():
    lines = [
        "class Box<F extends (a: number) => {}, G = {}> {",
        "  open() { return 1 }",
        "}",
    ]
    assert extent(lines, 1, "typescript", "class") == 3


def test_a_java_generic_method_and_a_rust_impl_end_at_their_blocks():
    java = ["public <T extends Map<String, Object>> T read(T map) {", "  return map;", "}"]
    rust = ["impl<T: Into<u8>> From<T> for Byte {", "    fn from(t: T) -> Self { Byte(t.into()) }", "}"]
    assert extent(java, 1, "java", "method") == 3
    assert extent(rust, 1, "rust", "implementation") == 3


def test_a_type_literal_alias_still_ends_where_its_braces_close():
    lines = ["export type Options<T = {}> = {", "  value: T", "}", "export const x = 1"]
    assert extent(lines, 1, "typescript", "type") == 3


def _tag(name: str, line: int) -> Tag:
    return Tag(name, "src/a.js", line, line, "variable", "")


def test_a_modules_own_top_level_name_is_private_unless_exported():
    esm = "import { join } from 'node:path'\nconst source = join('a', 'b')\nexport function run() {}\n"
    assert module_private(esm, _tag("source", 2))
    assert not module_private(esm, _tag("run", 3))
    listed = "import x from './x'\nconst source = 1\nconst other = 2\nexport {\n  source,\n}\n"
    assert not module_private(listed, _tag("source", 2)) and module_private(listed, _tag("other", 3))
    common = "const path = require('path')\nfunction build() {}\nfunction helper() {}\nmodule.exports = build\n"
    assert not module_private(common, _tag("build", 2)) and module_private(common, _tag("helper", 3))
    assert not module_private("exports.helper = helper\nfunction helper() {}\n", _tag("helper", 2))
    assert not module_private("import a from './a'\nconst pick = 1\nexport default {\n  a,\n  pick,\n}\n", _tag("pick", 2))


def test_a_script_without_module_syntax_shares_its_names():
    assert not module_private("var source = 1\nfunction run() { return source }\n", _tag("source", 1))
