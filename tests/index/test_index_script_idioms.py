"""JavaScript's and TypeScript's module idioms: the methods and getters of an exported object
literal reaching each other through `this`; the line that exports a function (`module.exports.x =
x`), which binds it to a name and is none of its callers; TypeScript's `import x = require('./y')`
and `export = x`, CommonJS written in TypeScript."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, context_of, definitions

REQUEST = ("'use strict'\n\nmodule.exports = {\n  get host () {\n    const host = this.get('Host')\n"
           "    return host || ''\n  },\n\n  get hostname () {\n    const host = this.host\n"
           "    return host.split(':', 1)[0]\n  },\n\n  get (field) {\n    return this.req.headers[field]\n  }\n}\n")
SERVER = "class Server {\n  constructor () {\n    this.host = 'localhost'\n  }\n\n  describe () {\n" \
         "    return this.host\n  }\n}\n\nmodule.exports = Server\n"


def test_js_a_getter_of_an_exported_object_is_used_by_its_siblings_through_this(capsys, tmp_path: Path) -> None:
    base = {"lib/request.js": REQUEST, "lib/server.js": SERVER}
    head = {"lib/request.js": REQUEST.replace("return host || ''", "return (host || '').trim()")}
    assert sorted(callers(context_of(capsys, tmp_path, base, head))) == [("lib/request.js", "hostname")]


HELPER = "function helper (a) {\n  return a + 1\n}\n"
RUN = "const { helper } = require('./util')\n\nfunction run () {\n  return helper(1)\n}\nmodule.exports = run\n"


def test_js_the_line_that_exports_a_function_is_not_its_caller(capsys, tmp_path: Path) -> None:
    util = HELPER + "module.exports.helper = helper\n"
    base = {"lib/util.js": util, "lib/other.js": util, "lib/app.js": RUN}
    head = {"lib/util.js": util.replace("a + 1", "a + 2")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("lib/app.js", "run")]


EXPORTED = "export function helper(a: number): number {\n  return a + 1\n}\n"


def test_ts_import_equals_require_binds_the_module(capsys, tmp_path: Path) -> None:
    app = "import util = require('./util')\n\nexport function run(): number {\n  return 0\n}\n"
    base = {"src/util.ts": EXPORTED, "src/other.ts": EXPORTED, "src/app.ts": app}
    head = {"src/app.ts": app.replace("return 0", "return util.helper(1)")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("src/util.ts", 1)]


def test_ts_export_equals_is_what_import_equals_require_binds(capsys, tmp_path: Path) -> None:
    util = "function helper(a: number): number {\n  return a + 1\n}\n\nexport = helper\n"
    app = "import addOne = require('./util')\n\nexport function run(): number {\n  return addOne(1)\n}\n"
    base = {"src/util.ts": util, "src/app.ts": app}
    head = {"src/util.ts": util.replace("a + 1", "a + 2")}
    assert ("src/app.ts", "run") in callers(context_of(capsys, tmp_path, base, head))


STORE = ("export type Store = {\n  setState(next: number): void\n}\n\n"
         "export function createStore(): Store {\n  return { setState(next: number) { void next } }\n}\n")


def test_ts_a_signature_of_a_type_alias_is_called_only_through_a_receiver_declared_of_it(capsys, tmp_path: Path) -> None:
    app = ("import { Store, createStore } from './store'\n\nexport function typed(store: Store) {\n"
           "  store.setState(1)\n}\n\nexport function untyped() {\n  const api = createStore()\n  api.setState(2)\n}\n")
    base = {"src/store.ts": STORE, "src/app.ts": app}
    head = {"src/store.ts": STORE.replace("setState(next: number): void", "setState(next: number, replace?: boolean): void")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("src/app.ts", "typed")]


SPEC = ("it('checks one', () => {\n  function check(a: number) {\n    return a + 1\n  }\n\n  check(1)\n})\n\n"
        "it('checks another', () => {\n  function check(a: number) {\n    return a - 1\n  }\n\n  check(2)\n})\n")


def test_ts_a_function_of_a_test_callback_is_called_in_that_callback(capsys, tmp_path: Path) -> None:
    head = {"tests/spec.test.ts": SPEC.replace("return a + 1", "return a + 10")}
    context = context_of(capsys, tmp_path, {"tests/spec.test.ts": SPEC}, head)
    pieces = [(c["startLine"], c["endLine"]) for c in context if c["kind"] == "caller"]
    assert len(pieces) == 1 and pieces[0][0] <= 6 <= pieces[0][1] < 14  # its callback's call, not the other's


API = ("export interface Api {\n  send(x: number): void\n}\n\nexport class Impl implements Api {\n"
       "  send(x: number): void {\n    console.log(x)\n  }\n}\n\nexport class Other {\n  send(x: number): void {\n"
       "    console.log(-x)\n  }\n}\n")


def test_ts_a_call_through_an_interface_may_be_its_implementations(capsys, tmp_path: Path) -> None:
    app = ("import { Api, Other } from './api'\n\nexport function notify(api: Api): void {\n  api.send(1)\n}\n\n"
           "export function elsewhere(other: Other): void {\n  other.send(2)\n}\n")
    base = {"src/api.ts": API, "src/app.ts": app}
    head = {"src/api.ts": API.replace("console.log(x)", "console.log(x + 1)")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("src/app.ts", "notify")]


SETUP = ("function createDebug (name) {\n  return name\n}\n\nfunction enable (namespaces) {\n"
         "  createDebug.names = namespaces.split(',')\n}\n\ncreateDebug.enable = enable\n\n"
         "function init (env) {\n  createDebug.enable(env.DEBUG)\n}\n\nmodule.exports = { createDebug, init }\n")


def test_js_a_function_hung_on_another_is_called_through_it(capsys, tmp_path: Path) -> None:
    head = {"src/common.js": SETUP.replace("namespaces.split(',')", "namespaces.split(/[\\\\s,]+/)")}
    context = context_of(capsys, tmp_path, {"src/common.js": SETUP}, head)
    found = sorted(callers(context))  # the line that hangs it (outside any function, named after it), and init
    assert found == [("src/common.js", "enable"), ("src/common.js", "init")]


def test_ts_a_signature_of_an_interface_keeps_its_calls_through_any_receiver(capsys, tmp_path: Path) -> None:
    store = STORE.replace("export type Store = {", "export interface Store {")
    app = ("import { createStore } from './store'\n\nexport function untyped() {\n  const api = createStore()\n"
           "  api.setState(2)\n}\n")
    base = {"src/store.ts": store, "src/app.ts": app}
    head = {"src/store.ts": store.replace("setState(next: number): void", "setState(next: number, replace?: boolean): void")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("src/app.ts", "untyped")]


TYPES = ("export class ZodType {\n  parse(input: unknown): unknown {\n    return input\n  }\n}\n\n"
         "export class ZodString extends ZodType {\n  min(n: number): ZodString {\n    return this\n  }\n}\n\n"
         "export class ZodNumber extends ZodType {\n  parse(input: unknown): number {\n    return Number(input)\n  }\n}\n")


def test_ts_a_method_is_called_through_a_receiver_of_a_subclass_that_does_not_override_it(capsys,
                                                                                             tmp_path: Path) -> None:
    app = ("import { ZodNumber, ZodString } from './types'\n\nexport function text(schema: ZodString): unknown {\n"
           "  return schema.parse('a')\n}\n\nexport function count(schema: ZodNumber): unknown {\n"
           "  return schema.parse(1)\n}\n")
    base = {"src/types.ts": TYPES, "src/app.ts": app}
    head = {"src/types.ts": TYPES.replace("    return input\n", "    return input ?? null\n")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("src/app.ts", "text")]
