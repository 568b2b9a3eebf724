"""What a function's signature declares of the names in its body: its own parameters' types, not
the parameters of a function type it takes (`step func(w io.Writer) bool`), which would otherwise
give a local of the body (`w := c.Writer`) a type it does not have."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, context_of

WRITER = ("package web\n\nimport \"net/http\"\n\ntype responseWriter struct {\n\thttp.ResponseWriter\n}\n\n"
          "func (w *responseWriter) CloseNotify() <-chan bool {\n"
          "\treturn w.ResponseWriter.(http.CloseNotifier).CloseNotify()\n}\n")
CONTEXT = ("package web\n\nimport \"io\"\n\ntype Context struct {\n\tWriter *responseWriter\n}\n\n"
           "func (c *Context) Stream(step func(w io.Writer) bool) bool {\n\tw := c.Writer\n"
           "\tgone := w.CloseNotify()\n\t<-gone\n\treturn step(w)\n}\n")


def test_go_a_function_types_parameter_does_not_type_the_bodys_local(capsys, tmp_path: Path) -> None:
    base = {"go.mod": "module example.com/web\n\ngo 1.21\n", "response_writer.go": WRITER, "context.go": CONTEXT}
    head = {"response_writer.go": WRITER.replace("\treturn w.ResponseWriter", "\tif w == nil {\n\t\treturn nil\n\t}\n"
                                                 "\treturn w.ResponseWriter")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("context.go", "Stream")]
