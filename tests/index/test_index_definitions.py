"""What the parser counts as a definition, per language: a module's values (constants, annotated
and exported ones), CommonJS assignments, methods scoped by their type (a Go receiver, a Rust
impl), Java fields and enum constants; and what it does not (locals, imports, aliases, a Rust
impl's associated types)."""

from __future__ import annotations

from bot.index.parse import parse_symbols


def _defs(path: str, text: str) -> set[tuple[str, str, str]]:
    return {(d.kind, d.scope, d.name) for d in parse_symbols(path, text).definitions}


def test_python_module_values_are_definitions_but_locals_and_class_attributes_are_not() -> None:
    found = _defs("m.py", "import os\nWIN = os.name == 'nt'\nFORCED_WIDTH: int | None = None\n"
                          "class A:\n    size = 3\n    def f(self):\n        local = 1\n        return local\n")
    assert ("constant", "", "WIN") in found and ("constant", "", "FORCED_WIDTH") in found
    assert not {name for _, _, name in found} & {"size", "local", "os"}


def test_commonjs_assignments_are_definitions_of_the_module_or_its_objects() -> None:
    text = ("var utils = require('./utils');\nvar compileTrust = require('./utils').compileTrust;\n"
            "var join = path.join;\nexports.etag = createGenerator({ weak: false })\n"
            "exports.compileETag = function(val) { return val };\n"
            "res.send = function send(body) { return this; };\nreq.get =\nreq.header = function header(n) {};\n"
            "View.prototype.render = function render(o) {};\nexports.Router = Router;\n"
            "defineGetter(req, 'protocol', function protocol(){ return 'http' });\n")
    found = _defs("lib/response.js", text)
    assert {("variable", "", "etag"), ("function", "", "compileETag"), ("method", "res", "send"),
            ("method", "req", "get"), ("method", "req", "header"), ("method", "View", "render"),
            ("method", "req", "protocol")} <= found
    assert not {name for _, _, name in found} & {"utils", "compileTrust", "join", "Router"}


def test_typescript_exported_consts_and_arrow_properties_are_definitions() -> None:
    text = ("export const NOTHING: unique symbol = Symbol.for('n')\nexport let isDraft = (v: any) => !!v\n"
            "class Immer {\n  produce: P = (base: any) => {\n    const inner = 1\n    return inner\n  }\n}\n")
    found = _defs("src/env.ts", text)
    assert {("constant", "", "NOTHING"), ("function", "", "isDraft"), ("method", "Immer", "produce")} <= found
    assert "inner" not in {name for _, _, name in found}


def test_go_constants_variables_and_methods_scoped_by_their_receiver() -> None:
    text = ("package cobra\n\nconst (\n\tA Directive = 1 << iota\n\tB\n)\nvar flags = 3\n"
            "func (c *Command) CommandPath() string {\n\tconst local = 2\n\treturn \"\"\n}\n")
    found = _defs("command.go", text)
    assert {("constant", "", "A"), ("constant", "", "B"), ("variable", "", "flags"),
            ("method", "Command", "CommandPath")} <= found
    assert "local" not in {name for _, _, name in found}


def test_java_fields_and_enum_constants_are_definitions_of_their_class() -> None:
    text = ("final class CodeWriter {\n  private int indentLevel;\n  enum Kind { CLASS, INTERFACE(1) }\n"
            "  void indent() { int local = 0; indentLevel++; }\n}\n")
    found = _defs("CodeWriter.java", text)
    assert {("field", "CodeWriter", "indentLevel"), ("constant", "CodeWriter.Kind", "INTERFACE")} <= found
    assert "local" not in {name for _, _, name in found}


def test_rust_impl_methods_are_scoped_by_their_type_and_associated_types_are_not_definitions() -> None:
    text = ("pub static LIMIT: usize = 3;\npub struct Number { n: u64 }\nimpl Number {\n"
            "    pub fn is_f64(&self) -> bool { false }\n}\nimpl de::Error for Error {\n    type Error = Error;\n"
            "    fn custom() -> Self { todo!() }\n}\npub trait Formatter {\n    fn begin(&mut self) {}\n}\n")
    found = _defs("src/number.rs", text)
    assert {("constant", "", "LIMIT"), ("method", "Number", "is_f64"), ("method", "Error", "custom"),
            ("method", "Formatter", "begin")} <= found
    assert ("type", "Error", "Error") not in found and not any(k == "type" for k, _, _ in found)
