"""Go's own rules: a method of an embedded struct is promoted to the struct that embeds it, at
any depth, and a struct that does not embed it does not have it; a package imported with `.`
gives its names to the file bare."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, context_of

BASE = "package m\n\ntype Base struct{}\n\nfunc (b *Base) Size() int {\n\treturn 1\n}\n"
OTHER = "package m\n\ntype Other struct{}\n\nfunc (o *Other) Size() int {\n\treturn 2\n}\n"
USES = ("package m\n\ntype Sub struct {\n\tBase\n\tname string `json:\"name\"`\n}\n\ntype Deep struct {\n\t*Sub\n}\n\n"
        "type Plain struct {\n\tOther\n}\n\nfunc Use(s *Sub) int {\n\treturn s.Size()\n}\n\n"
        "func UseDeep(d Deep) int {\n\treturn d.Size()\n}\n\nfunc UsePlain(p *Plain) int {\n\treturn p.Size()\n}\n")


def test_go_a_method_of_an_embedded_struct_is_called_through_the_embedding_one(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/m\n", "base.go": BASE, "other.go": OTHER, "uses.go": USES}
    head = {"base.go": BASE.replace("return 1", "return 3")}
    assert sorted(callers(context_of(capsys, tmp_path, base, head))) == [("uses.go", "Use"), ("uses.go", "UseDeep")]


UTIL = "package util\n\nfunc Helper(a int) int {\n\treturn a + 1\n}\n"


def test_go_a_dot_imported_packages_names_are_used_bare(capsys, tmp_path: Path) -> None:
    app = "package app\n\nimport . \"example.com/m/util\"\n\nfunc Run() int {\n\treturn Helper(1)\n}\n"
    base = {"go.mod": "module example.com/m\n", "util/util.go": UTIL, "other/util.go": UTIL.replace("util", "other"),
            "app/app.go": app}
    head = {"util/util.go": UTIL.replace("a + 1", "a + 2")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("app/app.go", "Run")]


CONTEXT = ("package web\n\ntype Context interface {\n\tJSON(code int) error\n}\n\ntype context struct{}\n\n"
           "func (c *context) JSON(code int) error {\n\treturn nil\n}\n")
OTHER_JSON = "package web\n\ntype Other struct{}\n\nfunc (o *Other) JSON(code int) error {\n\treturn nil\n}\n"
HANDLERS = ("package web\n\nfunc Handle(c Context) error {\n\treturn c.JSON(200)\n}\n\n"
            "func UseOther(o *Other) error {\n\treturn o.JSON(201)\n}\n")


def test_go_a_call_through_an_interface_may_be_its_implementations(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/web\n", "context.go": CONTEXT, "other.go": OTHER_JSON, "handlers.go": HANDLERS}
    head = {"context.go": CONTEXT.replace("\treturn nil", "\treturn errNotImplemented")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("handlers.go", "Handle")]


HOOK = ("package hook\n\ntype Options struct {\n\tLimit int\n}\n\ntype Hook struct {\n\tname string\n}\n\n"
        "func (h *Hook) Name() string {\n\treturn h.name\n}\n")
HOOK_USES = ("package hook\n\nvar _ = (*Hook)(nil)\n\nfunc New(name string) *Hook {\n\treturn &Hook{name: name}\n}\n\n"
             "func Label(h *Hook) string {\n\treturn \"hook \" + h.Name()\n}\n")


def test_go_a_structs_changed_field_is_no_change_of_every_function_naming_the_struct(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/hook\n", "hook.go": HOOK, "uses.go": HOOK_USES}
    head = {"hook.go": HOOK.replace("\tname string\n", "\tname string\n\topts Options\n")}
    assert callers(context_of(capsys, tmp_path, base, head)) == []
    head = {"hook.go": HOOK.replace("return h.name", "return \"<\" + h.name + \">\"")}
    assert callers(context_of(capsys, tmp_path / "method", base, head)) == [("uses.go", "Label")]


PRINTERS = ("package log\n\ntype Printer interface {\n\tPrintf(format string, args ...any)\n}\n\n"
            "type Logger struct{}\n\nfunc New() *Logger {\n\treturn &Logger{}\n}\n\n"
            "func (l *Logger) Printf(format string, args ...any) {\n\t_ = format\n}\n\n"
            "type Buffer struct{}\n\nfunc (b *Buffer) Printf(format string, args ...any) {\n\t_ = format\n}\n")
PRINTS = ("package log\n\nimport \"fmt\"\n\nvar std = New()\n\n"
          "func Std() {\n\tstd.Printf(\"std\")\n}\n\n"
          "func Local() {\n\tb := &Buffer{}\n\tb.Printf(\"local\")\n}\n\n"
          "func Made() {\n\tl := New()\n\tl.Printf(\"made\")\n}\n\n"
          "func Through(p Printer) {\n\tp.Printf(\"through\")\n}\n\n"
          "func Unknown(all map[string]*Buffer) {\n\tall[\"x\"].Printf(\"unknown\")\n}\n\n"
          "func Wrap() error {\n\treturn fmt.Errorf(\"wrapped\")\n}\n")


def test_go_a_variables_type_is_read_from_what_declares_it(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/log\n", "log.go": PRINTERS, "prints.go": PRINTS}
    head = {"log.go": PRINTERS.replace("func (l *Logger) Printf(format string, args ...any) {\n\t_ = format",
                                       "func (l *Logger) Printf(format string, args ...any) {\n\t_ = len(format)")}
    # std and l are Loggers (New's result, in another file of the package), b a Buffer; p may be any
    # Printer; fmt.Errorf is a package's function
    assert sorted(callers(context_of(capsys, tmp_path, base, head))) == [
        ("prints.go", "Made"), ("prints.go", "Std"), ("prints.go", "Through"), ("prints.go", "Unknown")]


def test_go_an_interfaces_method_is_called_through_receivers_declared_of_it(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/log\n", "log.go": PRINTERS, "prints.go": PRINTS}
    head = {"log.go": PRINTERS.replace("\tPrintf(format string, args ...any)\n}", "\tPrintf(f string, args ...any)\n}")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("prints.go", "Through")]


VALUES = ("package opts\n\ntype Set struct{}\n\nfunc (s *Set) String(name string) string {\n\treturn name\n}\n\n"
          "type Command struct{}\n\nfunc (c *Command) Flags() *Set {\n\treturn &Set{}\n}\n\n"
          "func (c *Command) Outside() *pflag.FlagSet {\n\treturn nil\n}\n")
VALUE_USES = ("package opts\n\nimport (\n\t\"reflect\"\n\n\tpflag \"github.com/other/pflag\"\n)\n\n"
              "func Chained(c *Command) string {\n\treturn c.Flags().String(\"a\")\n}\n\n"
              "func Reflected(i any) string {\n\tv := reflect.ValueOf(i)\n\treturn v.String()\n}\n\n"
              "func Declared() string {\n\tvar fs pflag.FlagSet\n\treturn fs.String()\n}\n\n"
              "func Outside(c *Command) string {\n\treturn c.Outside().String(\"b\")\n}\n")
TEST_TYPE = ("package opts\n\nimport \"testing\"\n\ntype multi []string\n\n"
             "func (m *multi) String() string {\n\treturn \"\"\n}\n\nfunc TestMulti(t *testing.T) {\n\t_ = (&multi{}).String()\n}\n")


def test_go_a_receiver_made_by_a_call_or_another_package_has_that_type(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/opts\n", "set.go": VALUES, "uses.go": VALUE_USES}
    head = {"set.go": VALUES.replace("\treturn name\n", "\treturn \"--\" + name\n")}
    # c.Flags() is a *Set; reflect's Value, pflag's FlagSet and what Outside returns are other packages' types
    assert callers(context_of(capsys, tmp_path, base, head)) == [("uses.go", "Chained")]


def test_go_a_test_files_method_is_called_from_its_packages_tests_only(capsys, tmp_path: Path) -> None:
    other = ("package opts\n\nimport \"testing\"\n\n"
             "func TestOther(t *testing.T, all map[string]*multi) {\n\t_ = all[\"x\"].String()\n}\n")
    base = {"go.mod": "module example.com/opts\n", "set.go": VALUES, "uses.go": VALUE_USES, "multi_test.go": TEST_TYPE,
            "other_test.go": other, "sub/sub_test.go": other.replace("package opts", "package sub")}
    head = {"multi_test.go": TEST_TYPE.replace("return \"\"", "return \"multi\"")}
    assert sorted(callers(context_of(capsys, tmp_path, base, head))) == [("multi_test.go", "TestMulti"),
                                                                  ("other_test.go", "TestOther")]


WRITER = ("package text\n\ntype Writer struct{}\n\nfunc (w *Writer) Write(s string) int {\n\treturn len(s)\n}\n\n"
          "func NewWriter() *Writer {\n\treturn &Writer{}\n}\n")
WRITES = ("package app\n\nimport (\n\t\"bytes\"\n\n\t\"example.com/m/text\"\n)\n\n"
          "type App struct {\n\tout *text.Writer\n\tbuf *bytes.Buffer\n}\n\n"
          "func (a *App) Emit() int {\n\treturn a.out.Write(\"emit\")\n}\n\n"
          "func (a *App) Keep() {\n\ta.buf.Write([]byte(\"keep\"))\n}\n\n"
          "func Made() int {\n\tw := text.NewWriter()\n\treturn w.Write(\"made\")\n}\n")


def test_go_a_fields_type_and_another_packages_result_say_whose_method_is_called(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/m\n", "text/writer.go": WRITER, "app/app.go": WRITES}
    head = {"text/writer.go": WRITER.replace("return len(s)", "return len(s) + 1")}
    # a.out is a *text.Writer, a.buf a *bytes.Buffer, w what text.NewWriter returns
    assert sorted(callers(context_of(capsys, tmp_path, base, head))) == [("app/app.go", "Emit"), ("app/app.go", "Made")]
