"""Rust paths resolved as rustc resolves them, in small repositories laid out as real crates:
`crate::`, `self::` and `super::` (inline modules too), a module `use`d then named, each crate
of a workspace apart (its integration tests name it by its crate's name), and a free function
told apart from a same-named method by how it is called. Each holds a decoy that only matching
words would take."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers as _callers
from tests.support.index_support import context_of as _context
from tests.support.index_support import definitions as _definitions

HELPER = "pub fn helper() -> u8 {\n    1\n}\n"
CHANGED = "pub fn helper() -> u8 {\n    2\n}\n"


def test_rust_crate_paths_stay_in_their_own_crate_of_a_workspace(capsys, tmp_path: Path) -> None:
    run = "pub fn {}() -> u8 {{\n    crate::helper()\n}}\n"
    base = {"crates/a/src/lib.rs": "mod run;\n\n" + HELPER, "crates/a/src/run.rs": run.format("run"),
            "crates/b/src/lib.rs": "mod go;\n\n" + HELPER, "crates/b/src/go.rs": run.format("go")}
    head = {"crates/a/src/lib.rs": "mod run;\n\n" + CHANGED}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("crates/a/src/run.rs", "run")]


def test_rust_self_and_super_paths_reach_the_module_around_them(capsys, tmp_path: Path) -> None:
    util = HELPER + "\npub fn twice() -> u8 {\n    self::helper() * 2\n}\n\nmod inner {\n" \
                    "    pub fn again() -> u8 {\n        super::helper()\n    }\n}\n"
    base = {"src/lib.rs": "mod util;\nmod other;\n", "src/util.rs": util,
            "src/other.rs": HELPER + "\nmod inner {\n    pub fn again() -> u8 {\n        super::helper()\n    }\n}\n"}
    head = {"src/util.rs": util.replace("    1\n", "    3\n", 1)}
    assert sorted(_callers(_context(capsys, tmp_path, base, head))) == [("src/util.rs", "again"),
                                                                        ("src/util.rs", "twice")]


def test_rust_a_used_module_names_the_functions_reached_through_it(capsys, tmp_path: Path) -> None:
    base = {"src/lib.rs": "mod a;\nmod b;\nmod app;\n", "src/a.rs": HELPER, "src/b.rs": HELPER,
            "src/app.rs": "use crate::a;\n\npub fn start() -> u8 {\n    0\n}\n"}
    head = {"src/app.rs": "use crate::a;\n\npub fn start() -> u8 {\n    a::helper()\n}\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("src/a.rs", 1)]


def test_rust_an_inline_modules_function_is_no_method(capsys, tmp_path: Path) -> None:
    fmt = "pub mod fmt {\n    pub fn pad() -> u8 {\n        1\n    }\n}\n"
    base = {"src/lib.rs": "mod show;\n\n" + fmt,
            "src/show.rs": "pub fn show() -> u8 {\n    crate::fmt::pad()\n}\n\npub fn plain(s: &S) -> u8 {\n"
                           "    s.pad()\n}\n"}
    head = {"src/lib.rs": "mod show;\n\n" + fmt.replace("1", "2")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/show.rs", "show")]


def test_rust_integration_tests_name_their_crate(capsys, tmp_path: Path) -> None:
    test = "#[test]\nfn {}() {{\n    assert_eq!({}::helper(), 1);\n}}\n"
    base = {"crates/shop/src/lib.rs": HELPER, "crates/till/src/lib.rs": HELPER,
            "crates/shop/tests/it.rs": test.format("sells", "shop"),
            "crates/till/tests/it.rs": test.format("counts", "till")}
    head = {"crates/shop/src/lib.rs": CHANGED}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("crates/shop/tests/it.rs", "sells")]


METHODS = {
    "src/lib.rs": "mod foo;\nmod foo_ext;\nmod bar;\nmod util;\n",
    "src/util.rs": HELPER,
    "src/foo.rs": "pub struct Foo;\n\nimpl Foo {\n    pub fn helper(&self) -> u8 {\n        1\n    }\n}\n",
    "src/foo_ext.rs": "use crate::foo::Foo;\nuse crate::util::*;\n\nimpl Foo {\n    pub fn twice(&self) -> u8 {\n"
                      "        self.helper() * 2\n    }\n\n    pub fn thrice(&self) -> u8 {\n"
                      "        Self::helper(self) * 3\n    }\n\n    pub fn free(&self) -> u8 {\n        helper()\n    }\n}\n",
    "src/bar.rs": "use crate::util::*;\n\npub struct Bar;\n\nimpl Bar {\n    pub fn helper(&self) -> u8 {\n        2\n    }\n\n"
                  "    pub fn twice(&self) -> u8 {\n        self.helper() * 2\n    }\n}\n",
}


def test_rust_a_types_methods_are_called_on_it_in_other_files_and_free_functions_bare(capsys,
                                                                                       tmp_path: Path) -> None:
    head = {"src/foo.rs": METHODS["src/foo.rs"].replace("        1\n", "        4\n")}
    assert sorted(_callers(_context(capsys, tmp_path, METHODS, head))) == [("src/foo_ext.rs", "thrice"),
                                                                          ("src/foo_ext.rs", "twice")]
    head = {"src/util.rs": CHANGED}
    assert _callers(_context(capsys, tmp_path / "free", METHODS, head)) == [("src/foo_ext.rs", "free")]


def test_rust_an_item_without_pub_is_seen_only_in_its_module(capsys, tmp_path: Path) -> None:
    private = "fn helper() -> u8 {\n    1\n}\n\npub fn twice() -> u8 {\n    helper() * 2\n}\n"
    base = {"src/lib.rs": "mod a;\nmod b;\n\n" + HELPER, "src/a.rs": private,
            "src/b.rs": "use crate::*;\n\npub fn go() -> u8 {\n    helper()\n}\n"}
    head = {"src/a.rs": private.replace("    1\n", "    2\n")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/a.rs", "twice")]


def test_rust_a_path_inside_a_macros_arguments_is_read_whole(capsys, tmp_path: Path) -> None:
    base = {"src/lib.rs": "mod a;\nmod b;\n", "src/a.rs": HELPER, "src/b.rs": "mod a {\n    pub fn helper() -> u8 {\n"
            "        0\n    }\n}\n\npub fn check() {\n    debug_assert!(crate::a::helper() == 1);\n}\n"}
    head = {"src/a.rs": CHANGED}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/b.rs", "check")]


def test_rust_a_call_through_a_type_parameter_may_be_any_implementors(capsys, tmp_path: Path) -> None:
    base = {"src/lib.rs": "mod make;\nmod build;\n",
            "src/make.rs": "pub trait Make {\n    fn make() -> Self;\n}\n\npub struct Unit;\n\nimpl Make for Unit {\n"
                           "    fn make() -> Self {\n        Unit\n    }\n}\n",
            "src/build.rs": "use crate::make::Make;\n\npub fn build<T: Make>() -> T {\n    T::make()\n}\n\n"
                            "pub fn other() -> u8 {\n    Other::make()\n}\n"}
    head = {"src/make.rs": base["src/make.rs"].replace("        Unit\n", "        Unit {}\n")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/build.rs", "build")]


def test_rust_a_call_on_a_generic_value_may_reach_any_implementors_method(capsys, tmp_path: Path) -> None:
    base = {"src/lib.rs": "mod fmt;\nmod out;\n",
            "src/fmt.rs": "pub trait Format {\n    fn open(&mut self) -> u8;\n}\n\npub struct Pretty;\n\n"
                          "impl Format for Pretty {\n    fn open(&mut self) -> u8 {\n        1\n    }\n}\n\n"
                          "pub struct Door;\n\nimpl Door {\n    pub fn open(&mut self) -> u8 {\n        2\n    }\n}\n",
            "src/out.rs": "use crate::fmt::{Door, Format};\n\npub fn write<F: Format>(f: &mut F) -> u8 {\n    f.open()\n}\n\n"
                          "pub fn enter(d: &mut Door) -> u8 {\n    d.open()\n}\n"}
    head = {"src/fmt.rs": base["src/fmt.rs"].replace("        1\n", "        3\n")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/out.rs", "write")]


def test_rust_a_macros_crate_path_is_its_own_crates(capsys, tmp_path: Path) -> None:
    base = {"src/lib.rs": "pub mod private;\nmod other;\n\n#[macro_export]\nmacro_rules! make {\n    () => {\n"
                          "        $crate::private::helper()\n    };\n}\n",
            "src/private.rs": HELPER, "src/other.rs": "pub mod private;\n", "src/other/private.rs": "pub " + HELPER}
    head = {"src/private.rs": CHANGED}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/lib.rs", "make")]
    head = {"src/other/private.rs": "pub " + CHANGED}
    assert _callers(_context(capsys, tmp_path / "other", base, head)) == []


REEXPORT = {
    "src/lib.rs": "mod error;\nmod io;\nmod de;\n\npub use crate::error::Error;\n",
    "src/error.rs": "pub struct Error;\n\nimpl Error {\n    pub fn syntax() -> Self {\n        Error\n    }\n}\n",
    "src/io.rs": "pub struct Error;\n\nimpl Error {\n    pub fn syntax() -> Self {\n        Error\n    }\n}\n",
    "src/de.rs": "use crate::Error;\n\npub fn parse() -> Error {\n    Error::syntax()\n}\n",
}


def test_rust_a_name_used_from_the_crate_root_is_followed_through_its_pub_use(capsys, tmp_path: Path) -> None:
    head = {"src/error.rs": REEXPORT["src/error.rs"].replace("        Error\n", "        Error {}\n")}
    assert _callers(_context(capsys, tmp_path, REEXPORT, head)) == [("src/de.rs", "parse")]
    head = {"src/io.rs": REEXPORT["src/io.rs"].replace("        Error\n", "        Error {}\n")}
    assert _callers(_context(capsys, tmp_path / "io", REEXPORT, head)) == []


def test_rust_an_added_use_names_the_definition_it_brings_in(capsys, tmp_path: Path) -> None:
    base = {"src/lib.rs": "mod error;\nmod io;\nmod de;\n", "src/error.rs": "pub enum ErrorCode {\n    Eof,\n}\n",
            "src/io.rs": "pub enum ErrorCode {\n    Closed,\n}\n", "src/de.rs": "pub fn parse() {}\n"}
    head = {"src/de.rs": "use crate::error::ErrorCode;\n\npub fn parse() {}\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("src/error.rs", 1)]


def test_rust_a_type_of_an_inline_module_is_its_own_not_the_files_use_of_another(capsys, tmp_path: Path) -> None:
    trace = ("pub(crate) use std::backtrace::Backtrace;\n\nmod capture {\n    pub(crate) struct Backtrace {\n"
             "        ip: usize,\n    }\n\n    impl Backtrace {\n        pub(crate) fn capture() -> Backtrace {\n"
             "            Backtrace::create(0)\n        }\n\n        fn create(ip: usize) -> Backtrace {\n"
             "            Backtrace { ip }\n        }\n    }\n}\n")
    base = {"src/lib.rs": "mod backtrace;\n", "src/backtrace.rs": trace}
    head = {"src/backtrace.rs": trace.replace("Backtrace { ip }", "Backtrace { ip: ip + 1 }")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/backtrace.rs", "capture")]


def test_rust_a_name_used_as_another_reaches_what_it_renames(capsys, tmp_path: Path) -> None:
    app = "use crate::a::helper as assist;\nuse crate::b::helper as other;\n\npub fn start() -> u8 {\n    CALL\n}\n"
    base = {"src/lib.rs": "mod a;\nmod b;\nmod app;\n", "src/a.rs": HELPER, "src/b.rs": HELPER,
            "src/app.rs": app.replace("CALL", "assist()")}
    assert _callers(_context(capsys, tmp_path, base, {"src/a.rs": CHANGED})) == [("src/app.rs", "start")]
    head = {"src/app.rs": app.replace("CALL", "other()")}
    assert _definitions(_context(capsys, tmp_path / "used", base, head)) == [("src/b.rs", 1)]


def test_rust_a_crate_is_named_as_its_cargo_toml_says(capsys, tmp_path: Path) -> None:
    use = "use {}::helper;\n\npub fn run() -> u8 {{\n    helper()\n}}\n"
    base = {"Cargo.toml": "[workspace]\nmembers = [\"crates/*\"]\n",
            "crates/core/Cargo.toml": "[package]\nname = \"acme-core\"\n", "crates/core/src/lib.rs": HELPER,
            "crates/util/Cargo.toml": "[package]\nname = \"acme-util\"\n", "crates/util/src/lib.rs": HELPER,
            "crates/cli/Cargo.toml": "[package]\nname = \"acme-cli\"\n", "crates/cli/src/lib.rs": "mod run;\n",
            "crates/cli/src/run.rs": use.format("acme_core")}
    head = {"crates/core/src/lib.rs": CHANGED}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("crates/cli/src/run.rs", "run")]


def test_rust_a_traits_provided_method_is_called_through_self_in_its_impls(capsys, tmp_path: Path) -> None:
    trait = "pub trait Visitor {\n    fn visit(&self) -> u8;\n\n    fn helper(&self) -> u8 {\n        1\n    }\n}\n"
    num = ("use crate::visitor::Visitor;\n\npub struct Num;\n\nimpl Visitor for Num {\n    fn visit(&self) -> u8 {\n"
           "        self.helper() + 1\n    }\n}\n")
    other = ("pub struct Other;\n\nimpl Other {\n    pub fn helper(&self) -> u8 {\n        2\n    }\n\n"
             "    pub fn run(&self) -> u8 {\n        self.helper()\n    }\n}\n")
    base = {"src/lib.rs": "mod visitor;\nmod num;\nmod other;\n", "src/visitor.rs": trait, "src/num.rs": num,
            "src/other.rs": other}
    head = {"src/visitor.rs": trait.replace("        1\n", "        10\n")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/num.rs", "visit")]


def test_rust_a_receiver_of_impl_or_dyn_trait_reaches_the_traits_methods(capsys, tmp_path: Path) -> None:
    buf = "pub trait Buf {\n    fn chunk(&self) -> u8;\n\n    fn get_u8(&mut self) -> u8 {\n        self.chunk()\n    }\n}\n"
    read = ("use crate::buf::Buf;\n\npub fn read(input: &mut impl Buf) -> u8 {\n    input.get_u8()\n}\n\n"
            "pub fn peek(source: &dyn Buf) -> u8 {\n    source.chunk()\n}\n")
    other = ("pub struct Cursor;\n\nimpl Cursor {\n    pub fn get_u8(&mut self) -> u8 {\n        0\n    }\n}\n\n"
             "pub fn step(cursor: &mut Cursor) -> u8 {\n    cursor.get_u8()\n}\n")
    base = {"src/lib.rs": "mod buf;\nmod read;\nmod other;\n", "src/buf.rs": buf, "src/read.rs": read, "src/other.rs": other}
    head = {"src/buf.rs": buf.replace("        self.chunk()\n", "        self.chunk() + 1\n")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/read.rs", "read")]



def test_rust_a_method_has_no_callers_in_another_languages_files(capsys, tmp_path: Path) -> None:
    dns = "pub struct Dns;\n\nimpl Dns {\n    pub fn resolve(&self) -> u8 {\n        1\n    }\n}\n"
    base = {"src/lib.rs": "mod dns;\n\npub fn lookup(d: &dns::Dns) -> u8 {\n    d.resolve()\n}\n", "src/dns.rs": dns,
            "web/bundle.config.js": "const path = require('path');\n\nfunction output() {\n"
                                    "  return path.resolve(__dirname, 'dist');\n}\n\nmodule.exports = { output };\n"}
    head = {"src/dns.rs": dns.replace("        1\n", "        2\n")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [("src/lib.rs", "lookup")]
