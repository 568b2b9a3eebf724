"""Java names resolved as javac binds them, in small repositories laid out as real builds: a
multi-module build whose packages sit below each module's source root, a type imported from
another package (by the change itself, too), a package split over main and test sources, static
imports of one member and of all, nested types, inherited members, and variables' declared types.
Each repository holds a same-named decoy that only matching words would take."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers as _callers
from tests.support.index_support import context_of as _context
from tests.support.index_support import definitions as _definitions

COMMON = "common/src/main/java/com/ex/common/"
OTHER = "other/src/main/java/com/ex/other/"
CORE = "core/src/main/java/com/ex/core/"


def _util(package: str, body: str = "return s;") -> str:
    return (f"package {package};\n\npublic final class Util {{\n  public static String helper(String s) {{\n"
            f"    {body}\n  }}\n}}\n")


MODULES = {
    COMMON + "Util.java": _util("com.ex.common"),
    OTHER + "Util.java": _util("com.ex.other"),
    CORE + "Service.java": "package com.ex.core;\n\nimport com.ex.common.Util;\n\npublic class Service {\n"
                           "  String run(String s) {\n    return Util.helper(s);\n  }\n}\n",
    OTHER + "Client.java": "package com.ex.other;\n\npublic class Client {\n  String call(String s) {\n"
                           "    return Util.helper(s);\n  }\n}\n",
}


def test_java_callers_across_modules_come_through_the_class_import(capsys, tmp_path: Path) -> None:
    head = {COMMON + "Util.java": _util("com.ex.common", "return s.trim();")}
    assert _callers(_context(capsys, tmp_path, MODULES, head)) == [(CORE + "Service.java", "run")]


def test_java_a_package_imported_whole_brings_its_callers(capsys, tmp_path: Path) -> None:
    batch = "package com.ex.core;\n\nimport com.ex.{}.*;\n\nclass {} {{\n  String each(String s) {{\n" \
            "    return Util.helper(s);\n  }}\n}}\n"
    base = {**MODULES, CORE + "Batch.java": batch.format("other", "Batch"), CORE + "Stream.java": batch.format(
        "common", "Stream")}
    head = {OTHER + "Util.java": _util("com.ex.other", "return s.strip();")}
    assert sorted(_callers(_context(capsys, tmp_path, base, head))) == [(CORE + "Batch.java", "each"),
                                                                        (OTHER + "Client.java", "call")]


def test_java_a_class_the_change_imports_gives_its_definitions(capsys, tmp_path: Path) -> None:
    head = {CORE + "Report.java": "package com.ex.core;\n\nimport com.ex.other.Util;\n\nclass Report {\n"
                                  "  String title(String s) {\n    return Util.helper(s);\n  }\n}\n"}
    assert _definitions(_context(capsys, tmp_path, MODULES, head)) == [(OTHER + "Util.java", 4)]


def test_java_a_type_of_the_same_package_in_the_test_sources_is_seen_bare(capsys, tmp_path: Path) -> None:
    base = {**MODULES, "core/src/main/java/com/ex/other/Service.java": "package com.ex.other;\n\n"
                                                                       "public class Service {\n}\n"}
    head = {"core/src/test/java/com/ex/core/ServiceTest.java": "package com.ex.core;\n\nclass ServiceTest {\n"
            "  void runs() {\n    Service service = new Service();\n  }\n}\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [(CORE + "Service.java", 5)]


def test_java_a_static_import_on_demand_makes_a_bare_call_a_caller(capsys, tmp_path: Path) -> None:
    base = {**MODULES, CORE + "Names.java": "package com.ex.core;\n\nimport static com.ex.common.Util.*;\n\n"
                                            "class Names {\n  String name(String s) {\n    return helper(s);\n  }\n}\n",
            OTHER + "Labels.java": "package com.ex.other;\n\nimport static com.ex.other.Util.*;\n\nclass Labels {\n"
                                   "  String label(String s) {\n    return helper(s);\n  }\n}\n"}
    head = {COMMON + "Util.java": _util("com.ex.common", "return s.trim();")}
    assert sorted(_callers(_context(capsys, tmp_path, base, head))) == [(CORE + "Names.java", "name"),
                                                                        (CORE + "Service.java", "run")]


NESTED = {
    CORE + "Outer.java": "package com.ex.core;\n\npublic class Outer {\n  public static class Inner {\n"
                         "    public int make() {\n      return 1;\n    }\n  }\n}\n",
    CORE + "Other.java": "package com.ex.core;\n\npublic class Other {\n  public static class Inner {\n"
                         "    public int make() {\n      return 2;\n    }\n  }\n}\n",
    CORE + "UsesOuter.java": "package com.ex.core;\n\nclass UsesOuter {\n  int use(Outer.Inner inner) {\n"
                             "    return inner.make();\n  }\n}\n",
    CORE + "UsesOther.java": "package com.ex.core;\n\nclass UsesOther {\n  int use(Other.Inner inner) {\n"
                             "    return inner.make();\n  }\n}\n",
}


def test_java_a_nested_types_methods_are_told_apart_by_the_outer_type(capsys, tmp_path: Path) -> None:
    head = {CORE + "Outer.java": NESTED[CORE + "Outer.java"].replace("return 1;", "return 3;")}
    assert _callers(_context(capsys, tmp_path, NESTED, head)) == [(CORE + "UsesOuter.java", "use")]


def test_java_a_nested_type_imported_by_its_full_name(capsys, tmp_path: Path) -> None:
    head = {OTHER + "Maker.java": "package com.ex.other;\n\nimport com.ex.core.Other.Inner;\n\nclass Maker {\n"
                                  "  int made(Inner inner) {\n    return inner.make();\n  }\n}\n"}
    assert _definitions(_context(capsys, tmp_path, NESTED, head)) == [(CORE + "Other.java", 5)]


def test_java_an_inherited_method_called_bare_is_a_caller(capsys, tmp_path: Path) -> None:
    base = {CORE + "Base.java": "package com.ex.core;\n\npublic class Base {\n  protected int size() {\n"
                                "    return 1;\n  }\n}\n",
            CORE + "Sub.java": "package com.ex.core;\n\nclass Sub extends Base {\n  int twice() {\n"
                               "    return size() * 2;\n  }\n}\n",
            CORE + "Plain.java": "package com.ex.core;\n\nclass Plain {\n  int size() {\n    return 0;\n  }\n\n"
                                 "  int twice() {\n    return size() * 2;\n  }\n}\n"}
    head = {CORE + "Base.java": base[CORE + "Base.java"].replace("return 1;", "return 2;")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "Sub.java", "twice")]


def test_java_a_local_variables_declared_type_says_whose_method_it_calls(capsys, tmp_path: Path) -> None:
    base = {CORE + "Cart.java": "package com.ex.core;\n\npublic class Cart {\n  public int total() {\n"
                                "    return 1;\n  }\n}\n",
            CORE + "Order.java": "package com.ex.core;\n\npublic class Order {\n  public int total() {\n"
                                 "    return 2;\n  }\n}\n",
            CORE + "Checkout.java": "package com.ex.core;\n\nclass Checkout {\n  int pay() {\n"
                                    "    Cart basket = new Cart();\n    return basket.total();\n  }\n\n"
                                    "  int ship() {\n    Order parcel = new Order();\n    return parcel.total();\n  }\n}\n"}
    head = {CORE + "Cart.java": base[CORE + "Cart.java"].replace("return 1;", "return 3;")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "Checkout.java", "pay")]


def test_java_a_method_of_an_anonymous_class_brings_the_users_of_the_field_holding_it(capsys,
                                                                                       tmp_path: Path) -> None:
    checks = ("package com.ex.core;\n\nfinal class Checks {\n  private static final Visitor VISITOR =\n"
              "      new Visitor() {\n        @Override\n        public boolean visit(Object o) {\n"
              "          return false;\n        }\n      };\n\n  static boolean valid(Object o) {\n"
              "    return Walker.walk(o, VISITOR);\n  }\n}\n")
    base = {CORE + "Visitor.java": "package com.ex.core;\n\ninterface Visitor {\n  boolean visit(Object o);\n}\n",
            CORE + "Checks.java": checks}
    head = {CORE + "Checks.java": checks.replace("return false;", "return o != null;")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "Checks.java", "valid")]


def test_java_a_method_of_an_anonymous_class_brings_the_callers_of_the_method_returning_it(capsys,
                                                                                         tmp_path: Path) -> None:
    makers = ("package com.ex.core;\n\nfinal class Makers {\n  static Visitor strict(Visitor inner) {\n"
              "    return new Visitor() {\n      @Override\n      public boolean visit(Object o) {\n"
              "        return inner.visit(o);\n      }\n    };\n  }\n}\n")
    user = "package com.ex.core;\n\nclass Setup {\n  Visitor build(Visitor v) {\n    return Makers.strict(v);\n  }\n}\n"
    base = {CORE + "Visitor.java": "package com.ex.core;\n\ninterface Visitor {\n  boolean visit(Object o);\n}\n",
            CORE + "Makers.java": makers, CORE + "Setup.java": user}
    head = {CORE + "Makers.java": makers.replace("return inner.visit(o);", "return o != null && inner.visit(o);")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "Setup.java", "build")]


def test_java_a_private_method_has_no_callers_in_other_files(capsys, tmp_path: Path) -> None:
    box = "package com.ex.core;\n\nclass Box {\n  private int size() {\n    return 1;\n  }\n\n  int twice() {\n" \
          "    return size() * 2;\n  }\n}\n"
    base = {CORE + "Box.java": box,
            CORE + "Shelf.java": "package com.ex.core;\n\nclass Shelf {\n  int count() {\n"
                                 "    return items().size();\n  }\n}\n"}
    head = {CORE + "Box.java": box.replace("return 1;", "return 2;")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "Box.java", "twice")]


def test_java_a_call_through_an_interface_may_reach_an_implementation(capsys, tmp_path: Path) -> None:
    base = {CORE + "Adapter.java": "package com.ex.core;\n\ninterface Adapter {\n  int adapt(int x);\n}\n",
            CORE + "Doubling.java": "package com.ex.core;\n\nclass Doubling implements Adapter {\n"
                                    "  public int adapt(int x) {\n    return x * 2;\n  }\n}\n",
            CORE + "Plain.java": "package com.ex.core;\n\nclass Plain {\n  int adapt(int x) {\n    return x;\n  }\n}\n",
            CORE + "Caller.java": "package com.ex.core;\n\nclass Caller {\n  int run(Adapter adapter) {\n"
                                  "    return adapter.adapt(1);\n  }\n\n  int plain(Plain p) {\n    return p.adapt(2);\n  }\n}\n"}
    head = {CORE + "Doubling.java": base[CORE + "Doubling.java"].replace("x * 2", "x * 3")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "Caller.java", "run")]


def test_java_a_constructors_callers_are_the_news_of_its_type(capsys, tmp_path: Path) -> None:
    box = "package com.ex.core;\n\npublic class Box {\n  public Box(int n) {\n    this.n = n;\n  }\n\n  int n;\n}\n"
    base = {CORE + "Box.java": box, OTHER + "Box.java": box.replace("com.ex.core", "com.ex.other"),
            OTHER + "Shelf.java": "package com.ex.other;\n\nimport com.ex.core.Box;\n\nclass Shelf {\n  Box make() {\n"
                                  "    return new Box(1);\n  }\n}\n",
            OTHER + "Crate.java": "package com.ex.other;\n\nclass Crate {\n  Box make() {\n    return new Box(2);\n"
                                  "  }\n}\n"}
    head = {CORE + "Box.java": box.replace("this.n = n;", "this.n = n + 1;")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(OTHER + "Shelf.java", "make")]


def test_java_an_enum_constant_is_used_bare_as_a_case_label_of_a_switch_on_its_type(capsys, tmp_path: Path) -> None:
    kinds = "package com.ex.core;\n\npublic enum {} {{\n  FIELD,\n  METHOD\n}}\n"
    emit = ("package com.ex.core;\n\nclass {0}Emitter {{\n  int emit({0} kind) {{\n    switch (kind) {{\n"
            "      case FIELD:\n        return 1;\n      default:\n        return 0;\n    }}\n  }}\n}}\n")
    base = {CORE + "Kind.java": kinds.format("Kind"), CORE + "Scope.java": kinds.format("Scope"),
            CORE + "KindEmitter.java": emit.format("Kind"), CORE + "ScopeEmitter.java": emit.format("Scope")}
    head = {CORE + "Kind.java": kinds.format("Kind").replace("  FIELD,", "  FIELD(),")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "KindEmitter.java", "emit")]


def test_java_a_call_chain_from_another_librarys_type_is_not_this_repositorys(capsys, tmp_path: Path) -> None:
    spec = "package com.ex.core;\n\nfinal class Spec {\n  static final class Builder {\n    Spec build() {\n" \
           "      return new Spec();\n    }\n  }\n}\n"
    base = {CORE + "Spec.java": spec,
            CORE + "Writer.java": "package com.ex.core;\n\nimport com.squareup.javapoet.MethodSpec;\n\nclass Writer {\n"
                                  "  Object method() {\n    return MethodSpec.methodBuilder(\"run\").build();\n  }\n\n"
                                  "  Object spec() {\n    return new Spec.Builder().build();\n  }\n}\n"}
    head = {CORE + "Spec.java": spec.replace("return new Spec();", "return new Spec(/* built */);")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "Writer.java", "spec")]


def test_java_an_added_import_names_the_definition_it_imports(capsys, tmp_path: Path) -> None:
    head = {CORE + "Service.java": MODULES[CORE + "Service.java"].replace(
        "import com.ex.common.Util;\n", "import com.ex.common.Util;\nimport static com.ex.other.Util.helper;\n")}
    assert _definitions(_context(capsys, tmp_path, MODULES, head)) == [(OTHER + "Util.java", 4)]


def test_java_an_annotation_type_is_a_definition_its_uses_reach(capsys, tmp_path: Path) -> None:
    get = "package com.ex.http;\n\npublic @interface GET {\n  String value() default \"\";\n}\n"
    base = {"http/src/main/java/com/ex/http/GET.java": get, CORE + "Api.java": "package com.ex.core;\n\ninterface Api {\n}\n"}
    head = {CORE + "Api.java": "package com.ex.core;\n\nimport com.ex.http.GET;\n\ninterface Api {\n  @GET(\"users\")\n"
                               "  Object users();\n}\n"}
    assert _definitions(_context(capsys, tmp_path, base, head)) == [("http/src/main/java/com/ex/http/GET.java", 3)]


def test_java_a_method_called_through_a_subclass_that_inherits_it(capsys, tmp_path: Path) -> None:
    base = {CORE + "Base.java": "package com.ex.core;\n\npublic class Base {\n  public int size() {\n    return 1;\n  }\n}\n",
            OTHER + "Sub.java": "package com.ex.other;\n\nimport com.ex.core.Base;\n\npublic class Sub extends Base {\n}\n",
            OTHER + "Own.java": "package com.ex.other;\n\npublic class Own {\n  public int size() {\n    return 0;\n  }\n}\n",
            CORE + "Count.java": "package com.ex.core;\n\nimport com.ex.other.Own;\nimport com.ex.other.Sub;\nimport java.util.List;\n\n"
                                 "class Count {\n  int sub(Sub s) {\n    return s.size();\n  }\n\n  int own(Own o) {\n"
                                 "    return o.size();\n  }\n\n  int list(List<String> l) {\n    return l.size();\n  }\n}\n"}
    head = {CORE + "Base.java": base[CORE + "Base.java"].replace("return 1;", "return 2;")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(CORE + "Count.java", "sub")]


def test_java_a_member_inherited_past_one_level_is_called_bare(capsys, tmp_path: Path) -> None:
    base_class = "package com.ex.core;\n\npublic class Base {\n  protected int size() {\n    return 1;\n  }\n}\n"
    base = {CORE + "Base.java": base_class,
            CORE + "Middle.java": "package com.ex.core;\n\npublic class Middle extends Base {\n}\n",
            COMMON + "Leaf.java": "package com.ex.common;\n\nimport com.ex.core.Middle;\n\npublic class Leaf extends Middle {\n"
                                  "  int twice() {\n    return size() * 2;\n  }\n}\n",
            OTHER + "Other.java": "package com.ex.other;\n\npublic class Other {\n  protected int size() {\n    return 2;\n"
                                  "  }\n}\n",
            OTHER + "Sub.java": "package com.ex.other;\n\npublic class Sub extends Other {\n  int thrice() {\n"
                                "    return size() * 3;\n  }\n}\n"}
    head = {CORE + "Base.java": base_class.replace("return 1;", "return 10;")}
    assert _callers(_context(capsys, tmp_path, base, head)) == [(COMMON + "Leaf.java", "twice")]
