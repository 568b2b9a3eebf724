"""What a JavaScript or TypeScript name cannot mean (bot/index/resolve_es.py): another module's own
name that the file does not import, a type where a value is used (and the other way round), a
parameter of a function type; the name a default import gives a module, which is its own; and a
local function, which its sibling closures call by its name."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import callers, context_of, definitions

TRACKER = "export function track(event: string): void {\n  console.log(event)\n}\n"
GLOBALS = "declare function report(event: string): void\n"
SPEC = "import { check } from '../src/check'\n\nit('checks', () => {\n  check(1)\n})\n"


def test_ts_a_name_another_module_defines_and_this_one_does_not_import_is_not_it(capsys, tmp_path: Path) -> None:
    runner = "export function it(name: string, body: () => void): void {\n  body()\n}\n"
    base = {"src/runner.ts": runner, "src/tracker.ts": TRACKER, "tests/check.test.ts": SPEC,
            "src/check.ts": "export function check(n: number) {\n  return n\n}\n"}
    head = {"tests/check.test.ts": SPEC.replace("it('checks', () => {\n", "it('checks again', () => {\n  track('x')\n")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == []  # the runner's global `it`; track, not imported


def test_ts_a_global_of_a_declarations_script_may_be_what_a_bare_name_means(capsys, tmp_path: Path) -> None:
    app = "export function run(): void {\n  return\n}\n"
    base = {"types/globals.d.ts": GLOBALS, "src/app.ts": app}
    head = {"src/app.ts": app.replace("  return\n", "  report('run')\n")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("types/globals.d.ts", 1)]


ATOM = ("export interface Atom {\n  read(): number\n}\n\n"
        "export function atom(read: () => number): Atom {\n  return { read }\n}\n")


def test_ts_a_parameter_of_a_function_type_is_no_use_of_a_same_named_function(capsys, tmp_path: Path) -> None:
    hooks = "import type { Atom } from './atom'\n\nexport type OnRead = number\n"
    base = {"src/atom.ts": ATOM, "src/hooks.ts": hooks}
    head = {"src/hooks.ts": hooks + "export type OnMount = (\n  store: number,\n  atom: Atom,\n) => void\n"}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("src/atom.ts", 1)]


SCHEMA = ("export interface Schema {\n  check(x: unknown): boolean\n}\n\n"
          "export const Schema = (name: string): Schema => ({ check: (x) => typeof x === name })\n")


def test_ts_a_type_name_means_the_interface_and_a_call_the_constant_of_the_same_name(capsys, tmp_path: Path) -> None:
    app = "import { Schema } from './schema'\n\nexport const version = 1\n"
    base = {"src/schema.ts": SCHEMA, "src/app.ts": app}
    typed = {"src/app.ts": app + "export function valid(s: Schema): boolean {\n  return s !== null\n}\n"}
    assert definitions(context_of(capsys, tmp_path, base, typed)) == [("src/schema.ts", 1)]


def test_ts_a_value_name_means_the_constant_not_the_interface(capsys, tmp_path: Path) -> None:
    app = "import { Schema } from './schema'\n\nexport const version = 1\n"
    base = {"src/schema.ts": SCHEMA, "src/app.ts": app}
    called = {"src/app.ts": app + "export const text = Schema('string')\n"}
    assert definitions(context_of(capsys, tmp_path, base, called)) == [("src/schema.ts", 5)]


def test_ts_who_declares_things_of_a_type_calls_nothing_of_it(capsys, tmp_path: Path) -> None:
    users = ("import { Schema } from './schema'\nimport type { Options } from './options'\n\n"
             "export function make(o: Options): Schema {\n  return Schema(o.name)\n}\n\n"
             "export function typed(s: Schema): boolean {\n  return s.check(0)\n}\n")
    options = "export type Options = {\n  name: string\n}\n"
    base = {"src/schema.ts": SCHEMA, "src/options.ts": options, "src/users.ts": users}
    head = {"src/options.ts": options.replace("name: string", "name: string\n  strict?: boolean"),
            "src/schema.ts": SCHEMA.replace("typeof x === name", "typeof x === name.trim()")}
    assert callers(context_of(capsys, tmp_path, base, head)) == [("src/users.ts", "make")]


CACHE = ("export function makeCache(register) {\n  const listeners = {}\n  const subscribe = (key, fn) => {\n"
         "    listeners[key] = fn\n    return () => {\n      listeners[key] = null\n    }\n  }\n"
         "  const init = () => {\n    register(subscribe)\n  }\n  init()\n}\n")


def test_js_a_local_function_is_used_by_its_sibling_closures(capsys, tmp_path: Path) -> None:
    head = {"src/cache.js": CACHE.replace("listeners[key] = null", "delete listeners[key]")}
    assert callers(context_of(capsys, tmp_path, {"src/cache.js": CACHE}, head)) == [("src/cache.js", "init")]


HELPERS = "function pick(o, k) {\n  return o[k]\n}\n\nexport default { pick }\n"
OTHER = "import { make } from './make.js'\n\nexport const helpers = make()\n"


def test_js_the_name_a_default_import_gives_a_module_is_its_own(capsys, tmp_path: Path) -> None:
    spec = "import helpers from '../lib/helpers.js'\n\nexport const a = 1\n"
    base = {"lib/helpers.js": HELPERS, "lib/other.js": OTHER, "test/helpers.spec.js": spec}
    head = {"test/helpers.spec.js": spec + "export const keys = Object.keys(helpers)\n"}
    assert "lib/other.js" not in {p for p, _ in definitions(context_of(capsys, tmp_path, base, head))}


def test_js_a_built_bundle_is_never_a_guess(capsys, tmp_path: Path) -> None:
    bundle = "function pick(o, k) {\n  return o[k]\n}\n"
    spec = "describe('pick', () => {\n  it('picks', () => {\n  })\n})\n"
    base = {"lib/pick.js": "export " + bundle, "dist/pick.js": bundle, "test/pick.spec.js": spec}
    head = {"test/pick.spec.js": spec.replace("  })\n})", "    pick({ a: 1 }, 'a')\n  })\n})")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == []  # lib's is a module's own, not imported


def test_js_a_destructuring_defines_none_of_its_names(capsys, tmp_path: Path) -> None:
    lib = "function create() {\n  return { run() {} }\n}\n\nconst app = create()\n\nexport default app\n"
    index = "import app from './lib/app.js'\n\nconst {\n  run,\n} = app\n\nexport { app as default, run }\n"
    client = "import app from './index.js'\n\nexport const ok = true\n"
    base = {"lib/app.js": lib, "index.js": index, "client.js": client}
    head = {"client.js": client + "export const started = app.run()\n"}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("lib/app.js", 5)]


def test_js_never_means_a_declaration_file(capsys, tmp_path: Path) -> None:
    typings = "export interface Api {\n  fetchAll(): Promise<void>\n}\n"
    app = "export function run(api) {\n  return null\n}\n"
    base = {"typings/index.d.ts": typings, "lib/app.js": app}
    head = {"lib/app.js": app.replace("return null", "return api.fetchAll()")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == []  # the code it declares is elsewhere, if anywhere


DOC = ("export class Doc {\n  lines: string[] = []\n\n  write(fn: (d: Doc) => void): void\n  write(line: string): void\n"
       "  write(arg: unknown) {\n    if (typeof arg === 'string') this.lines.push(arg)\n  }\n}\n")


def test_ts_an_overload_signature_gives_way_to_the_implementation(capsys, tmp_path: Path) -> None:
    app = "import { Doc } from './doc'\n\nexport function render(doc: Doc): void {\n  return\n}\n"
    base = {"src/doc.ts": DOC, "src/app.ts": app}
    head = {"src/app.ts": app.replace("  return\n", "  doc.write('x')\n")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("src/doc.ts", 6)]


THING = ("export const Thing = make('Thing', (inst: Inst) => {\n  const build = (n: number) => {\n    return n + 1\n  }\n\n"
         "  let cached = 0\n  inst.run = () => {\n    cached = build(2)\n    return cached\n  }\n})\n")


def test_ts_a_use_in_the_callback_a_constant_is_made_with_is_a_caller_of_its_own(capsys, tmp_path: Path) -> None:
    head = {"src/thing.ts": THING.replace("return n + 1", "return n + 2")}
    context = context_of(capsys, tmp_path, {"src/thing.ts": THING}, head)
    pieces = [(c["path"], c["startLine"], c["endLine"]) for c in context if c["kind"] == "caller"]
    assert len(pieces) == 1 and pieces[0][0] == "src/thing.ts" and pieces[0][1] <= 8 <= pieces[0][2]


def test_ts_an_enum_member_is_what_a_use_through_its_enum_opens(capsys, tmp_path: Path) -> None:
    kind = "export enum Kind {\n  Alpha = 'a',\n  Beta = 'b',\n}\n"
    other = "export class Other {\n  Alpha = 1\n}\n"
    app = "import { Kind } from './kind'\n\nexport const a = 1\n"
    base = {"src/kind.ts": kind, "src/other.ts": other, "src/app.ts": app}
    head = {"src/app.ts": app + "export const b = Kind.Beta\n"}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("src/kind.ts", 3)]
