"""TypeScript's names in type positions (annotations, generic arguments, `extends` clauses, return
types, `satisfies`) are uses of the type aliases and interfaces that other files define, reached
through `import type`, `import { type X }`, barrels (`export *`, `export type { X } from`) and
re-exports; and a default-exported util is its module's definition."""

from __future__ import annotations

from pathlib import Path

from tests.support.index_support import context_of, definitions

TYPES = ("export type Reducer<S, A extends Action = Action> = (state: S | undefined, action: A) => S\n\n"
         "export interface Action<T extends string = string> {\n  type: T\n}\n")
APP = "{imports}\n\nexport function run(value: number): number {{\n  return value\n}}\n"


def _defs(capsys, tmp_path: Path, files: dict[str, str], imports: str, added: str) -> list[tuple[str, int]]:
    app = APP.format(imports=imports)
    base = {**files, "src/app.ts": app}
    head = {"src/app.ts": app.replace("  return value\n", f"  {added}\n  return value\n")}
    return definitions(context_of(capsys, tmp_path, base, head))


def test_ts_an_annotation_and_a_generic_argument_name_a_type_alias_and_an_interface(capsys, tmp_path: Path) -> None:
    found = _defs(capsys, tmp_path, {"src/types.ts": TYPES}, "import { Reducer, Action } from './types'",
                  "const reduce: Reducer<number, Action<'add'>> = (s) => s ?? 0")
    assert sorted(found) == [("src/types.ts", 1), ("src/types.ts", 3)]


def test_ts_import_type_binds_the_types(capsys, tmp_path: Path) -> None:
    found = _defs(capsys, tmp_path, {"src/types.ts": TYPES}, "import type { Reducer, Action } from './types'",
                  "const reduce: Reducer<number, Action> = (s) => s ?? 0")
    assert sorted(found) == [("src/types.ts", 1), ("src/types.ts", 3)]


def test_ts_an_inline_type_import_binds_the_type(capsys, tmp_path: Path) -> None:
    found = _defs(capsys, tmp_path, {"src/types.ts": TYPES}, "import { type Action } from './types'",
                  "const act = { type: 'add' } satisfies Action")
    assert found == [("src/types.ts", 3)]


def test_ts_a_star_barrel_reaches_a_type(capsys, tmp_path: Path) -> None:
    files = {"src/types/store.ts": TYPES, "src/index.ts": "export * from './types/store'\n"}
    found = _defs(capsys, tmp_path, files, "import { Action } from './index'",
                  "const act: Action = { type: 'add' }")
    assert found == [("src/types/store.ts", 3)]


def test_ts_a_type_re_export_reaches_a_type(capsys, tmp_path: Path) -> None:
    files = {"src/types/store.ts": TYPES, "src/index.ts": "export type { Action, Reducer } from './types/store'\n"}
    found = _defs(capsys, tmp_path, files, "import type { Action } from '.'",
                  "const act: Action = { type: 'add' }")
    assert found == [("src/types/store.ts", 3)]


def test_ts_an_extends_clause_and_a_return_type_name_interfaces(capsys, tmp_path: Path) -> None:
    found = _defs(capsys, tmp_path, {"src/types.ts": TYPES}, "import type { Action, Reducer } from './types'",
                  "interface Add extends Action<'add'> { by: number }\n"
                  "  const make = (by: number): Reducer<number, Add> => (s) => (s ?? 0) + by")
    assert sorted(found) == [("src/types.ts", 1), ("src/types.ts", 3)]


def test_ts_a_default_exported_util_is_what_its_import_calls(capsys, tmp_path: Path) -> None:
    util = "export default function isPlainObject(obj: unknown): boolean {\n  return typeof obj === 'object'\n}\n"
    files = {"src/utils/isPlainObject.ts": util, "src/other.ts": util}
    found = _defs(capsys, tmp_path, files, "import isPlainObject from './utils/isPlainObject'",
                  "if (!isPlainObject(value)) throw new Error('no')")
    assert found == [("src/utils/isPlainObject.ts", 1)]


def test_ts_an_added_re_export_names_the_definition(capsys, tmp_path: Path) -> None:
    errors = "export function die(error: string): never {\n  throw new Error(error)\n}\n"
    base = {"src/errors.ts": errors, "src/internal.ts": "export * from './other'\n", "src/other.ts": "export const x = 1\n"}
    head = {"src/internal.ts": "export * from './other'\nexport { die } from './errors'\n"}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("src/errors.ts", 1)]


def test_ts_a_name_added_to_an_import_written_over_several_lines_names_its_definition(capsys, tmp_path: Path) -> None:
    app = "import {\n  Reducer,\n} from './types'\n\nexport const x = 1\n"
    base = {"src/types.ts": TYPES, "src/other.ts": TYPES.replace("Action", "Act"), "src/app.ts": app}
    head = {"src/app.ts": app.replace("  Reducer,\n", "  Reducer,\n  type Action,\n")}
    assert definitions(context_of(capsys, tmp_path, base, head)) == [("src/types.ts", 3)]
