"""Derives the ground truth of bench/context_cases.json mechanically, then applies our review.

Definitions come from universal-ctags (`apt-get install universal-ctags`), plus one rule ctags
misses: in JavaScript, an assignment at the start of a line to a member of a module-level object
(`exports.x = …`, `res.send = function send …`, `app.set = …`) defines `x`. Uses come from
`git grep -w` (a hit in a comment or a string does not count). A definition's extent is read from
the text: from its line to the brace that closes its first block (or the `;`/end of line that ends
a statement without one), by indentation in Python. Nothing here reads the code under test.

For each case:
- **definitions** (what the added lines use): every identifier on an added line of a primary
  source (comments and strings left out) defined in the repository's primary sources at `base`
  in another file (a name the changed file defines itself is in the diff's reach; what tests and
  examples use is acceptable, not truth; a method or field counts only for a use through a
  receiver, `x.name`, and after a Rust type's `::` only a member, `Value::Number` being a
  variant; Go's predeclared names are not uses). One file defines it: that definition is truth
  (several overloads in that one file: any one of them). Several files: truth only where the
  review names the one a reader would open, from the file's imports, `use` paths, package or the
  receiver's type, and says why; unreviewed, the name is left out of the truth. A name defined in
  more than 8 files is left out. Imports and aliases (Python `import`, `var x = require(…)`,
  `var join = path.join`), object literals' keys and variables inside functions are not
  definitions. In Java a file's package is its `package` line (one package may lie under
  several modules' source roots). In JavaScript and TypeScript a name the file binds to another
  module (`const name = require('./file')`, `import name from './file'`) means that module's
  default export, whatever it is called there: `module.exports = name` / `export default name`
  names a definition of the module; an anonymous one (`module.exports = (a, b) => …`,
  `var proto = module.exports = function (…)`, `export default function (…)`) is a definition of
  its own, named `module.exports` or `export default`.
- **callers** (who depends on what changed): every definition (function, method, constant,
  variable, field) that holds a touched line, innermost only; for each, every line of the
  repository that uses its name (`git grep -w`, at the head for changed files), other than the
  definition itself (for a method or field: only uses through a receiver, `x.name`/`X::name`,
  or bare inside its Java class; for a top-level name of a JavaScript or TypeScript module, a
  file that imports, requires or exports anything, that does not export it: uses in its own file
  only), mapped to its innermost enclosing named function: one truth item per calling
  function, however many uses it holds. A use outside any function (a module-level statement)
  is an item of its own line, except imports and re-exports (`import`, `require(`,
  `export … from`, `pub use`, `exports.x = x`): they are not callers. Calling functions in tests,
  examples, benchmarks and docs (bench.context_data.is_secondary) are not truth: the primary
  sources come first. A name that other definitions share is left out of the truth unless the
  review says which uses are this definition's (a regular expression that a use's line must
  match, such as `(res|this)\\.send\\(`, with the reason). The callers of an anonymous default
  export are the functions that use the name each importer binds it to. A local function (one
  inside another, or a `const` indented in a block or a callback) is used bare, in its own
  file only (not `x.name`, not an object key `name:`).
- **acceptable**: everything the rules found before the review narrowed it (every definition of
  a used name, every function holding a use of a changed name, tests and re-exports included).
  The bench's precision counts a returned definition or caller piece as right when it overlaps
  a truth or an acceptable item of its kind in its file.

The rules live in bench/truth/ (one module per language's own rules; bench/truth/__init__.py
lists them).

Usage: python bench/context_truth.py [--repos DIR] [--case ID ...] [--show]
Writes `truth`, `acceptable` and `derivation` (what the rules dropped, and why) into each case.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from context_data import CASES, find_repo, repos_dir  # noqa: E402
from truth.derive import derive  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos")
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--show", action="store_true", help="print the derivation, write nothing")
    args = parser.parse_args()
    data = json.loads(CASES.read_text())
    root = repos_dir(args.repos)
    for case in data["cases"]:
        if args.case and case["id"] not in args.case:
            continue
        repo = find_repo(root, case["repo"])
        if repo is None:
            print(f"{case['id']}: {case['repo']} is not under {root}; fetch it first", file=sys.stderr)
            continue
        derived = derive(repo, case)
        print(f"== {case['id']} ({case['repo']})")
        for t in derived["truth"]:
            print(f"  {t['kind']:10} {t['alts'][0][0]}:{t['alts'][0][1]}-{t['alts'][0][2]} {t['symbol']}"
                  + (f" (of {t['of']})" if "of" in t else "") + (f" +{len(t['alts']) - 1} alt" if len(t["alts"]) > 1 else ""))
        for note in derived["derivation"]:
            print(f"  note: {note}")
        if not args.show:
            case.update(derived)
    if not args.show:
        CASES.write_text(dump(data))


def dump(data: dict) -> str:
    """One key of a case a line, each value compact: small diffs when a case's truth changes."""
    cases = []
    for case in data["cases"]:
        rows = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in case.items()]
        cases.append(" {\n" + ",\n".join(rows) + "\n }")
    head = {k: v for k, v in data.items() if k != "cases"}
    lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    return "{\n" + "\n".join(lines) + ("\n" if lines else "") + ' "cases": [\n' + ",\n".join(cases) + "\n]}\n"


if __name__ == "__main__":
    main()
