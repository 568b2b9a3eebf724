"""The context bench's ground truth reads where a definition ends (bench/truth/text.py): a brace in
a signature's type parameters is a type, not the definition's block, so a generic function's
extent runs to the brace that closes its body."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

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
